// Package importkind is the import step kind: one point (a concurrency, or a request rate with
// its cap) of a cell whose numbers
// come from another tool's output (AIPerf artifact directory, vLLM bench serve JSON, SGLang
// bench_serving JSONL) instead of perfdag's load generator. The cell's identity says what the
// file measured; what the file states (model, concurrency, ISL/OSL, token totals) is checked
// against it. The point it writes is a point_v1 like run-shape's, so the atlas, the report,
// the lake and baselines treat it like a measured one; its `import` block says the source.
package importkind

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/perfdag/perfdag/engine/plural"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/measure/benchfile"
	"github.com/perfdag/perfdag/steps/measure/stats"
	"github.com/perfdag/perfdag/steps/measure/workload"
)

// Kind is the import step kind.
var Kind = engine.Kind{
	Name:    "import",
	Scope:   engine.ScopePoint,
	Version: "5", // 2: statistics a file does not state are null in point.json, not 0; 3: and nil to gates; 4: token_basis imported:<source> <counted>, times from the file's own wall-clock; 5: SGLang per-request lists recomputed, values checked
	Doc:     "one point of an imported cell from AIPerf, vLLM bench serve or SGLang bench_serving output",
	Result:  Result{},
	Inputs:  inputs,
	Check:   check,
	Run:     run,
}

// Result is what gates on import read.
type Result struct {
	Cell              string      `json:"cell"`
	Load              schema.Load `json:"load,omitzero"`
	Concurrency       int         `json:"concurrency"`
	Source            string      `json:"source"`
	SourceVersion     string      `json:"source_version"`
	StatsFrom         string      `json:"stats_from"`
	TokenBasis        string      `json:"token_basis"`
	RequestCount      int         `json:"request_count"`
	ErrorCount        int         `json:"error_count"`
	Status            string      `json:"status"`
	TTFTP50Ms         *float64    `json:"ttft_p50_ms"` // nil when the file states no TTFT median: a gate reading it is not evaluated
	RequestThroughput float64     `json:"request_throughput"`
	OutputTokPerS     float64     `json:"output_tok_s"`
	// SLOAttainment and GoodputReqS judge the file's requests against the cell's slo; nil
	// without one, or when the file holds aggregates only (unknown, not zero).
	SLOAttainment *float64 `json:"slo_attainment"`
	GoodputReqS   *float64 `json:"goodput_req_s"`
	// Files names what the point wrote, for aggregate.
	Files campaigndir.PointFiles `json:"files"`
}

// PointFiles offers the point's files downstream.
func (r *Result) PointFiles() campaigndir.PointFiles { return r.Files }

func abs(t *engine.Task, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(t.BaseDir, p)
}

// inputs is the cell's identity, the import block and a digest of the point's file(s): an
// edited file re-runs its own points only. The run's points share each file's digest.
func inputs(t *engine.Task) any {
	c := t.Cell
	var imp any
	if c.Import != nil {
		imp = map[string]any{"format": c.Import.Format, "source_version": c.Import.SourceVersion}
	}
	conc, path := t.Load.InFlight(), c.ImportPath(t.Load)
	in := map[string]any{"import": imp, "path": path, "content": filesOf(t).Digest(abs(t, path)),
		"identity": c.Identity, "workload": c.PointWorkload(t.Load), "concurrency": conc, "endpoint": c.Endpoint}
	if c.SLO != nil {
		in["slo"] = c.SLO // the point states its goodput under it (a cell without one keeps its fingerprints)
	}
	return in
}

func check(c *schema.Campaign, _ *schema.PipelineStep, _ any) []error {
	var errs []error
	for i, cell := range c.Cells {
		if cell.Import == nil {
			continue
		}
		at := fmt.Sprintf("cells[%d].import", i)
		var have []schema.Load
		for j, p := range cell.Import.Points {
			pt := fmt.Sprintf("%s.points[%d]", at, j)
			if p.Path == "" {
				errs = append(errs, &engine.FieldError{Path: pt + ".path", Err: fmt.Errorf("cell %s: empty path", cell.ID)})
			}
			if (p.Rate > 0) == (p.Concurrency > 0) {
				errs = append(errs, &engine.FieldError{Path: pt, Err: fmt.Errorf("cell %s: an imported point names a concurrency or a rate, not both nor neither", cell.ID),
					Hint: "{concurrency: N, path: FILE} for a closed-loop run, {rate: R, path: FILE} for a --request-rate run"})
				continue
			}
			field := pt + ".concurrency"
			if p.Rate > 0 {
				field = pt + ".rate"
			}
			l := cell.ImportLoad(p)
			if slices.Contains(have, l) {
				errs = append(errs, &engine.FieldError{Path: field, Err: fmt.Errorf("cell %s: %s imported twice", cell.ID, l.Label())})
			}
			have = append(have, l)
			if !slices.Contains(cell.Loads(), l) {
				hint := "add it to the cell's concurrencies, or drop the point"
				if p.Rate > 0 {
					hint = "add it to the cell's rates (its cap is the cell's max_in_flight), or drop the point"
				}
				errs = append(errs, &engine.FieldError{Path: field, Err: fmt.Errorf("cell %s: %s is not a point of the cell", cell.ID, l.Label()), Hint: hint})
			}
		}
		for _, l := range cell.Loads() {
			if !slices.Contains(have, l) {
				hint := "add {concurrency: N, path: FILE} or drop N from the cell's concurrencies"
				if l.IsRate() && cell.Workload.RequestRate == 0 {
					hint = "add {rate: R, path: FILE} or drop R from the cell's rates"
				}
				errs = append(errs, &engine.FieldError{Path: at + ".points", Err: fmt.Errorf("cell %s: %s has no imported file", cell.ID, l.Label()), Hint: hint})
			}
		}
	}
	return errs
}

