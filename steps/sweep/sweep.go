// Package sweep is the step kind that decides a cell's points at run time: an SLO search
// (bisection over concurrency for the highest one meeting the SLO) or a list sweep that stops
// when its stop_when rule holds. The engine runs each point it asks for as ordinary,
// checkpointed nodes (engine.Fanout); this kind only decides and reports.
package sweep

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/expr-lang/expr/vm"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/engine/gate"
	"github.com/perfdag/perfdag/engine/plural"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// Kind is the sweep step kind.
var Kind = engine.Kind{
	Name:          "sweep",
	Scope:         engine.ScopeCell,
	Version:       "2", // 2: undecided probes and the knee band, measurement cost
	HoldsEndpoint: true,
	Tolerant:      true,
	Doc:           "decides a cell's points at run time: an SLO search for the knee, a list of points that stops when stop_when holds, or sweep: auto's operating range",
	Result:        Result{},
	Inputs:        inputs,
	Check:         check,
	Fanout:        &engine.FanoutSpec{Start: start, Bound: Bound, Decides: clearDecided},
	Run:           run,
}

// Result is what gates on a sweep read.
type Result struct {
	Cell  string `json:"cell"`
	Mode  string `json:"mode"`   // search, list or auto
	Knee  int    `json:"knee"`   // highest concurrency meeting the SLO, 0 when none (search)
	AtTop bool   `json:"at_top"` // the upper bound met the SLO: the knee may lie beyond it
	// KneeLo and KneeHi are the band the knee lies in (equal to Knee when every probe decided).
	KneeLo int `json:"knee_lo"`
	KneeHi int `json:"knee_hi"`
	// Unknown says why the search stopped without knowing its knee (a probe without evidence).
	Unknown string `json:"unknown,omitempty"`
	Probes  int    `json:"probes"`  // points measured or reused
	Skipped int    `json:"skipped"` // listed concurrencies not measured (list)
	// Sweep names the cell's sweep_probes.json.
	Sweep string `json:"sweep"`
}

// SweepFile offers sweep_probes.json to aggregate, which passes it on as evidence.
func (r *Result) SweepFile() string { return r.Sweep }

// Bound is the most points a cell's sweep can measure.
func Bound(cell *schema.Cell) int {
	if cell.Search != nil {
		a := axisOf(cell)
		return bound(a.from, a.to, a.step, decides(cell))
	}
	if !cell.Sweep.IsZero() {
		return 2 + cell.Sweep.RatesOr() // the synchronous and saturating points, then the rates
	}
	return len(cell.Loads())
}

// clearDecided clears the cell fields only the sweep decides with: editing an SLO or a stopping
// rule changes no point's fingerprint.
func clearDecided(cell *schema.Cell) {
	cell.Search, cell.StopWhen, cell.Sweep = nil, "", schema.Sweep{}
}

// decides reports whether a cell's points measure until their SLO verdict is known
// (requests_per_point {auto: {decide: ...}}), so a probe may end undecided.
func decides(cell *schema.Cell) bool {
	a := cell.RequestsPerPoint.Auto
	return a != nil && a.Decide != ""
}

// inputs are what the sweep's answer depends on beyond its points' results.
func inputs(t *engine.Task) any {
	in := map[string]any{"search": t.Cell.Search, "stop_when": t.Cell.StopWhen, "concurrencies": t.Cell.Concurrencies}
	if !t.Cell.Sweep.IsZero() { // absent otherwise, so a search's or a list's fingerprint is as it was
		in["sweep"], in["max_in_flight"] = t.Cell.Sweep, t.Cell.MaxInFlight
	}
	return in
}

// check validates every expanding cell's search or stop_when at its key.
func check(c *schema.Campaign, _ *schema.PipelineStep, _ any) []error {
	var errs []error
	for i := range c.Cells {
		cell := &c.Cells[i]
		p := fmt.Sprintf("cells[%d]", i)
		if s := cell.Search; s != nil {
			errs = append(errs, checkSearch(c, cell, p+".search")...)
		}
		if !cell.Sweep.IsZero() {
			errs = append(errs, checkAuto(cell, p)...)
		}
		if cell.StopWhen != "" && cell.Sweep.IsZero() {
			if _, err := compile(c, cell, cell.StopWhen, true); err != nil {
				errs = append(errs, &engine.FieldError{Path: p + ".stop_when", Err: err,
					Hint: "read the last point's fields (output_tok_s, itl_avg_ms, ...), gain_pct, prev_gain_pct or points, e.g. gain_pct < 3 && prev_gain_pct < 3"})
			} else if err := sloDeclared(cell, cell.StopWhen); err != nil {
				errs = append(errs, &engine.FieldError{Path: p + ".stop_when", Err: err, Hint: sloHint})
			}
		}
	}
	return errs
}

