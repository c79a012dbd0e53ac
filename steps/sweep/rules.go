package sweep

import (
	"fmt"
	"strings"

	"github.com/expr-lang/expr/vm"

	"github.com/perfdag/perfdag/engine/gate"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// stopFields are what a stop_when rule reads beside the last point's fields.
var stopFields = map[string]any{
	"gain_pct":      0.0, // output tokens/s gain of the last point over the one before, in %
	"prev_gain_pct": 0.0, // the same gain one point earlier
	"points":        0,   // points measured so far
}

func sampleEnv(c *schema.Campaign, cell *schema.Cell, stop bool) map[string]any {
	env := gate.SampleEnv(gate.Context(c, cell, schema.Load{}, "sweep"), campaigndir.PointResult{})
	if stop {
		for k, v := range stopFields {
			env[k] = v
		}
	}
	return env
}

// compile type-checks a cell's rule (its SLO, or its stop_when) against a point's fields.
func compile(c *schema.Campaign, cell *schema.Cell, rule string, stop bool) (*vm.Program, error) {
	prog, err := gate.Compile(rule, sampleEnv(c, cell, stop), false)
	if err != nil {
		msg, _, _, hint := gate.Explain(err, sampleEnv(c, cell, stop))
		if hint != "" {
			msg += " (" + hint + ")"
		}
		return nil, fmt.Errorf("rule %q: %s", rule, msg)
	}
	return prog, nil
}

// judged is one point as a sweep's rule saw it.
type judged struct {
	load   schema.Load // the probe's point
	conc   int         // its concurrency (a search's bisection is over these), or a rate's cap
	met    bool        // the rule held on the point's estimates
	values string
	// verdict is the point's decided verdict (meets, misses, undecided), "" when it measured a
	// fixed count: it is then judged on its estimates (met).
	verdict string
	point   *campaigndir.PointResult
	node    string // the node whose result point is
	failed  string // the group's first failure, "node: why", "" when none
	// short says why an open-loop probe's sends fell short of its asked rate: it is then a
	// decided miss whatever its latencies or its point's verdict ("" when the rate was met).
	short string
}

// noEvidence says why a probe tells nothing about an SLO ("" when it does): it has no point,
// or its point has no valid request (the server was down or refused every request). A point
// with some valid requests and some errors is evidence: the SLO decides (error_count == 0).
func (j judged) noEvidence() string {
	p := j.point
	switch {
	case p == nil && j.failed != "":
		return fmt.Sprintf("%s has no point: %s", j.load.Key(), j.failed)
	case p == nil:
		return fmt.Sprintf("%s has no point", j.load.Key())
	case p.RequestCount > 0:
		return ""
	case len(p.ErrorClasses) > 0:
		return fmt.Sprintf("%s had no valid request (%d errors: %s)", j.node, p.ErrorCount, strings.Join(p.ErrorClasses, ", "))
	}
	return fmt.Sprintf("%s had no valid request", j.node)
}

// judge evaluates a rule on a point; a failed point or a point without a result never meets it.
func judge(prog *vm.Program, rule string, env map[string]any, p *campaigndir.PointResult) (bool, string, error) {
	if p == nil || p.Status == "failed" {
		return false, "the point failed", nil
	}
	full := gate.Env(env, p)
	ok, err := gate.Eval(prog, full)
	if err != nil {
		if u := gate.Unstated(rule, full); len(u) > 0 {
			return false, fmt.Sprintf("unstated: %v", u), nil
		}
		return false, "", fmt.Errorf("rule %q on %s: %w", rule, schema.LoadOf(p.Load, p.Concurrency, p.RequestRate).Key(), err)
	}
	return ok, gate.Values(rule, full), nil
}
