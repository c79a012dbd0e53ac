// Package aggregate is the aggregate step kind: it normalizes every cell of a campaign (and the
// cells a roofline-import wrote) into atlas rows, unions them into atlas.jsonl in one streaming
// pass that also feeds the TPM accumulator, writes tpm_summary.{json,csv,md}, and reports the
// coverage line. The formulas live in steps/analysis/atlas and steps/analysis/tpm; this package only wires them.
package aggregate

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/perfdag/perfdag/engine/plural"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/analysis/atlas"
	"github.com/perfdag/perfdag/steps/analysis/tpm"
)

// Kind is the aggregate step kind.
var Kind = engine.Kind{
	Name:     "aggregate",
	Tolerant: true, // a failed point must not cost the rest of the campaign its atlas
	Scope:    engine.ScopeCampaign,
	Version:  "1",
	Doc:      "normalize every cell into atlas.jsonl with its coverage line, and roll it into tpm_summary.{json,csv,md} with cost",
	Result:   Result{},
	Inputs:   inputs,
	Check:    check,
	Run:      run,
	// The atlas carries every point's verdicts, so a tightened gate re-builds it.
	ReadsVerdicts: true,
}

// Result is what gates on aggregate read, e.g. `failed_cells == 0` or `steady_window_undercount == 0`.
type Result struct {
	AtlasCells             int    `json:"atlas_cells"`              // distinct cells in atlas.jsonl
	FullSweeps             int    `json:"full_sweeps"`              // cells whose every point is ok
	PartialSweeps          int    `json:"partial_sweeps"`           // cells with some usable points
	FailedCells            int    `json:"failed_cells"`             // cells with no usable point
	PlotReadyPoints        int    `json:"plot_ready_points"`        // rows with latency and throughput numbers
	Rows                   int    `json:"rows"`                     // all atlas rows
	ImportedCells          int    `json:"imported_cells"`           // cells written by roofline-import steps
	TPMGroups              int    `json:"tpm_groups"`               // groups in tpm_summary.json
	TPMSLAGroups           int    `json:"tpm_sla_groups"`           // of which have an SLA point
	Coverage               string `json:"coverage"`                 // the coverage line, in the seed's words
	DCGMGroundedCells      int    `json:"dcgm_grounded_cells"`      // cells whose plot-ready rows are all DCGM-grounded
	SteadyWindowUndercount int    `json:"steady_window_undercount"` // rows flagged num_prompts < 2 × concurrency
	GateFailedPoints       int    `json:"gate_failed_points"`       // rows carrying a fail verdict
	// Files names the atlas, the TPM summary and what was read to build them.
	Files campaigndir.Evidence `json:"files"`
}

// Evidence offers the atlas and what it was built from downstream (render, champion-select,
// strict-publish).
func (r *Result) Evidence() campaigndir.Evidence { return r.Files }

// kindInputs is what aggregate reads from the campaign file: every cell (identity, workload,
// concurrencies, extra), the TPM and cost blocks, and the campaign's identity.
type kindInputs struct {
	Campaign string        `json:"campaign"`
	Kind     string        `json:"kind"`
	Cells    []schema.Cell `json:"cells"`
	TPM      *schema.TPM   `json:"tpm"`
	Cost     *schema.Cost  `json:"cost"`
}

func inputs(t *engine.Task) any {
	c := t.Campaign
	return kindInputs{Campaign: c.Campaign, Kind: c.Kind, Cells: c.Cells, TPM: c.TPM, Cost: c.Cost}
}

// writers are the step kinds whose files aggregate reads: the points, spec-decode windows and
// DCGM correlations of campaign cells, and the cells a roofline import writes.
var writers = []string{"run-shape", "scrape-spec", "dcgm-correlate", "roofline-import"}

// check refuses an explicit pipeline where aggregate could read a cell's files before (or
// while) a step writes them: every step of a kind in writers must be among the steps aggregate
// needs, directly or through them (a roofline-import directly: aggregate learns its cells from
// its result). Without that edge the atlas could miss data, and a later re-run of the writer
// would not re-run the atlas.
func check(c *schema.Campaign, step *schema.PipelineStep, _ any) []error {
	index := map[string]int{}
	for i, s := range c.Pipeline {
		index[s.ID] = i
	}
	self, ok := index[step.ID]
	if !ok {
		return nil // the default pipeline wires aggregate after every writer
	}
	reached := map[string]bool{}
	var walk func(id string)
	walk = func(id string) {
		i, ok := index[id]
		if !ok || reached[id] {
			return
		}
		reached[id] = true
		for _, n := range c.Pipeline[i].Needs {
			walk(n)
		}
	}
	for _, n := range step.Needs {
		walk(n)
	}
	var errs []error
	for _, s := range c.Pipeline {
		if s.ID == step.ID || !slices.Contains(writers, s.Kind) {
			continue
		}
		// An import's cells are found through its result, which only direct needs deliver.
		if s.Kind == "roofline-import" && reached[s.ID] && !slices.Contains(step.Needs, s.ID) {
			errs = append(errs, &engine.FieldError{
				Path: fmt.Sprintf("pipeline[%d].needs", self),
				Err:  fmt.Errorf("step %s reaches roofline-import step %s only through other steps, so it would not see the cells it imports", step.ID, s.ID),
				Hint: fmt.Sprintf("add %s to needs directly", s.ID),
			})
			continue
		}
		if reached[s.ID] {
			continue
		}
		errs = append(errs, &engine.FieldError{
			Path: fmt.Sprintf("pipeline[%d].needs", self),
			Err:  fmt.Errorf("step %s aggregates the files %s step %s writes, but does not need it", step.ID, s.Kind, s.ID),
			Hint: fmt.Sprintf("add %s to needs, so the atlas waits for it and re-runs when it does", s.ID),
		})
	}
	return errs
}

