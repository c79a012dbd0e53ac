// Package championselect is the champion-select step kind: it streams the campaign's
// atlas.jsonl through steps/analysis/champion, which ranks the baseline and the top-X arms under a focus
// metric and a TPOT SLO, and writes champion.json with the production recommendation.
package championselect

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/analysis/champion"
)

// Kind is the champion-select step kind.
var Kind = engine.Kind{
	Name:    "champion-select",
	Scope:   engine.ScopeCampaign,
	Version: "1",
	Doc:     "rank the baseline and top-X arms under a focus metric and TPOT SLO (by goodput when the arms' cells declare one per-request slo); write champion.json with the recommendation",
	Params:  func() any { return &Params{} },
	Result:  Result{},
	Inputs:  inputs,
	Check:   check,
	Run:     run,
	// A champion is a decision to act on: never taken while a fail gate stands.
	ActsOnPass:    func(*engine.Task) bool { return true },
	ReadsVerdicts: true,
}

// Params are champion-select's `with:`; zero values take steps/analysis/champion's defaults.
type Params struct {
	FocusMetric string  `yaml:"focus_metric,omitempty" json:"focus_metric,omitempty" doc:"atlas metric to maximise (default output_tok_s_per_gpu; goodput_req_s_per_gpu when every arm's cells declare the same per-request slo)"`
	TPOTSLOMs   float64 `yaml:"tpot_slo_ms,omitempty" json:"tpot_slo_ms,omitempty" range:"0,60000" doc:"a point counts only when its TPOT (ITL avg) is at or under this, in ms (default 50); not applied when ranking by goodput, which counts only requests meeting the cells' slo"`
	TopX        int     `yaml:"top_x,omitempty" json:"top_x,omitempty" range:"0,100" doc:"variant arms reported beside the baseline (default 3)"`
}

// Result is what gates on champion-select read, e.g. `champion != "" and delta_pct >= 0`.
type Result struct {
	Champion    string  `json:"champion"`     // winning arm; empty when no arm meets the SLO
	Baseline    string  `json:"baseline"`     // the arm marked baseline; empty when none is
	Delivery    string  `json:"delivery"`     // the delivery the recommendation is evidence for
	FocusMetric string  `json:"focus_metric"` // the metric arms were ranked by
	FocusValue  float64 `json:"focus_value"`  // the champion's best focus value under the SLO (0 without a champion)
	DeltaPct    float64 `json:"delta_pct"`    // champion vs baseline, % (0 when vs_baseline is false)
	VsBaseline  bool    `json:"vs_baseline"`  // delta_pct was measured against a baseline point
	Rigor       string  `json:"rigor"`        // the champion's sol_rigor, L1..L4
	Arms        int     `json:"arms"`         // arms considered
	Warnings    int     `json:"warnings"`
	File        string  `json:"file"` // the decision's file
	// Separated says whether the top two arms differ beyond their 95 % intervals: yes, no, or
	// unknown (an arm without an interval, or fewer than two ranked arms), so a rule can gate on it.
	Separated string `json:"separated"`
}

// cellTags is what champion-select reads of a cell beyond the atlas: its arm tagging.
type cellTags struct {
	ID            string `json:"id"`
	Arm           string `json:"arm,omitempty"`
	Engine        string `json:"engine,omitempty"`
	EngineVersion string `json:"engine_version,omitempty"`
	Delivery      string `json:"delivery,omitempty"`
	Baseline      bool   `json:"baseline,omitempty"`
	// SLO decides whether arms are ranked by goodput (omitted without one: the fingerprints of
	// campaigns without slo stay as they were).
	SLO *schema.SLO `json:"slo,omitempty"`
}

type kindInputs struct {
	Campaign string     `json:"campaign"`
	Cells    []cellTags `json:"cells"`
}

func inputs(t *engine.Task) any {
	in := kindInputs{Campaign: t.Campaign.Campaign}
	for _, c := range t.Campaign.Cells {
		in.Cells = append(in.Cells, cellTags{ID: c.ID, Arm: c.Arm, Engine: c.Engine, EngineVersion: c.EngineVersion, Delivery: c.Delivery, Baseline: c.Baseline, SLO: c.SLO})
	}
	return in
}

