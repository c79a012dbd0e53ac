// Package dcgmcorrelate is the dcgm-correlate step kind: for one cell it takes every measured
// point's window (point.json started_at/ended_at, else the records' first start and last end)
// and output tok/s, reads the DCGM window means from one of steps/telemetry/dcgm's three sources — a
// frozen dcgm_frozen_v1 YAML, a Prometheus server, or the exporter samples run-shape took
// during the run (cells/<id>/dcgm_samples/c<N>.json, format in samples.go) — and writes
// cells/<id>/dcgm_correlation.json, which aggregate joins onto the cell's atlas rows.
package dcgmcorrelate

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/measure/endpoint"
)

// Sources a step can read DCGM from.
const (
	SourceFrozen     = "frozen"
	SourcePrometheus = "prometheus"
	SourceExporter   = "exporter"
)

// CellPlaceholder in with.file is replaced by the cell id, so each cell reads its own frozen file.
const CellPlaceholder = "{cell}"

// Kind is the dcgm-correlate step kind.
var Kind = engine.Kind{
	Name:     "dcgm-correlate",
	Tolerant: true, // a failed point must not cost the rest of the campaign its atlas
	Scope:    engine.ScopeCell,
	Version:  "1",
	Doc:      "DCGM window means per point (SM, tensor, DRAM, GR engine, NVLink, PCIe, power) from a frozen YAML, Prometheus or exporter samples; sets dcgm_grounded and tokens_per_watt",
	Params:   func() any { return &Params{} },
	Result:   Result{},
	Inputs:   inputs,
	Check:    check,
	Run:      run,
	// the Prometheus token's variable reaches an exported workflow's pods from its Secret
	SecretEnv: func(p any) map[string]string {
		q, _ := p.(*Params)
		if q == nil {
			q = &Params{}
		}
		return map[string]string{"bearer_token_env": q.BearerTokenEnv}
	},
}

// Params are dcgm-correlate's `with:`.
type Params struct {
	Source string `yaml:"source,omitempty" json:"source,omitempty" enum:"frozen,prometheus,exporter" doc:"frozen, prometheus or exporter (default: exporter when the endpoint has dcgm_url or is sim://)"`
	File   string `yaml:"file,omitempty" json:"file,omitempty" doc:"dcgm_frozen_v1 YAML relative to the campaign file, inside its directory; {cell} is replaced by the cell id"`
	// AllowOutsideCampaign opts into a frozen file outside the campaign file's directory tree.
	AllowOutsideCampaign bool   `yaml:"allow_outside_campaign,omitempty" json:"allow_outside_campaign,omitempty" doc:"read file: even when it lies outside the campaign file's directory (an absolute path or ../); its text is then never echoed into records or errors"`
	URL                  string `yaml:"url,omitempty" json:"url,omitempty" doc:"Prometheus base URL, e.g. http://prometheus:9090"`
	Matcher              string `yaml:"matcher,omitempty" json:"matcher,omitempty" doc:"extra PromQL label matchers without braces, e.g. pod=~\"vllm-.*\""`
	Host                 string `yaml:"host,omitempty" json:"host,omitempty" doc:"node whose GPUs Prometheus is asked for (Hostname/hostname label)"`
	BearerTokenEnv       string `yaml:"bearer_token_env,omitempty" json:"bearer_token_env,omitempty" doc:"environment variable holding a bearer token for Prometheus; the token is never written anywhere"`
}

// Result is what gates on dcgm-correlate read, e.g. `dcgm_grounded` or `sol_rigor == "L3"`.
type Result struct {
	Source               string  `json:"source"`                  // frozen, prometheus, exporter
	DCGMGrounded         bool    `json:"dcgm_grounded"`           // every point has DRAM activity and NVLink or PCIe bytes
	SolRigor             string  `json:"sol_rigor"`               // L3 when grounded, else L1
	Points               int     `json:"points"`                  // points correlated
	PointsWithData       int     `json:"points_with_data"`        // of which the source had data for
	TokensPerWattMax     float64 `json:"tokens_per_watt_max"`     // best output tok/s ÷ endpoint watts over the points (0: no power)
	PowerWattsPerGPUAvg  float64 `json:"power_watts_per_gpu_avg"` // mean board power per GPU over points with power (0: none)
	DRAMActiveAvg        float64 `json:"dram_active_avg"`         // mean DRAM activity ratio over points with it
	SMActiveAvg          float64 `json:"sm_active_avg"`           // mean SM activity ratio over points with it
	MissingPointFiles    int     `json:"missing_point_files"`     // requested concurrencies without a point.json
	MissingExporterFiles int     `json:"missing_exporter_files"`  // measured points without exporter samples (exporter source)
	Cell                 string  `json:"cell"`
	Correlation          string  `json:"correlation,omitempty"` // the correlation file; "" without a source
}

// DCGMFiles offers the cell's correlation downstream (an empty path without a source).
func (r *Result) DCGMFiles() campaigndir.DCGMFiles {
	return campaigndir.DCGMFiles{Cell: r.Cell, Correlation: r.Correlation}
}

// defaultSource is what a step without with.source reads for a cell on endpoint ep.
func defaultSource(p *Params, ep *schema.Endpoint) string {
	switch {
	case p.Source != "":
		return p.Source
	case p.File != "":
		return SourceFrozen
	case p.URL != "":
		return SourcePrometheus
	case ep != nil && (ep.DCGMURL != "" || endpoint.IsSim(ep.URL)):
		return SourceExporter
	}
	return ""
}

