// Package scrapespec is the scrape-spec step kind. It brackets run-shape: its first half scrapes
// the server's /metrics just before a point, its second half just after, and together with the
// readings run-shape sampled during the window it computes speculative-decoding acceptance
// (length = 1 + accepted/drafts, rate = accepted/draft tokens; null without drafts) and the
// server-metric deltas baselines read (prefix-cache hit rate, KV-cache and running peaks).
package scrapespec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/engine/checkpoint"
	"github.com/perfdag/perfdag/steps/measure/endpoint"
	"github.com/perfdag/perfdag/steps/measure/session"
	"github.com/perfdag/perfdag/steps/run-shape"
	"github.com/perfdag/perfdag/steps/telemetry/promscrape"
)

// Kind is the scrape-spec step kind.
var Kind = engine.Kind{
	Name:          "scrape-spec",
	Scope:         engine.ScopePoint,
	Version:       "1",
	HoldsEndpoint: true,
	Doc:           "scrape /metrics before and after a point: spec-decode acceptance, cache deltas",
	Result:        Result{},
	Inputs: func(t *engine.Task) any {
		return map[string]any{"url": t.Endpoint.URL, "metrics_url": t.Endpoint.MetricsURL, "phase": t.Phase, "concurrency": t.Concurrency}
	},
	Run: run,
}

// Result is what gates on scrape-spec read (null where the server exports nothing).
type Result struct {
	Available          bool      `json:"available"` // the server exports /metrics
	ScrapedAt          time.Time `json:"scraped_at"`
	Source             string    `json:"source"` // vllm, sglang, none
	AcceptanceLength   *float64  `json:"acceptance_length"`
	SpecAcceptRate     *float64  `json:"spec_accept_rate"`
	PrefixCacheHitRate *float64  `json:"prefix_cache_hit_rate"`
	KVCacheUsagePeak   *float64  `json:"kv_cache_usage_peak"`
	RunningPeak        *float64  `json:"num_requests_running_peak"`
}

func dir(cell string) string { return filepath.Join(session.CellDir(cell), "spec_metrics") }

func raw(cell string, conc int, phase string) string {
	return filepath.Join(dir(cell), "c"+strconv.Itoa(conc)+"."+phase+".prom")
}

func run(ctx context.Context, t *engine.Task) (engine.Result, error) {
	res, err := endpoint.Resolve(t)
	if err != nil {
		return engine.Result{}, err
	}
	if res.MetricsURL == "" {
		return engine.Result{Value: &Result{Source: "none"}, Summary: "endpoint exports no /metrics"}, nil
	}
	f := &promscrape.Fetcher{}
	scrape, err := f.Fetch(ctx, res.MetricsURL)
	if err != nil {
		return engine.Result{}, fmt.Errorf("scrape %s: %w", promscrape.Redact(res.MetricsURL), err)
	}
	cell, conc := t.Cell.ID, t.Concurrency
	if t.Phase == "before" {
		rel := raw(cell, conc, "before")
		if err := write(t.Dir, rel, scrape.Raw); err != nil {
			return engine.Result{}, err
		}
		return engine.Result{Value: &Result{Available: true, ScrapedAt: scrape.At}, Outputs: []string{rel}, Summary: "scraped before c" + strconv.Itoa(conc)}, nil
	}
	afterRel := raw(cell, conc, "after")
	if err := write(t.Dir, afterRel, scrape.Raw); err != nil {
		return engine.Result{}, err
	}
	beforeRel := raw(cell, conc, "before")
	b, err := os.ReadFile(filepath.Join(t.Dir, beforeRel))
	if err != nil {
		return engine.Result{}, fmt.Errorf("read the before-scrape: %w", err)
	}
	before, err := promscrape.Parse(b, beforeTime(t))
	if err != nil {
		return engine.Result{}, fmt.Errorf("parse %s: %w", beforeRel, err)
	}
	readings, err := samples(t.Dir, runshape.SamplesFile(cell, conc))
	if err != nil {
		return engine.Result{}, err
	}
	w := promscrape.Window(before, scrape, readings...)
	w.Schema, w.Cell, w.Concurrency = promscrape.SpecWindowSchema, cell, conc
	w.BeforeFile, w.AfterFile = filepath.Base(beforeRel), filepath.Base(afterRel)
	rel, err := session.WriteJSON(t.Dir, filepath.Join(dir(cell), "c"+strconv.Itoa(conc)+".json"), w)
	if err != nil {
		return engine.Result{}, err
	}
	out := &Result{Available: true, ScrapedAt: scrape.At, Source: w.Source, AcceptanceLength: w.AcceptanceLength, SpecAcceptRate: w.SpecAcceptRate,
		PrefixCacheHitRate: w.PrefixCacheHitRate, KVCacheUsagePeak: w.KVCacheUsagePeak, RunningPeak: w.RunningRequestsPeak}
	return engine.Result{Value: out, Outputs: []string{afterRel, rel}, Summary: summary(out)}, nil
}

// beforeTime is when the first half scraped, from its result (the file keeps only the text).
func beforeTime(t *engine.Task) time.Time {
	for _, u := range t.Upstream {
		if r, ok := u.Result.(*Result); ok && u.Step == t.Step && !r.ScrapedAt.IsZero() {
			return r.ScrapedAt
		}
	}
	return time.Time{}
}

func summary(r *Result) string {
	if r.AcceptanceLength == nil {
		return "no speculative decoding in the window"
	}
	return fmt.Sprintf("acceptance length %.2f, accept rate %.2f", *r.AcceptanceLength, deref(r.SpecAcceptRate))
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

func write(campaignDir, rel string, data []byte) error {
	path := filepath.Join(campaignDir, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return checkpoint.WriteFile(path, data)
}

// samples reads what run-shape sampled during the window (absent when it sampled nothing).
func samples(campaignDir, rel string) ([]promscrape.Reading, error) {
	b, err := os.ReadFile(filepath.Join(campaignDir, rel))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []promscrape.Reading
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("%s: %w", rel, err)
	}
	return out, nil
}
