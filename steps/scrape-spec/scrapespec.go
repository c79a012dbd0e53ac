// Package scrapespec is the scrape-spec step kind. It brackets run-shape: its first half scrapes
// the server's /metrics just before a point, its second half just after, and together with the
// readings run-shape sampled during the window it computes speculative-decoding acceptance
// (length = 1 + accepted/drafts, rate = accepted/draft tokens; null without drafts) and the
// server-metric deltas baselines read (prefix-cache hit rate, KV-cache and running peaks).
package scrapespec

import (
	"context"
	"fmt"
	"path"
	"time"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/measure/endpoint"
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
		return map[string]any{"url": t.Endpoint.URL, "metrics_url": t.Endpoint.MetricsURL, "phase": t.Phase, "concurrency": t.Load.InFlight()}
	},
	Run: run,
}

// Result is what gates on scrape-spec read (null where the server exports nothing).
type Result struct {
	Available          bool        `json:"available"` // the server exports /metrics
	ScrapedAt          time.Time   `json:"scraped_at"`
	Source             string      `json:"source"` // vllm, sglang, none
	AcceptanceLength   *float64    `json:"acceptance_length"`
	SpecAcceptRate     *float64    `json:"spec_accept_rate"`
	PrefixCacheHitRate *float64    `json:"prefix_cache_hit_rate"`
	KVCacheUsagePeak   *float64    `json:"kv_cache_usage_peak"`
	RunningPeak        *float64    `json:"num_requests_running_peak"`
	Scrape             string      `json:"scrape,omitempty"` // the raw /metrics text this half took
	Window             string      `json:"window,omitempty"` // the spec window (second half only)
	Cell               string      `json:"cell,omitempty"`
	Load               schema.Load `json:"load,omitzero"`
	Concurrency        int         `json:"concurrency,omitempty"`
}

// SpecFiles offers the point's metric window downstream (the second half only).
func (r *Result) SpecFiles() (campaigndir.SpecFiles, bool) {
	return campaigndir.SpecFiles{Cell: r.Cell, Load: r.Load, Concurrency: r.Concurrency, Window: r.Window}, r.Window != ""
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
		return engine.Result{}, err // Fetch names the (redacted) URL
	}
	cell, l := t.Cell.ID, t.Load
	if t.Phase == "before" {
		rel := campaigndir.Scrape(cell, l, "before")
		if err := campaigndir.WriteFile(campaigndir.Abs(t.Dir, rel), scrape.Raw); err != nil {
			return engine.Result{}, err
		}
		return engine.Result{Value: &Result{Available: true, ScrapedAt: scrape.At, Scrape: rel},
			Outputs: []string{rel}, Summary: "scraped before " + l.Key()}, nil
	}
	afterRel := campaigndir.Scrape(cell, l, "after")
	if err := campaigndir.WriteFile(campaigndir.Abs(t.Dir, afterRel), scrape.Raw); err != nil {
		return engine.Result{}, err
	}
	first := firstHalf(t)
	if first == nil || first.Scrape == "" {
		return engine.Result{}, fmt.Errorf("the before-scrape of %s is missing: its first half did not run", l.Key())
	}
	b, err := t.Files.Bytes(first.Scrape)
	if err != nil {
		return engine.Result{}, fmt.Errorf("read the before-scrape: %w", err)
	}
	before, err := promscrape.Parse(b, first.ScrapedAt)
	if err != nil {
		return engine.Result{}, fmt.Errorf("parse %s: %w", first.Scrape, err)
	}
	readings, err := samples(t)
	if err != nil {
		return engine.Result{}, err
	}
	w := promscrape.Window(before, scrape, readings...)
	w.Schema, w.Cell, w.Load, w.Concurrency = promscrape.SpecWindowSchema, cell, l, l.InFlight()
	w.BeforeFile, w.AfterFile = path.Base(first.Scrape), path.Base(afterRel)
	rel, err := campaigndir.WriteJSON(t.Dir, campaigndir.SpecWindow(cell, l), w)
	if err != nil {
		return engine.Result{}, err
	}
	out := &Result{Available: true, ScrapedAt: scrape.At, Source: w.Source, AcceptanceLength: w.AcceptanceLength, SpecAcceptRate: w.SpecAcceptRate,
		PrefixCacheHitRate: w.PrefixCacheHitRate, KVCacheUsagePeak: w.KVCacheUsagePeak, RunningPeak: w.RunningRequestsPeak,
		Scrape: afterRel, Window: rel, Cell: cell, Load: l, Concurrency: l.InFlight()}
	return engine.Result{Value: out, Outputs: []string{afterRel, rel}, Summary: summary(out)}, nil
}

// firstHalf is the result of the step's own first half at this point.
func firstHalf(t *engine.Task) *Result {
	for _, u := range t.Upstream {
		if r, ok := u.Result.(*Result); ok && u.Step == t.Step {
			return r
		}
	}
	return nil
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

// samples reads what the bracketed point sampled of /metrics during its window (none when it
// sampled nothing).
func samples(t *engine.Task) ([]promscrape.Reading, error) {
	for _, u := range t.Upstream {
		po, ok := u.Result.(campaigndir.PointOutput)
		if !ok || po.PointFiles().MetricsSamples == "" {
			continue
		}
		var out []promscrape.Reading
		if err := t.Files.JSON(po.PointFiles().MetricsSamples, &out); err != nil {
			return nil, err
		}
		return out, nil
	}
	return nil, nil
}