func run(_ context.Context, t *engine.Task) (engine.Result, error) {
	cell, l := t.Cell, t.Load
	conc := l.InFlight()
	rel := cell.ImportPath(l)
	if rel == "" {
		return engine.Result{}, fmt.Errorf("cell %s imports no file for %s", cell.ID, l.Label())
	}
	e := benchfile.Expect{Model: cell.Model, Load: l}
	if b, err := workload.Resolve(cell.Workload); err == nil {
		e.ISL, e.OSL = b.InputTokens, b.OutputTokens
	}
	o := stats.Options{Cell: cell.ID, Load: l, Shape: cell.Workload.Shape, Mode: modeOf(cell.Workload), GPUs: cell.GPUs, SLO: cell.SLO}
	r, err := filesOf(t).Read(cell.Import.Format, abs(t, rel), e, o)
	if err != nil {
		return engine.Result{}, fmt.Errorf("import cell %s %s: %w", cell.ID, l.Key(), err)
	}
	version := r.SourceVersion
	if version == "" {
		version = cell.Import.SourceVersion
	}
	point := r.Point
	point.Import = &schema.PointImport{Source: r.Source, SourceVersion: version, File: rel, StatsFrom: r.StatsFrom, TokenBasis: r.TokenBasis, Clock: r.Clock}
	files := campaigndir.PointFiles{Cell: cell.ID, Load: l, Concurrency: conc}
	if len(r.Records) > 0 {
		if files.Records, err = campaigndir.WriteLines(t.Dir, campaigndir.Records(cell.ID, l), r.Records); err != nil {
			return engine.Result{}, err
		}
	}
	if files.Point, err = campaigndir.WriteJSON(t.Dir, campaigndir.Point(cell.ID, l), point); err != nil {
		return engine.Result{}, err
	}
	res := &Result{Cell: cell.ID, Load: l, Concurrency: conc, Source: r.Source, SourceVersion: version, StatsFrom: r.StatsFrom, TokenBasis: r.TokenBasis,
		RequestCount: point.RequestCount, ErrorCount: point.ErrorCount, Status: point.Status, RequestThroughput: point.RequestThroughput,
		OutputTokPerS: point.OutputTokenThroughput, SLOAttainment: point.SLOAttainment, GoodputReqS: point.GoodputReqS, Files: files}
	p50 := "unstated"
	if v, ok := point.TTFT.Value("p50"); ok {
		res.TTFTP50Ms, p50 = &v, fmt.Sprintf("%.1f ms", v)
	}
	reqs := plural.N(point.RequestCount, "request")
	if point.ErrorCount > 0 {
		reqs += fmt.Sprintf(" (%d failed, left out)", point.ErrorCount)
	}
	sum := fmt.Sprintf("%s: %s (%s), %s, TTFT p50 %s, %.1f tok/s", l.Key(), r.Source, r.StatsNote(), reqs, p50, point.OutputTokenThroughput)
	return engine.Result{Value: res, Outputs: files.List(), Summary: sum}, nil
}

// filesOf is the run's reader of imported files, shared by its import points (a file of many
// runs is read once per run); a reader of its own when the run provides none.
func filesOf(t *engine.Task) *benchfile.Files {
	if h, ok := t.Env.(interface{ ImportFiles() *benchfile.Files }); ok && h.ImportFiles() != nil {
		return h.ImportFiles()
	}
	return benchfile.NewFiles()
}

func modeOf(w schema.Workload) string {
	if w.Mode == "" {
		return workload.ModeSynthetic
	}
	return w.Mode
}