func checkSearch(c *schema.Campaign, cell *schema.Cell, p string) []error {
	s := cell.Search
	var errs []error
	bad := func(key string, err error, hint string) {
		errs = append(errs, &engine.FieldError{Path: p + key, Err: err, Hint: hint})
	}
	if s.OverRate() {
		errs = append(errs, checkRateSearch(cell, p)...)
	} else {
		errs = append(errs, checkConcSearch(cell, p)...)
	}
	if cell.StopWhen != "" {
		bad("", fmt.Errorf("cell %s has both search and stop_when", cell.ID), "a cell is searched or swept over its list, not both")
	}
	if len(cell.Concurrencies) > 0 {
		errs = append(errs, &engine.FieldError{Path: strings.TrimSuffix(p, ".search") + ".concurrencies",
			Err:  fmt.Errorf("cell %s has both search and concurrencies: its points are the concurrencies the search probes, so the list would be ignored", cell.ID),
			Hint: "keep search: and delete concurrencies:, or keep the list and delete search: (stop_when: ends a list early)"})
	}
	if len(cell.Rates) > 0 {
		errs = append(errs, &engine.FieldError{Path: strings.TrimSuffix(p, ".search") + ".rates",
			Err:  fmt.Errorf("cell %s has both search and rates: its points are the ones the search probes, so the list would be ignored", cell.ID),
			Hint: "search the rates with search: {over: rate, from: 1, to: 64, ...} and delete rates:, or keep the list and delete search: (stop_when: ends a list early)"})
	}
	if strings.TrimSpace(s.SLO) == "" {
		bad(".slo", fmt.Errorf("cell %s: search has no slo", cell.ID), `slo: "itl_avg_ms <= 50 && error_count == 0"`)
	} else if _, err := compile(c, cell, s.SLO, false); err != nil {
		bad(".slo", err, "a rule on run-shape's fields, e.g. ttft_p50_ms < 500")
	} else if err := sloDeclared(cell, s.SLO); err != nil {
		bad(".slo", err, sloHint)
	}
	return errs
}

// goodputFields are the point fields only a cell with a per-request slo: has.
var goodputFields = map[string]any{"slo_attainment": nil, "goodput_req_s": nil}

// sloHint says how to give a cell the per-request targets its goodput fields judge by.
const sloHint = "declare the cell's per-request targets, e.g. slo: {ttft_ms: 2000, tpot_ms: 50}; its points then state slo_attainment and goodput_req_s"

// sloDeclared refuses a rule that reads slo_attainment or goodput_req_s on a cell that declares
// no slo: every point would leave them unstated and the rule would never hold.
func sloDeclared(cell *schema.Cell, rule string) error {
	if cell.SLO != nil {
		return nil
	}
	if reads := gate.Unstated(rule, goodputFields); len(reads) > 0 {
		return fmt.Errorf("cell %s: rule %q reads %s, but the cell declares no per-request slo to judge its requests by", cell.ID, rule, strings.Join(reads, " and "))
	}
	return nil
}

// fanout decides a cell's next points.
type fanout struct {
	t    *engine.Task
	prog *vm.Program
	rule string
	env  map[string]any
}

func start(t *engine.Task) (engine.Fanout, error) {
	cell := t.Cell
	if !cell.Sweep.IsZero() {
		return &fanout{t: t}, nil // sweep: auto reads its anchors' throughputs, no rule
	}
	rule := cell.StopWhen
	if cell.Search != nil {
		rule = cell.Search.SLO
	}
	prog, err := compile(t.Campaign, cell, rule, cell.Search == nil)
	if err != nil {
		return nil, err
	}
	return &fanout{t: t, prog: prog, rule: rule, env: sampleEnvFor(t)}, nil
}

func sampleEnvFor(t *engine.Task) map[string]any {
	return sampleEnv(t.Campaign, t.Cell, false)
}

