package dcgm

import (
	"github.com/perfdag/perfdag/schema"

	"fmt"

	"github.com/perfdag/perfdag/steps/telemetry/promscrape"
)

// SamplesSchema names the exporter-samples record run-shape keeps for each point.
const SamplesSchema = "dcgm_samples_v1"

// Samples is the DCGM exporter samples a Sampler took during one point's run window, kept so
// the cell's dcgm-correlate step (and a resume) reads them back. Blanks are already dropped;
// the exporter URL is stored redacted (no user info, no query).
//
//	{"schema": "dcgm_samples_v1", "cell": "aa-1k", "concurrency": 8,
//	 "exporter": "http://node-7:9400/metrics", "scrapes": 31, "failures": 0,
//	 "samples": [{"t": "2026-05-01T10:00:01.5Z", "gpu": "0", "uuid": "GPU-…",
//	              "hostname": "node-7", "model_name": "NVIDIA B200",
//	              "sm_active": 0.81, "dram_active": 0.64, "nvlink_tx_bytes_s": 2.1e10, …}]}
type Samples struct {
	Schema      string      `json:"schema"`
	Cell        string      `json:"cell"`
	Load        schema.Load `json:"load,omitzero"` // the point (absent on samples written before points were keyed by load)
	Concurrency int         `json:"concurrency"`   // its concurrency or in-flight cap
	Exporter    string      `json:"exporter,omitempty"`
	Scrapes     int         `json:"scrapes"`  // successful exporter fetches in the window
	Failures    int         `json:"failures"` // failed fetches (they cost samples, never the run)
	Samples     []GPUSample `json:"samples"`
}

// NewSamples builds a point's samples record from what a Sampler returned.
func NewSamples(cell string, l schema.Load, exporterURL string, samples []GPUSample, stats promscrape.PollStats) Samples {
	doc := Samples{Schema: SamplesSchema, Cell: cell, Load: l, Concurrency: l.InFlight(), Exporter: promscrape.Redact(exporterURL),
		Scrapes: stats.Scrapes, Failures: stats.Failures, Samples: samples}
	if doc.Samples == nil {
		doc.Samples = []GPUSample{}
	}
	return doc
}

// Check refuses a samples record of another schema, cell or point, or one with an untimed
// sample, naming the field. A record written before points were keyed by load names its point
// by concurrency (a rate point's cap) alone.
func (s Samples) Check(name, cell string, l schema.Load) error {
	switch {
	case s.Schema != SamplesSchema:
		return fmt.Errorf("%s: field schema: %q, want %q", name, s.Schema, SamplesSchema)
	case s.Cell != cell:
		return fmt.Errorf("%s: field cell: %q, want %q", name, s.Cell, cell)
	case !s.Load.IsZero() && s.Load != l:
		return fmt.Errorf("%s: field load: %q, want %q", name, s.Load.Key(), l.Key())
	case s.Concurrency != l.InFlight():
		return fmt.Errorf("%s: field concurrency: %d, want %d", name, s.Concurrency, l.InFlight())
	}
	for i, x := range s.Samples {
		if x.At.IsZero() {
			return fmt.Errorf("%s: field samples[%d].t: missing", name, i)
		}
	}
	return nil
}
