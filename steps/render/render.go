// Package render is the render step kind: the campaign's PDF report (report.pdf) from what the
// campaign directory holds — atlas, TPM and cost, DCGM, roofline, champion, spec decode — with
// every page present and a one-line note where its data is missing.
package render

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/steps/report"
)

// File is the report's name in the campaign directory.
const File = "report.pdf"

// Kind is the render step kind.
var Kind = engine.Kind{
	Name:     "render",
	Scope:    engine.ScopeCampaign,
	Version:  "1",
	Tolerant: true,
	Doc:      "the PDF report: scatter, heatmap, AA, TPM, DCGM, roofline, champion and spec pages",
	Result:   Result{},
	Inputs: func(t *engine.Task) any {
		c := t.Campaign
		return map[string]any{"campaign": c.Campaign, "kind": c.Kind, "description": c.Description, "report": c.Report,
			"source": c.Source, "settle": c.Settle, "cells": c.Cells, "endpoints": c.Endpoints}
	},
	Run: run,
}

// Result lists which pages had data.
type Result struct {
	Pages        int      `json:"pages"`
	PagesMissing []string `json:"pages_missing"`
	Rows         int      `json:"rows"`
}

func run(ctx context.Context, t *engine.Task) (engine.Result, error) {
	in, err := report.Load(t.Dir)
	if err != nil {
		return engine.Result{}, fmt.Errorf("load the campaign's results: %w", err)
	}
	in.Campaign = t.Campaign // defaults merged, ${VAR} interpolated
	if err := report.Render(ctx, in, filepath.Join(t.Dir, File)); err != nil {
		return engine.Result{}, err
	}
	res := &Result{Rows: len(in.Atlas)}
	for _, p := range report.Contents(in) {
		res.Pages++
		if !p.HasData {
			res.PagesMissing = append(res.PagesMissing, p.Title)
		}
	}
	sum := fmt.Sprintf("%s: %d pages", File, res.Pages)
	if len(res.PagesMissing) > 0 {
		sum += " (no data: " + strings.Join(res.PagesMissing, ", ") + ")"
	}
	return engine.Result{Value: res, Outputs: []string{File}, Summary: sum}, nil
}