// Next implements engine.Fanout.
func (f *fanout) Next(probes []engine.Probe, free []schema.Load) ([]schema.Load, error) {
	ps, err := f.judge(probes)
	if err != nil {
		return nil, err
	}
	cell := f.t.Cell
	if !cell.Sweep.IsZero() {
		return autoNext(cell, ps), nil
	}
	if cell.Search != nil {
		if _, why := unknown(ps); why != "" {
			return nil, nil // no evidence: the search stops and the sweep fails with the knee unknown
		}
		a := axisOf(cell)
		if x := nextProbe(a.from, a.to, a.step, onAxis(ps), a.free(cell, free)); x != 0 {
			return []schema.Load{a.load(cell, x)}, nil
		}
		return nil, nil
	}
	if len(ps) > 0 {
		if stop, _, err := f.stop(ps); err != nil || stop {
			return nil, err
		}
	}
	if loads := cell.Loads(); len(ps) < len(loads) {
		return []schema.Load{loads[len(ps)]}, nil
	}
	return nil, nil
}

// judge evaluates the cell's rule on every probe (the search's SLO; for a list, nothing).
func (f *fanout) judge(probes []engine.Probe) ([]judged, error) {
	out := make([]judged, 0, len(probes))
	for _, p := range probes {
		j := judged{load: p.Load, conc: p.Load.InFlight(), failed: p.Failed}
		j.point, j.node = pointOf(p.Upstream)
		if f.t.Cell.Search != nil {
			j.conc = axisOf(f.t.Cell).pos(p.Load)
			met, vals, err := judge(f.prog, f.rule, f.env, j.point)
			if err != nil {
				return nil, err
			}
			j.met, j.values = met, vals
			if j.point != nil && j.point.Decision != nil {
				j.verdict = j.point.Decision.Verdict
			}
			if j.short = rateShort(j.point); j.short != "" {
				j.met, j.values = false, j.short+"; "+vals
			}
			if why := j.noEvidence(); why != "" {
				j.values = "no evidence: " + why
			}
		} else {
			j.met = j.point != nil && j.point.Status != "failed"
		}
		out = append(out, j)
	}
	return out, nil
}

// stop evaluates stop_when after the last of ps.
func (f *fanout) stop(ps []judged) (bool, string, error) {
	env := sampleEnv(f.t.Campaign, f.t.Cell, true)
	last := ps[len(ps)-1]
	if last.point == nil {
		return false, "", nil
	}
	env["points"] = len(ps)
	env["gain_pct"], env["prev_gain_pct"] = gain(ps, len(ps)-1), gain(ps, len(ps)-2)
	full := mergeEnv(env, last.point)
	ok, err := evalStop(f.prog, full)
	if err != nil {
		return false, "", fmt.Errorf("stop_when %q after %s: %w", f.rule, last.load.Key(), err)
	}
	return ok, valuesOf(f.rule, full), nil
}

// gain is the output tokens/s gain of probe i over probe i−1 in % (a large number when unknown,
// so "gain under 3 %" never holds on a missing point).
func gain(ps []judged, i int) float64 {
	if i < 1 || i >= len(ps) || ps[i].point == nil || ps[i-1].point == nil || ps[i-1].point.OutputTokPerS <= 0 {
		return 1e9
	}
	return (ps[i].point.OutputTokPerS/ps[i-1].point.OutputTokPerS - 1) * 100
}

// pointOf finds a group's measured point among its results, and the node that measured it.
func pointOf(ups []engine.Upstream) (*campaigndir.PointResult, string) {
	for _, u := range ups {
		if p, ok := u.Result.(*campaigndir.PointResult); ok {
			return p, u.Node
		}
	}
	return nil, ""
}

// unknown finds the probe without evidence that stops a search there, and says why ("" when
// every probe is evidence).
func unknown(ps []judged) (int, string) {
	for _, p := range ps {
		if why := p.noEvidence(); why != "" {
			return p.conc, why
		}
	}
	return 0, ""
}