// frozenPath is the frozen file a cell reads, anchored at the campaign file's directory.
func frozenPath(baseDir, file, cellID string) string {
	f := strings.ReplaceAll(file, CellPlaceholder, cellID)
	if filepath.IsAbs(f) {
		return f
	}
	return filepath.Join(baseDir, f)
}

// kindInputs is what a correlation depends on beyond params and upstream outputs: the cell's
// points and GPU count, the endpoint's telemetry addresses, and the frozen file's content.
type kindInputs struct {
	Cell          string    `json:"cell"`
	Concurrencies []int     `json:"concurrencies"`
	Rates         []float64 `json:"rates,omitempty"`
	MaxInFlight   int       `json:"max_in_flight,omitempty"`
	GPUs          int       `json:"gpus"`
	EndpointURL   string    `json:"endpoint_url,omitempty"`
	DCGMURL       string    `json:"dcgm_url,omitempty"`
	Frozen        string    `json:"frozen_digest,omitempty"`
}

func inputs(t *engine.Task) any {
	p, _ := t.Params.(*Params)
	if p == nil {
		p = &Params{}
	}
	in := kindInputs{}
	if t.Cell != nil {
		in.Cell, in.Concurrencies, in.GPUs = t.Cell.ID, t.Cell.Concurrencies, t.Cell.GPUs
		in.Rates, in.MaxInFlight = t.Cell.Rates, t.Cell.MaxInFlight
	}
	if t.Endpoint != nil {
		in.EndpointURL, in.DCGMURL = t.Endpoint.URL, t.Endpoint.DCGMURL
	}
	if defaultSource(p, t.Endpoint) == SourceFrozen && t.Cell != nil {
		in.Frozen = digestFrozen(t.BaseDir, p, t.Cell.ID)
	}
	return in
}

func check(c *schema.Campaign, step *schema.PipelineStep, params any) []error {
	p, _ := params.(*Params)
	if p == nil {
		p = &Params{}
	}
	with, explicit := "pipeline", false
	for i, s := range c.Pipeline {
		if s.ID == step.ID {
			with, explicit = fmt.Sprintf("pipeline[%d].with", i), true
		}
	}
	var errs []error
	add := func(field, hint, format string, args ...any) {
		path := with
		if field != "" {
			path += "." + field
		}
		errs = append(errs, &engine.FieldError{Path: path, Err: fmt.Errorf(format, args...), Hint: hint})
	}
	switch p.Source {
	case "", SourceFrozen, SourcePrometheus, SourceExporter:
	default:
		add("source", "frozen (with file:), prometheus (with url:) or exporter (the endpoint's dcgm_url)", "step %s: source %q is not one of frozen, prometheus, exporter", step.ID, p.Source)
		return errs
	}
	src := defaultSource(p, nil) // explicit, or implied by file: / url:
	switch src {
	case "", SourceExporter:
		// The default pipeline adds this step when any endpoint exports DCGM; cells on the
		// others are recorded ungrounded at run time rather than rejected here.
		for i, cell := range c.Cells {
			if !explicit && p.Source == "" {
				break
			}
			if ep, ok := c.Endpoints[cell.Endpoint]; !ok || (ep.DCGMURL == "" && !endpoint.IsSim(ep.URL)) {
				add("source", fmt.Sprintf("set endpoints.%s.dcgm_url, or write source: frozen with file:, or source: prometheus with url:", cell.Endpoint),
					"step %s: cells[%d] (%s) has no DCGM source: exporter samples need a dcgm_url (or a sim:// endpoint) on endpoint %q", step.ID, i, cell.ID, cell.Endpoint)
				return errs
			}
		}
		src = SourceExporter
	case SourceFrozen:
		if p.File == "" {
			add("file", "e.g. file: dcgm/{cell}.yaml (a dcgm_frozen_v1 file per cell)", "step %s: source frozen needs file:", step.ID)
		} else if !inside(frozenFile(p.File, "cell")) && !p.AllowOutsideCampaign {
			add("file", "copy the capture beside the campaign file (e.g. dcgm/{cell}.yaml), or opt in with allow_outside_campaign: true",
				"step %s: file %s lies outside the campaign file's directory", step.ID, p.File)
		} else if len(c.Cells) > 1 && step.When == "" && !strings.Contains(p.File, CellPlaceholder) {
			add("file", "write file: dcgm/{cell}.yaml so each cell reads its own capture, or restrict the step with when:",
				"step %s: all %d cells would read the same frozen file %s, but a dcgm_frozen_v1 file describes one cell's points", step.ID, len(c.Cells), p.File)
		}
	case SourcePrometheus:
		if u, err := url.Parse(p.URL); p.URL == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			add("url", "the Prometheus server's base URL, e.g. http://prometheus:9090", "step %s: source prometheus needs url: an http(s) base URL, got %q", step.ID, p.URL)
		}
	}
	if p.File != "" && src != SourceFrozen {
		add("file", "drop file:, or write source: frozen", "step %s: file is read only by source frozen, not %s", step.ID, src)
	}
	if (p.URL != "" || p.Matcher != "" || p.Host != "" || p.BearerTokenEnv != "") && src != SourcePrometheus {
		add("source", "url, matcher, host and bearer_token_env belong to source: prometheus", "step %s: Prometheus settings given, but the source is %s", step.ID, src)
	}
	return errs
}
