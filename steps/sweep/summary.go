package sweep

import (
	"fmt"

	"github.com/expr-lang/expr/vm"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/engine/gate"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

func mergeEnv(env map[string]any, p *campaigndir.PointResult) map[string]any { return gate.Env(env, p) }

func evalStop(prog *vm.Program, env map[string]any) (bool, error) { return gate.Eval(prog, env) }

func valuesOf(rule string, env map[string]any) string { return gate.Values(rule, env) }

// summarize rebuilds the sweep's answer from the groups the engine ran for it, in the order
// they were made (Task.Upstream lists them after the node's own dependencies).
func summarize(t *engine.Task) (*schema.SweepResult, error) {
	fo, err := start(t)
	if err != nil {
		return nil, err
	}
	f := fo.(*fanout)
	var probes []engine.Probe
	at := map[schema.Load]int{}
	for _, u := range t.Upstream {
		if u.Load.IsZero() || u.Cell != t.Cell.ID {
			continue
		}
		i, ok := at[u.Load]
		if !ok {
			i = len(probes)
			at[u.Load] = i
			probes = append(probes, engine.Probe{Load: u.Load})
		}
		probes[i].Upstream = append(probes[i].Upstream, u)
		if u.Failed != "" && probes[i].Failed == "" {
			probes[i].Failed = u.Node + ": " + u.Failed
		}
	}
	ps, err := f.judge(probes)
	if err != nil {
		return nil, err
	}
	cell := t.Cell
	r := &schema.SweepResult{Schema: schema.SchemaSweep, Cell: cell.ID, Bound: Bound(cell), MeasurementCost: sweepCost(ps)}
	for _, p := range ps {
		sp := schema.SweepProbe{Concurrency: p.load.InFlight(), Met: p.met, Values: p.values, Status: "failed", Verdict: p.verdict, RateShort: p.short != ""}
		if p.load.IsRate() {
			sp.Load = p.load // a concurrency probe keeps the form it had before points were keyed by load
		}
		if known, meets := p.decided(); known {
			sp.Met = meets
		}
		if p.short != "" && sp.Verdict != "" {
			sp.Verdict = schema.VerdictMisses // the search's verdict: its point's own decision is in point.json
		}
		sp.NoEvidence = cell.Search != nil && p.noEvidence() != ""
		if p.point != nil {
			sp.Status, sp.MeasurementCost = p.point.Status, p.point.MeasurementCost
		}
		if p.point != nil && !sp.NoEvidence { // a probe without a valid request measured no throughput
			tp, rq := p.point.OutputTokPerS, p.point.RequestThroughput
			sp.Throughput, sp.RequestRate = &tp, &rq
			sp.GoodputReqS, sp.SLOAttainment = p.point.GoodputReqS, p.point.SLOAttainment
			if p.load.IsRate() {
				sp.AchievedRate = p.point.AchievedRate
			}
		}
		r.Probes = append(r.Probes, sp)
	}
	if s := cell.Search; s != nil {
		a := axisOf(cell)
		r.Mode, r.SLO, r.From, r.To = schema.SweepSearch, s.SLO, a.from, a.to
		r.FixedSweep = fixedSweep(cell, ps)
		if _, r.KneeUnknown = unknown(ps); r.KneeUnknown != "" {
			if a.rate() {
				rateAnswer(r, cell, a, 0, 0, 0)
			}
			return r, nil
		}
		on := onAxis(ps)
		r.Knee, r.KneeLo, r.KneeHi, r.KneeAtTop = band(a.from, a.to, on)
		r.BandLevel = bandLevel(ps)
		knee := schema.Load{}
		if r.Knee != 0 {
			knee = a.load(cell, r.Knee)
		}
		if a.rate() {
			rateAnswer(r, cell, a, r.Knee, r.KneeLo, r.KneeHi)
		}
		for _, p := range r.Probes {
			if !knee.IsZero() && p.PointLoad() == knee {
				r.KneeOutputTokS, r.KneeRequestThroughput = p.Throughput, p.RequestRate
				r.KneeGoodputReqS, r.KneeSLOAttainment = p.GoodputReqS, p.SLOAttainment
			}
		}
		return r, nil
	}
	if !cell.Sweep.IsZero() {
		r.Mode, r.Auto = schema.SweepAuto, autoResult(cell, ps)
		return r, nil
	}
	r.Mode, r.StopWhen = schema.SweepList, cell.StopWhen
	if loads := cell.Loads(); len(ps) < len(loads) {
		r.Skipped = append(r.Skipped, loads[len(ps):]...)
		if len(ps) > 0 {
			_, vals, err := f.stop(ps)
			if err != nil {
				return nil, err
			}
			r.StopReason = fmt.Sprintf("stop_when %q held after %s (%s)", cell.StopWhen, ps[len(ps)-1].load.Key(), vals)
		}
	}
	return r, nil
}

// bandLevel is the confidence the band's ends are decided at: 1 − the decisions' alpha when
// every probe carries a decision (the least confident one when they differ), 0 when some probe
// was judged on its estimates.
func bandLevel(ps []judged) float64 {
	level := 0.0
	for i, p := range ps {
		if p.point == nil || p.point.Decision == nil {
			return 0
		}
		d := p.point.Decision
		if d.Alpha <= 0 || d.Alpha >= 1 {
			return 0
		}
		if l := 1 - d.Alpha; i == 0 || l < level {
			level = l
		}
	}
	return level
}