func run(_ context.Context, t *engine.Task) (engine.Result, error) {
	res, err := summarize(t)
	if err != nil {
		return engine.Result{}, err
	}
	rel := campaigndir.Sweep(t.Cell.ID)
	if _, err := campaigndir.WriteJSON(t.Dir, rel, res); err != nil {
		return engine.Result{}, fmt.Errorf("write %s: %w", rel, err)
	}
	lo, hi := res.KneeBand()
	out := Result{Cell: t.Cell.ID, Mode: res.Mode, Knee: res.Knee, AtTop: res.KneeAtTop, KneeLo: lo, KneeHi: hi, Unknown: res.KneeUnknown,
		Probes: len(res.Probes), Skipped: len(res.Skipped), Sweep: rel}
	result := engine.Result{Value: &out, Outputs: []string{rel}, Summary: line(res) + costLine(res)}
	if a := res.Auto; a != nil && a.Unknown != "" {
		// the anchors are kept; a failed node sweeps again on resume
		return result, fmt.Errorf("cell %s: sweep: auto found no rates: %s; once the endpoint answers, 'perfdag resume' measures it again", t.Cell.ID, a.Unknown)
	}
	if res.KneeUnknown != "" {
		// the probes are kept as evidence; a failed node searches again on resume
		l, _ := unknownProbe(res)
		return result, fmt.Errorf("cell %s: the search stopped with its knee unknown: %s, which says nothing about the SLO %s; "+
			"once the endpoint answers, 'perfdag resume' probes %s again", t.Cell.ID, res.KneeUnknown, res.SLO, l.Key())
	}
	return result, nil
}

// unknownProbe is the point whose probe left a search's knee unknown.
func unknownProbe(r *schema.SweepResult) (schema.Load, bool) {
	for _, p := range r.Probes {
		if p.NoEvidence {
			return p.PointLoad(), true
		}
	}
	return schema.Load{}, false
}

func line(r *schema.SweepResult) string {
	if r.Mode == schema.SweepAuto && r.Auto != nil {
		return autoLine(r)
	}
	if r.Mode == schema.SweepList {
		s := plural.N(len(r.Probes), "point")
		if len(r.Skipped) > 0 {
			s += fmt.Sprintf(", %d skipped: %s", len(r.Skipped), r.StopReason)
		}
		return s
	}
	if r.Over == schema.SearchOverRate {
		return rateLine(r)
	}
	lo, hi := r.KneeBand()
	undecided := ""
	if u := r.Undecided(); len(u) > 0 {
		undecided = "; undecided: " + concList(u)
	}
	switch {
	case r.KneeUnknown != "":
		return fmt.Sprintf("knee unknown: %s (%s)", r.KneeUnknown, plural.N(len(r.Probes), "probe"))
	case r.Knee == 0 && lo == hi:
		return fmt.Sprintf("no concurrency from %d meets %s (%s%s)", r.From, r.SLO, plural.N(len(r.Probes), "probe"), undecided)
	case r.KneeAtTop && lo == hi:
		return fmt.Sprintf("knee ≥ c%d (the upper bound meets %s; %s)", r.Knee, r.SLO, plural.N(len(r.Probes), "probe"))
	}
	return fmt.Sprintf("knee %s for %s (%s of ≤ %d%s)", r.BandText(), r.SLO, plural.N(len(r.Probes), "probe"), r.Bound, undecided)
}

// costLine says what the sweep's points took and, for a search, what a fixed sweep of its
// range would have: "; 873 requests, 0.0121 GPU-h (a fixed sweep c1..c48: ≈ 3,576 requests,
// ≈ 0.0502 GPU-h)". Empty when no point recorded its cost.
func costLine(r *schema.SweepResult) string {
	c := r.MeasurementCost
	if c == nil || c.Points == 0 {
		return ""
	}
	s := fmt.Sprintf("; %s, %s", plural.N(c.RequestsSent, "request"), gpuHours(c.GPUHours()))
	if f := r.FixedSweep; f != nil {
		s += fmt.Sprintf(" (a fixed sweep %s: ≈ %s", f.Range(), plural.N(f.Requests, "request"))
		if f.GPUSeconds != nil {
			h := *f.GPUSeconds / 3600
			s += ", ≈ " + gpuHours(&h)
		}
		s += ")"
	}
	return s
}

// gpuHours words GPU-hours to three significant digits, or says they are unknown.
func gpuHours(h *float64) string {
	if h == nil {
		return "GPU-h unknown"
	}
	return strconv.FormatFloat(*h, 'g', 3, 64) + " GPU-h"
}

// concList writes concurrencies as "c31, c32".
func concList(cs []int) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = fmt.Sprintf("c%d", c)
	}
	return strings.Join(parts, ", ")
}
