package run

import (
	"reflect"
	"strings"

	"github.com/perfdag/perfdag/engine/fingerprint"
	"github.com/perfdag/perfdag/engine/gate"
	"github.com/perfdag/perfdag/engine/plan"
)

// hasGates reports whether any gate guards the node's step (bracket first halves never carry
// verdicts: their result is half a window).
func (r *Runner) hasGates(n *plan.Node) bool {
	if n.Phase != "" {
		return false
	}
	for _, g := range r.plan.Campaign.Gates {
		if _, ok := g.Program[n.Step.ID]; ok {
			return true
		}
	}
	return false
}

// evalGates evaluates every gate guarding the node's step on its result. A rule that errors
// (or runs out of its evaluation budget) is a verdict that did not pass, carrying the error;
// one that errors on a value the result does not state (nil) names it as unstated instead.
func (r *Runner) evalGates(n *plan.Node, val any) []gate.Verdict {
	if !r.hasGates(n) {
		return nil
	}
	var out []gate.Verdict
	ctx := r.ruleContext(n)
	for _, g := range r.plan.Campaign.Gates {
		prog, ok := g.Program[n.Step.ID]
		if !ok {
			continue
		}
		v := gate.Verdict{Gate: g.ID, Node: n.ID, Severity: g.Severity, Rule: g.Rule, Message: g.Message, Concurrency: n.Load.InFlight()}
		if n.Load.IsRate() {
			v.Load = n.Load.Key() // closed-loop verdicts keep the form they had before loads, so do their digests
		}
		if n.Cell != nil {
			v.Cell = n.Cell.ID
		}
		env := gate.Env(ctx, val)
		passed, err := gate.Eval(prog, env)
		v.Passed = passed && err == nil
		if err != nil {
			if v.Unstated = gate.Unstated(g.Rule, env); v.Unstated == nil { // a missing value, never read as 0
				v.Error = err.Error()
			}
		}
		if !v.Passed && v.Unstated == nil {
			v.Value = gate.Values(g.Rule, env)
		}
		out = append(out, v)
	}
	return out
}

// ruleContext is what every rule may read besides the result: the campaign's and, at cell
// and point scope, the cell's fields, as the registry defines them.
func (r *Runner) ruleContext(n *plan.Node) map[string]any {
	return r.opts.Registry.RuleEnv(r.plan.Campaign.Spec, n.Cell, n.Load, n.Step.ID)
}

// ancestors are the nodes n reads from, directly or through other nodes, in plan order.
func (r *Runner) ancestors(n *plan.Node) []*plan.Node {
	r.mu.Lock()
	defer r.mu.Unlock()
	if a, ok := r.anc[n]; ok {
		return a
	}
	seen := map[*plan.Node]bool{}
	fanned := false
	var visit func(m *plan.Node)
	visit = func(m *plan.Node) {
		for _, d := range m.Deps {
			if d.Data && !seen[d.Node] {
				seen[d.Node] = true
				visit(d.Node)
				if d.Node.Fanout() {
					fanned = true // its children grow during the walk: never cache
					for _, c := range r.plan.Children(d.Node) {
						if !seen[c] {
							seen[c] = true
							visit(c)
						}
					}
				}
			}
		}
	}
	visit(n)
	out := make([]*plan.Node, 0, len(seen))
	for _, m := range r.plan.Snapshot() {
		if seen[m] {
			out = append(out, m)
		}
	}
	if !fanned {
		r.anc[n] = out
	}
	return out
}

// ancestorVerdicts is what a verdict-reading node reads: every verdict of the nodes it reads
// from, in plan order (nil for kinds that do not read verdicts).
func (r *Runner) ancestorVerdicts(n *plan.Node, of func(id string) []gate.Verdict) []gate.Verdict {
	if !n.Step.Kind.ReadsVerdicts {
		return nil
	}
	var out []gate.Verdict
	for _, a := range r.ancestors(n) {
		out = append(out, of(a.ID)...)
	}
	return out
}

// actsOnPass reports whether the node's kind acts on the campaign being good.
func (r *Runner) actsOnPass(n *plan.Node) bool {
	k := n.Step.Kind
	return k.ActsOnPass != nil && k.ActsOnPass(r.task(n))
}

// failingAmong names the first fail verdict among the ancestors' verdicts ("" when none).
func (r *Runner) failingAmong(n *plan.Node, of func(id string) []gate.Verdict) string {
	var failing []string
	for _, a := range r.ancestors(n) {
		for _, v := range of(a.ID) {
			if v.Failing() {
				failing = append(failing, describe(v))
			}
		}
	}
	if len(failing) == 0 {
		return ""
	}
	return "a fail gate stands, and " + n.Step.Kind.Name + " acts on a pass: " + strings.Join(limit(failing, 3), "; ")
}

// blockedBy is the decide-time check: a node that acts on a pass is blocked when a reused
// node it reads from carries a fail verdict under the current gates.
func (r *Runner) blockedBy(n *plan.Node, out map[string]*decision) string {
	if !r.actsOnPass(n) {
		return ""
	}
	return r.failingAmong(n, func(id string) []gate.Verdict {
		if d := out[id]; d != nil && d.Action == ActReuse {
			return d.verdicts
		}
		return nil
	})
}

// describe words a verdict for logs and reasons: "gate ID (sev) failed on NODE: why", with the
// values the rule read.
func describe(v gate.Verdict) string { return v.Line() }

// gatesDoc is what a verdict reader's fingerprint adds: the gate definitions and the verdicts.
func (r *Runner) gatesDoc(n *plan.Node, verdicts []gate.Verdict) ([]byte, error) {
	if !n.Step.Kind.ReadsVerdicts {
		return nil, nil
	}
	var defs []gateDef
	for _, g := range r.plan.Campaign.Gates {
		defs = append(defs, gateDef{g.ID, g.On, g.Rule, g.Severity, g.Message})
	}
	return gatesDocOf(defs, verdicts)
}

// gateDef is a gate's definition as a verdict reader's fingerprint holds it.
type gateDef struct{ ID, On, Rule, Severity, Message string }

// gatesDocOf encodes a verdict reader's gates document.
func gatesDocOf(defs []gateDef, verdicts []gate.Verdict) ([]byte, error) {
	if verdicts == nil {
		verdicts = []gate.Verdict{}
	}
	return fingerprint.Canonical(map[string]any{"definitions": defs, "verdicts": verdicts})
}

func sameVerdicts(a, b []gate.Verdict) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return reflect.DeepEqual(a, b)
}

func refused(vs []gate.Verdict) bool {
	for _, v := range vs {
		if v.Failing() {
			return true
		}
	}
	return false
}
