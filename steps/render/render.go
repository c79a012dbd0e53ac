// Package render is the render step kind: the campaign's PDF report from the evidence its
// upstream steps name — atlas, TPM and cost, DCGM, roofline, champion, spec decode — and the
// gate verdicts of every step it reads from, with every page present and a one-line note where
// its data is missing. A fail gate never stops it: the report shows the failing points.
package render

import (
	"context"
	"fmt"
	"strings"

	"github.com/perfdag/perfdag/engine/plural"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/report"
)

// Kind is the render step kind.
var Kind = engine.Kind{
	Name:          "render",
	Scope:         engine.ScopeCampaign,
	Version:       "2",
	Tolerant:      true,
	ReadsVerdicts: true,
	Doc:           "the PDF report: scatter, heatmap, AA, TPM, DCGM, roofline, champion and spec pages",
	Result:        Result{},
	Inputs: func(t *engine.Task) any {
		c := t.Campaign
		return map[string]any{"campaign": c.Campaign, "kind": c.Kind, "description": c.Description, "report": c.Report,
			"source": c.Source, "settle": c.Settle, "cells": c.Cells, "endpoints": c.Endpoints}
	},
	Run: run,
}

// TrendFunc reads a scheduled run's trend (its campaign's last runs, from the scheduler's
// state outside the run's directory); nil when the run is not judged yet.
type TrendFunc func(ctx context.Context, dir string, c *schema.Campaign) *report.Trend

type trendKey struct{}

// WithTrend has the render steps run under ctx draw a scheduled run's trend page from f: the
// caller re-rendering a judged run (perfdag report DIR, the scheduler once the verdict is
// final) knows where its history is; a campaign's own run does not.
func WithTrend(ctx context.Context, f TrendFunc) context.Context {
	return context.WithValue(ctx, trendKey{}, f)
}

// Result counts the PDF's pages and lists the sections without data, and passes the evidence on (strict-publish reads it).
type Result struct {
	Pages        int                  `json:"pages"` // pages of the PDF as written
	PagesMissing []string             `json:"pages_missing"`
	Rows         int                  `json:"rows"`
	Files        campaigndir.Evidence `json:"files"`
}

// Evidence offers the report and what it was built from downstream.
func (r *Result) Evidence() campaigndir.Evidence { return r.Files }

func run(ctx context.Context, t *engine.Task) (engine.Result, error) {
	var ups []any
	for _, u := range t.Upstream {
		ups = append(ups, u.Result)
	}
	ev := campaigndir.Collect(ups)
	in, err := Input(ctx, t.Files, ev, t.Campaign, t.Verdicts)
	if err != nil {
		return engine.Result{}, fmt.Errorf("load the campaign's results: %w", err)
	}
	if f, ok := ctx.Value(trendKey{}).(TrendFunc); ok && t.Campaign != nil && t.Campaign.Schedule != nil {
		in.Trend = f(ctx, t.Dir, t.Campaign)
	}
	rel := campaigndir.Report()
	pages, err := report.RenderPages(ctx, in, campaigndir.Abs(t.Dir, rel))
	if err != nil {
		return engine.Result{}, err
	}
	ev.Report = rel
	res := &Result{Pages: pages, Rows: len(in.Atlas), Files: ev}
	for _, p := range report.Contents(in) {
		if !p.HasData && p.Listed() {
			res.PagesMissing = append(res.PagesMissing, p.Title)
		}
	}
	sum := fmt.Sprintf("%s: %s", rel, plural.N(res.Pages, "page"))
	if len(res.PagesMissing) > 0 {
		sum += " (no data, one line each in the contents: " + strings.Join(res.PagesMissing, ", ") + ")"
	}
	return engine.Result{Value: res, Outputs: []string{rel}, Summary: sum}, nil
}
