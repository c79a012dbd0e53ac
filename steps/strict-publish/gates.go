package strictpublish

import (
	"fmt"
	"slices"
	"strings"

	"github.com/perfdag/perfdag/engine/plural"

	"github.com/perfdag/perfdag/engine/gate"
	"github.com/perfdag/perfdag/schema"
)

// Ids of the default strict gates (DESIGN.md); a publish.gates entry with one of these ids
// replaces that gate's set fields (rule, severity, message).
const (
	GateGrounded   = "dcgm-grounded"
	GateRoofline   = "roofline-page"
	GateSteadyWind = "steady-window"
	GateQuality    = "quality-gates"
)

// DefaultGates are the strict gates every publish runs unless the campaign overrides them:
// DCGM-grounded; a throughput or mixed campaign with plot-ready points carries the roofline
// page; no cell with steady_window_undercount unless acknowledged.
func DefaultGates() []schema.Gate {
	return []schema.Gate{
		{ID: GateGrounded, Rule: "dcgm_grounded", Severity: gate.Fail},
		{ID: GateRoofline, Rule: `kind == "latency" or plot_ready_points == 0 or roofline_present`, Severity: gate.Fail},
		{ID: GateSteadyWind, Rule: `steady_window_undercount_cells == 0 or "steady_window_undercount" in acknowledged`, Severity: gate.Fail},
		{ID: GateQuality, Rule: "gate_failures == 0", Severity: gate.Fail},
	}
}

func isDefault(id string) bool {
	return id == GateGrounded || id == GateRoofline || id == GateSteadyWind || id == GateQuality
}

// Gates is the campaign's strict gate set: the defaults, each overridden field by field by a
// publish.gates entry of the same id, then the campaign's other gates in file order.
func Gates(c *schema.Campaign) []schema.Gate {
	out := DefaultGates()
	if c.Publish == nil {
		return out
	}
	for _, g := range c.Publish.Gates {
		i := slices.IndexFunc(out, func(d schema.Gate) bool { return d.ID == g.ID })
		if i < 0 {
			if g.Severity == "" {
				g.Severity = gate.Fail
			}
			out = append(out, g)
			continue
		}
		if g.Rule != "" {
			out[i].Rule, out[i].Message = g.Rule, ""
		}
		if g.Severity != "" {
			out[i].Severity = g.Severity
		}
		if g.Message != "" {
			out[i].Message = g.Message
		}
	}
	return out
}

// Env is what a strict gate's rule reads: the campaign context (campaign, kind, cells, ...)
// and the facts.
func Env(c *schema.Campaign, step string, f Facts) map[string]any {
	ctx := gate.Context(c, nil, schema.Load{}, step)
	ctx["kind"] = kindOf(c)
	return gate.Env(ctx, f)
}

// sampleFacts is a typed zero environment for compiling rules at validate time.
func sampleFacts() Facts {
	return Facts{Flags: []string{}, Acknowledged: []string{}, SolRigor: schema.RigorL1}
}

// Verdicts evaluates every strict gate of the campaign on its evidence.
func Verdicts(c *schema.Campaign, step string, ev *Evidence) ([]gate.Verdict, error) {
	env := Env(c, step, ev.Facts)
	var out []gate.Verdict
	for _, g := range Gates(c) {
		prog, err := gate.Compile(g.Rule, env, false)
		if err != nil {
			return nil, fmt.Errorf("strict gate %s: rule %q: %w", g.ID, g.Rule, err)
		}
		v := gate.Verdict{Gate: g.ID, Node: step, Severity: or(g.Severity, gate.Fail), Rule: g.Rule}
		ok, err := gate.Eval(prog, env)
		switch {
		case err != nil:
			v.Error = err.Error()
			v.Message = fmt.Sprintf("rule %s could not be evaluated: %v", g.Rule, err)
		case !ok:
			v.Message = message(g, ev)
		}
		v.Passed = ok && err == nil
		out = append(out, v)
	}
	return out, nil
}

// message says in words why a gate failed: the author's message, else the default gate's
// explanation with the numbers, else the rule.
func message(g schema.Gate, ev *Evidence) string {
	if g.Message != "" {
		return g.Message
	}
	defaults := DefaultGates()
	if i := slices.IndexFunc(defaults, func(d schema.Gate) bool { return d.ID == g.ID }); i < 0 || defaults[i].Rule != g.Rule {
		return fmt.Sprintf("rule `%s` is false", g.Rule)
	}
	switch g.ID {
	case GateGrounded:
		are := "are"
		if ev.DCGMGroundedPoints == 1 {
			are = "is"
		}
		return fmt.Sprintf("not DCGM-grounded: %d of %s %s byte-grounded (sol_rigor %s); run dcgm-correlate for every cell (or import a roofline sweep with in-pod DCGM)",
			ev.DCGMGroundedPoints, plural.N(ev.PlotReadyPoints, "plot-ready point"), are, ev.SolRigor)
	case GateRoofline:
		return fmt.Sprintf("a %s campaign with %s has no roofline page: import a prefill/decode sweep with roofline-import", ev.kind, plural.N(ev.PlotReadyPoints, "plot-ready point"))
	case GateQuality:
		var parts []string
		for i, v := range ev.Failing {
			if i == 5 {
				parts = append(parts, fmt.Sprintf("and %d more", len(ev.Failing)-5))
				break
			}
			parts = append(parts, fmt.Sprintf("%s on %s (%s)", v.Gate, v.Node, or(v.Value, v.Rule)))
		}
		return fmt.Sprintf("%s: %s; fix what they measure or relax the gates, then run again",
			plural.Of(ev.GateFailures, "fail-severity quality gate verdict stands", "fail-severity quality gate verdicts stand"), strings.Join(parts, "; "))
	default: // GateSteadyWind
		return fmt.Sprintf("%s ran num_prompts < 2 × concurrency (steady_window_undercount: %s), so their throughput is undercounted; re-run with more requests, or add steady_window_undercount to publish.acknowledge",
			plural.N(ev.UndercountCells, "cell"), strings.Join(ev.FlaggedCells[schema.FlagSteadyWindowUndercount], ", "))
	}
}

// Decision is what the verdicts mean for a publish.
type Decision struct {
	Refused bool           // strict and a fail-severity gate failed: nothing is written
	Failed  []gate.Verdict // fail-severity gates that failed
	Gaps    []string       // "gate-id: message" for every gate passed knowingly, plus acknowledgements
}

// Decide applies strictness: under strict, a failed fail-severity gate refuses; otherwise
// (and for warn-severity gates always) a failed gate is published as a gap. Acknowledged
// flags that are present are gaps too: accepted knowingly, recorded all the same.
func Decide(verdicts []gate.Verdict, ev *Evidence, strict bool) Decision {
	var d Decision
	for _, v := range verdicts {
		if v.Passed {
			continue
		}
		if v.Severity == gate.Fail {
			d.Failed = append(d.Failed, v)
			if strict {
				d.Refused = true
				continue
			}
		}
		d.Gaps = append(d.Gaps, v.Gate+": "+v.Message)
	}
	for _, a := range ev.Acknowledged {
		if cells := ev.FlaggedCells[a]; len(cells) > 0 {
			d.Gaps = append(d.Gaps, fmt.Sprintf("acknowledged %s: %s", a, strings.Join(cells, ", ")))
		}
	}
	if d.Refused {
		d.Gaps = nil
	}
	return d
}