func run(ctx context.Context, t *engine.Task) (engine.Result, error) {
	c := t.Campaign
	progress := func(string) {}
	if t.Progress != nil {
		progress = t.Progress
	}
	in, err := gather(t)
	if err != nil {
		return engine.Result{}, err
	}
	var outputs []string
	own := map[string]bool{}
	cells := make([]campaigndir.CellFiles, 0, len(c.Cells)+len(in.imported))
	for i, cell := range c.Cells {
		progress(fmt.Sprintf("normalize %s (%d/%d cells)", cell.ID, i+1, len(c.Cells)))
		if err := ctx.Err(); err != nil {
			return engine.Result{}, err
		}
		files, err := normalizeCell(t, cell, in)
		if err != nil {
			return engine.Result{}, fmt.Errorf("normalize cell %s: %w", cell.ID, err)
		}
		own[files.Normalized], own[files.Status] = true, true
		outputs = append(outputs, files.Normalized, files.Status)
		cells = append(cells, files)
	}
	if err := checkImports(in.imported, c.Cells); err != nil {
		return engine.Result{}, err
	}
	cells = append(cells, in.imported...)

	progress("aggregate " + plural.N(len(cells), "cell") + " into the atlas")
	r := campaigndir.Reader{Dir: t.Dir, Digest: func(rel string) (string, bool) {
		if own[rel] {
			return "", true // written just now by this step
		}
		return t.Files.Digest(rel)
	}}
	res, summary, err := Aggregate(ctx, r, c.Campaign, cells, tpm.ConfigFor(c), t.Log)
	if err != nil {
		return engine.Result{}, err
	}
	res.ImportedCells = len(in.imported)
	names, err := tpm.Write(t.Dir, summary)
	if err != nil {
		return engine.Result{}, fmt.Errorf("write TPM summary: %w", err)
	}
	res.Files = campaigndir.Evidence{Atlas: campaigndir.Atlas(), TPM: campaigndir.TPMJSON(), Spec: in.spec, DCGM: in.dcgm, Cells: in.imported, Sweeps: in.sweeps}
	outputs = append(outputs, campaigndir.Atlas())
	outputs = append(outputs, names...)
	return engine.Result{Value: &res, Outputs: outputs, Summary: res.Coverage}, nil
}

// Aggregate unions the normalized.json of the given cells into dir/atlas.jsonl in one
// streaming pass that also folds every row into a TPM summary and counts DCGM grounding and
// undercounted points; rows flagged steady_window_undercount are listed on log (may be nil).
// It is the kind's work after normalization, for a verb that re-aggregates a campaign
// directory without a run. The caller writes the summary (tpm.Write).
func Aggregate(ctx context.Context, r campaigndir.Reader, campaign string, cells []campaigndir.CellFiles, cfg tpm.Config, log io.Writer) (Result, schema.TPMSummary, error) {
	acc := tpm.NewAccumulator(campaign, cfg)
	var tl tally
	cov, err := atlas.AggregateDir(ctx, r, campaigndir.Atlas(), cells, acc.Add, tl.observe)
	if err != nil {
		return Result{}, schema.TPMSummary{}, err
	}
	tl.finish()
	summary := acc.Summary()
	res := Result{
		AtlasCells: cov.Cells, FullSweeps: cov.Full, PartialSweeps: cov.Partial, FailedCells: cov.Failed,
		PlotReadyPoints: cov.PlotReady, Rows: cov.Rows, TPMGroups: len(summary.Groups),
		Coverage: cov.String(), DCGMGroundedCells: tl.grounded, SteadyWindowUndercount: len(tl.undercount),
		GateFailedPoints: tl.gateFailed,
	}
	for _, g := range summary.Groups {
		if g.SLA != nil {
			res.TPMSLAGroups++
		}
	}
	if log != nil && len(tl.undercount) > 0 {
		fmt.Fprintf(log, "warning: %s num_prompts < 2 × concurrency (steady_window_undercount): their throughput is undercounted by a ramp/drain-dominated window: %s\n",
			plural.Of(len(tl.undercount), "point has", "points have"), strings.Join(firstN(tl.undercount, 12), ", "))
	}
	return res, summary, nil
}

// tally counts, per cell as rows stream by in atlas order, DCGM grounding and undercounts.
type tally struct {
	cell       string
	started    bool
	anyGround  bool
	allGround  bool
	grounded   int
	undercount []string
	gateFailed int
}

func (t *tally) observe(r *schema.AtlasRow) error {
	if !t.started || r.CellID != t.cell {
		t.finish()
		t.cell, t.started, t.anyGround, t.allGround = r.CellID, true, false, true
	}
	if r.DCGMGrounded {
		t.anyGround = true
	} else if r.PlotReady {
		t.allGround = false
	}
	if r.GateFailed() {
		t.gateFailed++
	}
	if slices.Contains(r.Flags, schema.FlagSteadyWindowUndercount) {
		t.undercount = append(t.undercount, r.CellID+"/"+r.PointLoad().Key())
	}
	return nil
}

// finish closes the current cell: grounded when at least one row is, and every plot-ready row is.
func (t *tally) finish() {
	if t.started && t.anyGround && t.allGround {
		t.grounded++
	}
	t.started = false
}

func firstN(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(s[:n:n], fmt.Sprintf("and %d more", len(s)-n))
}