func check(c *schema.Campaign, step *schema.PipelineStep, params any) []error {
	p, _ := params.(*Params)
	if p == nil {
		p = &Params{}
	}
	self := -1
	for i, s := range c.Pipeline {
		if s.ID == step.ID {
			self = i
		}
	}
	with := "pipeline"
	if self >= 0 {
		with = fmt.Sprintf("pipeline[%d].with", self)
	}
	var errs []error
	add := func(path, hint, format string, args ...any) {
		errs = append(errs, &engine.FieldError{Path: path, Err: fmt.Errorf(format, args...), Hint: hint})
	}
	if p.FocusMetric != "" && !slices.Contains(champion.FocusMetrics(), p.FocusMetric) {
		add(with+".focus_metric", "one of "+strings.Join(champion.FocusMetrics(), ", "), "step %s: focus_metric %q is not a metric champion-select ranks by", step.ID, p.FocusMetric)
	}
	if champion.Goodput(p.FocusMetric) {
		if slo, note := champion.ArmsSLO(c.Cells); slo == nil {
			add(with+".focus_metric", "give every arm's cells the same slo: {ttft_ms: ..., tpot_ms: ...}",
				"step %s: focus_metric %s counts requests meeting the cells' per-request slo, but %s", step.ID, p.FocusMetric, cmp.Or(note, "no arm's cell declares one"))
		}
	}
	if self >= 0 && !needsKind(c, self, "aggregate") {
		add(fmt.Sprintf("pipeline[%d].needs", self), "add the aggregate step's id to needs", "step %s reads atlas.jsonl, but does not need an aggregate step", step.ID)
	}
	arms, baseArm, baseCell := 0, "", -1
	seen := map[string]bool{}
	for i, cell := range c.Cells {
		if cell.Arm != "" && !seen[cell.Arm] {
			seen[cell.Arm] = true
			arms++
		}
		if !cell.Baseline {
			continue
		}
		switch {
		case cell.Arm == "":
			add(fmt.Sprintf("cells[%d].baseline", i), "set arm: on this cell, or drop baseline: true", "cell %s is marked baseline but has no arm", cell.ID)
		case baseArm == "":
			baseArm, baseCell = cell.Arm, i
		case cell.Arm != baseArm:
			add(fmt.Sprintf("cells[%d].baseline", i), fmt.Sprintf("cells[%d] (arm %s) is already the baseline: mark exactly one arm", baseCell, baseArm),
				"cell %s marks arm %s baseline, but arm %s is the baseline already", cell.ID, cell.Arm, baseArm)
		}
	}
	if arms == 0 {
		add("cells", "tag cells with arm: (and engine:), and baseline: true on the cells of one arm", "step %s ranks arms, but no cell has an arm", step.ID)
	}
	return errs
}

// needsKind reports whether step i reaches a step of the given kind through needs.
func needsKind(c *schema.Campaign, i int, kind string) bool {
	index := map[string]int{}
	for j, s := range c.Pipeline {
		index[s.ID] = j
	}
	seen := map[int]bool{}
	var walk func(j int) bool
	walk = func(j int) bool {
		for _, n := range c.Pipeline[j].Needs {
			k, ok := index[n]
			if !ok || seen[k] {
				continue
			}
			seen[k] = true
			if c.Pipeline[k].Kind == kind || walk(k) {
				return true
			}
		}
		return false
	}
	return walk(i)
}

func run(ctx context.Context, t *engine.Task) (engine.Result, error) {
	p, _ := t.Params.(*Params)
	if p == nil {
		p = &Params{}
	}
	ev := campaigndir.Collect(upstreamResults(t))
	if ev.Atlas == "" {
		return engine.Result{}, fmt.Errorf("step %s: no atlas among its inputs: champion-select reads the atlas an aggregate step writes (needs: [aggregate])", t.Step)
	}
	slo, note := champion.ArmsSLO(t.Campaign.Cells)
	ch, err := champion.SelectAtlas(ctx, t.Files, ev.Atlas, t.Campaign.Campaign, champion.Options{FocusMetric: p.FocusMetric, TPOTSLOMs: p.TPOTSLOMs, TopX: p.TopX, SLO: slo})
	if err != nil {
		return engine.Result{}, fmt.Errorf("step %s: %w", t.Step, err)
	}
	if note != "" {
		ch.Warnings = append(ch.Warnings, note)
	}
	rel, err := champion.Write(t.Dir, ch)
	if err != nil {
		return engine.Result{}, fmt.Errorf("step %s: %w", t.Step, err)
	}
	res := &Result{Champion: ch.Champion, Baseline: ch.Baseline, Delivery: ch.Delivery, FocusMetric: ch.FocusMetric,
		Arms: ch.ArmsConsidered, Warnings: len(ch.Warnings), Rigor: schema.RigorL1, Separated: champion.SeparatedWord(ch.Separated)}
	for _, a := range ch.Arms {
		if a.Arm != ch.Champion || ch.Champion == "" {
			continue
		}
		if a.FocusValue != nil {
			res.FocusValue = *a.FocusValue
		}
		if a.DeltaVsBaseline != nil {
			res.DeltaPct, res.VsBaseline = *a.DeltaVsBaseline, true
		}
		res.Rigor = a.SolRigor
	}
	log := t.Log
	if log == nil {
		log = io.Discard
	}
	for _, w := range ch.Warnings {
		fmt.Fprintf(log, "warning: champion-select: %s\n", w)
	}
	res.File = rel
	return engine.Result{Value: res, Outputs: []string{rel}, Summary: ch.Recommendation}, nil
}

// upstreamResults are the results of the step's inputs, for campaigndir.Collect.
func upstreamResults(t *engine.Task) []any {
	out := make([]any, 0, len(t.Upstream))
	for _, u := range t.Upstream {
		out = append(out, u.Result)
	}
	return out
}

// Evidence offers the decision downstream (render, strict-publish).
func (r *Result) Evidence() campaigndir.Evidence { return campaigndir.Evidence{Champion: r.File} }
