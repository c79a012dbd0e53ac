package dcgm

import (
	"bytes"
	"fmt"
	"sort"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/telemetry/promscrape"
)

// GPUSample is one GPU's DCGM values at one instant, as a DCGM exporter showed them; blank
// sentinels are already dropped (nil), never stored as values.
type GPUSample struct {
	At        time.Time `json:"t"`
	GPU       string    `json:"gpu"` // the exporter's gpu label (index)
	UUID      string    `json:"uuid,omitempty"`
	Hostname  string    `json:"hostname,omitempty"`
	ModelName string    `json:"model_name,omitempty"`
	schema.DCGMFields
}

// key identifies the sample's GPU the way gpuKey does for exporter and Prometheus series.
func (g *GPUSample) key() string {
	return gpuKey(func(names ...string) string {
		for _, n := range names {
			switch n {
			case "Hostname":
				if g.Hostname != "" {
					return g.Hostname
				}
			case "UUID":
				if g.UUID != "" {
					return g.UUID
				}
			case "gpu":
				return g.GPU
			}
		}
		return ""
	})
}

// Filter picks one deployment's GPUs out of a node-wide exporter.
type Filter struct {
	Host   string            // node name, matched against the Hostname or hostname label
	GPUs   []string          // gpu indices or UUIDs; empty means every GPU
	Labels map[string]string // further exact label values (pod, namespace, container)
}

func (f Filter) match(label func(names ...string) string) bool {
	if f.Host != "" && label("Hostname", "hostname") != f.Host {
		return false
	}
	for k, v := range f.Labels {
		if label(k) != v {
			return false
		}
	}
	if len(f.GPUs) == 0 {
		return true
	}
	idx, uuid := label("gpu"), label("UUID", "uuid")
	for _, g := range f.GPUs {
		if g == idx || (uuid != "" && g == uuid) {
			return true
		}
	}
	return false
}

// FromScrape reads the per-GPU DCGM values of one exporter scrape, stamped with the scrape's
// time, in a stable GPU order. Both the Hostname and the hostname label are read; for a field
// exported under two names the canonical one wins; blanks (≥ 9.2e18), NaN and Inf are missing.
func FromScrape(s *promscrape.Scrape, f Filter) []GPUSample {
	byKey := map[string]*GPUSample{}
	for _, ef := range exporterFields {
		for _, name := range ef.names {
			fam := s.Families[name]
			if fam == nil {
				continue
			}
			for _, m := range fam.GetMetric() {
				label := func(names ...string) string { return promscrape.Label(m, names...) }
				v, ok := promscrape.Value(m)
				if !ok || !usable(v) || !f.match(label) {
					continue
				}
				k := gpuKey(label)
				g := byKey[k]
				if g == nil {
					g = &GPUSample{At: s.At, GPU: label("gpu"), UUID: label("UUID", "uuid"),
						Hostname: label("Hostname", "hostname"), ModelName: label("modelName")}
					byKey[k] = g
				}
				if p := fieldPtrs(&g.DCGMFields)[ef.slot]; *p == nil {
					*p = &v
				}
			}
		}
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]GPUSample, 0, len(keys))
	for _, k := range keys {
		out = append(out, *byKey[k])
	}
	return out
}

// ExporterText renders GPU values as a DCGM exporter's /metrics page (gauges with the exporter's
// gpu, UUID, device, modelName and Hostname labels), for the simulator and for tests. Values are
// written as given, so a caller can emit a blank sentinel on purpose.
func ExporterText(gpus []GPUSample) ([]byte, error) {
	var buf bytes.Buffer
	gauge := dto.MetricType_GAUGE
	for _, ef := range exporterFields {
		mf := &dto.MetricFamily{Name: str(ef.names[0]), Help: str(ef.help), Type: &gauge}
		for i := range gpus {
			g := &gpus[i]
			p := fieldPtrs(&g.DCGMFields)[ef.slot]
			if *p == nil {
				continue
			}
			v := **p
			mf.Metric = append(mf.Metric, &dto.Metric{Label: exporterLabels(g), Gauge: &dto.Gauge{Value: &v}})
		}
		if len(mf.Metric) == 0 {
			continue
		}
		if _, err := expfmt.MetricFamilyToText(&buf, mf); err != nil {
			return nil, fmt.Errorf("render %s: %w", ef.names[0], err)
		}
	}
	return buf.Bytes(), nil
}

// exporterLabels follows the exporter's per-GPU label template (reference/telemetry.md §2.1).
func exporterLabels(g *GPUSample) []*dto.LabelPair {
	pairs := [][2]string{{"gpu", g.GPU}, {"UUID", g.UUID}, {"device", "nvidia" + g.GPU}, {"modelName", g.ModelName}, {"Hostname", g.Hostname}}
	out := make([]*dto.LabelPair, 0, len(pairs))
	for _, p := range pairs {
		if p[1] == "" {
			continue
		}
		out = append(out, &dto.LabelPair{Name: str(p[0]), Value: str(p[1])})
	}
	return out
}

func str(s string) *string { return &s }
