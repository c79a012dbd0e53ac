package run

import (
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"

	"github.com/perfdag/perfdag/engine/checkpoint"
	"github.com/perfdag/perfdag/engine/fingerprint"
	"github.com/perfdag/perfdag/engine/gate"
	"github.com/perfdag/perfdag/engine/plan"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// Actions a plan decides for a node before the walk.
const (
	ActRun    = "run"
	ActReuse  = "reuse"
	ActSkip   = "skip"   // `when:` is false
	ActFail   = "fail"   // `when:` could not be evaluated: the node fails with the rule's error
	ActIgnore = "ignore" // outside --only
	ActBlock  = "block"  // acts on a pass, and a fail verdict stands on a node it reads from
)

// Decision is what will happen to a node, and why.
type Decision struct {
	Node    string   `json:"node"`
	Kind    string   `json:"kind"`
	Action  string   `json:"action"`
	Reasons []string `json:"reasons,omitempty"`
}

// decision is a Decision plus what the walk needs: the verdicts a reused node's stored result
// gives under the campaign's current gates.
type decision struct {
	Decision
	verdicts []gate.Verdict
	value    any // decoded stored result (reused nodes with gates)
}

// decide computes what the walk will do for every node, in topological order: a node is
// reused when its checkpoint succeeded, its outputs are still there, its fingerprint (with its
// data dependencies' recorded digests, and for verdict readers the verdicts they read) is
// unchanged and none of those dependencies re-runs. The walk follows these decisions exactly,
// so a dry run shows what a real run will do.
func (r *Runner) decide(records map[string]*checkpoint.Record) (map[string]*decision, error) {
	if err := r.replayFanouts(records); err != nil {
		return nil, err
	}
	if m := r.migrate(records); len(m) > 0 && r.store != nil {
		r.store.Overlay(m) // the walk reads upstream records through the store
	}
	return r.decideNodes(r.plan.Nodes, records, nil)
}

// decideNodes decides nodes (all of the plan, or one point group a fan-out node adds at run
// time on top of the decisions in base).
func (r *Runner) decideNodes(nodes []*plan.Node, records map[string]*checkpoint.Record, base map[string]*decision) (map[string]*decision, error) {
	extra := map[string]string{} // nodes that must run for a bracket's sake, and why
	for range 3 {
		out, err := r.decidePass(nodes, records, extra, base)
		if err != nil {
			return nil, err
		}
		if !r.bracketsNeedRuns(nodes, out, extra) {
			return out, nil
		}
	}
	return r.decidePass(nodes, records, extra, base)
}

func (r *Runner) decidePass(nodes []*plan.Node, records map[string]*checkpoint.Record, extra map[string]string, base map[string]*decision) (map[string]*decision, error) {
	out := make(map[string]*decision, len(nodes)+len(base))
	for id, d := range base {
		out[id] = d
	}
	selected := r.selected()
	for _, n := range nodes {
		d := &decision{Decision: Decision{Node: n.ID, Kind: n.Step.Kind.Name}}
		out[n.ID] = d
		rec := records[n.ID]
		sel := n
		if n.Parent != nil {
			sel = n.Parent // a point group goes with its fan-out node
		}
		switch {
		case n.Skip != "":
			d.Action, d.Reasons = ActSkip, []string{n.Skip}
			continue
		case n.CondErr != "":
			d.Action, d.Reasons = ActFail, []string{n.CondErr}
			continue
		case selected != nil && !selected[sel.ID]:
			d.Action, d.Reasons = ActIgnore, []string{"not selected by --only"}
			continue
		}
		if why := r.blockedBy(n, out); why != "" {
			d.Action, d.Reasons = ActBlock, []string{why}
			continue
		}
		switch {
		case r.forced(n.ID):
			d.Action, d.Reasons = ActRun, []string{"forced by --force"}
			continue
		case extra[n.ID] != "":
			d.Action, d.Reasons = ActRun, []string{extra[n.ID]}
			continue
		case rec == nil:
			d.Action, d.Reasons = ActRun, []string{"never ran"}
			continue
		case rec.Status != checkpoint.Succeeded:
			d.Action, d.Reasons = ActRun, []string{"last attempt " + rec.Status}
			continue
		}
		ups := map[string]string{}
		var rerun []string
		for _, dep := range n.Deps {
			if !dep.Data {
				continue
			}
			switch dd := out[dep.Node.ID]; dd.Action {
			case ActRun:
				rerun = append(rerun, "upstream "+dep.Node.ID+" re-runs")
			case ActSkip, ActBlock:
				ups[dep.Node.ID] = ""
			default:
				if ur := records[dep.Node.ID]; ur != nil {
					ups[dep.Node.ID] = ur.Digest
				}
			}
		}
		if len(rerun) > 0 {
			d.Action, d.Reasons = ActRun, limit(rerun, 3)
			continue
		}
		if missing := missingOutput(r.dir, rec); missing != "" {
			d.Action, d.Reasons = ActRun, []string{"output " + missing + " is missing"}
			continue
		}
		doc, err := r.doc(n, ups, r.ancestorVerdicts(n, func(id string) []gate.Verdict { return out[id].verdicts }))
		if err != nil {
			return nil, err
		}
		if doc.Sum() != rec.Fingerprint {
			d.Action, d.Reasons = ActRun, fingerprint.Explain(rec.FingerprintDoc(), doc, 3)
			continue
		}
		if why := r.childRuns(n, out); why != "" {
			d.Action, d.Reasons = ActRun, []string{why}
			continue
		}
		d.Action, d.Reasons = ActReuse, []string{"unchanged since " + rec.EndedAt.UTC().Format("2006-01-02 15:04:05Z")}
		if old := r.legacy[n.ID]; old != "" {
			d.Reasons[0] += " (recorded as " + old + " before points were keyed by load)"
		}
		if r.hasGates(n) {
			val, err := decodeResult(n.Step.Kind, rec.Result)
			if err != nil {
				d.Action, d.Reasons = ActRun, []string{"stored result unreadable: " + err.Error()}
				continue
			}
			d.value, d.verdicts = val, r.evalGates(n, val)
		}
	}
	// The first half of a bracket (a before-scrape) belongs to the window of the node it
	// brackets: when that node re-runs, the window must be measured afresh.
	for _, n := range nodes {
		if n.Phase != "before" || out[n.ID].Action != ActReuse {
			continue
		}
		if b := r.bracketed(n); b != nil && out[b.ID].Action == ActRun {
			out[n.ID].Action = ActRun
			out[n.ID].Reasons = []string{"bracketed " + b.ID + " re-runs: its window needs a fresh before-measurement"}
		}
	}
	r.precedeReruns(nodes, out)
	r.describeFanouts(nodes, out)
	return out, nil
}

// precedeReruns re-runs every reused node of a Precedes kind (settle) that a re-running node
// needs: its effect is the moment it ran, which the re-run would otherwise not follow. Nodes
// are visited in reverse topological order, so a chain of such nodes re-runs whole.
func (r *Runner) precedeReruns(nodes []*plan.Node, out map[string]*decision) {
	for i := len(nodes) - 1; i >= 0; i-- {
		m := nodes[i]
		if out[m.ID].Action != ActRun {
			continue
		}
		for _, dep := range m.Deps {
			d := out[dep.Node.ID]
			if !dep.Node.Step.Kind.Precedes || d.Action != ActReuse {
				continue
			}
			d.Action, d.Reasons = ActRun, []string{m.ID + " re-runs and must start right after it"}
			d.verdicts, d.value = nil, nil
		}
	}
}

// bracketsNeedRuns marks, in extra, the bracketed node of every second half that must run
// while its point would be reused: an after-window taken minutes later would bracket
// nothing, so the point is measured again with both halves around it. It reports whether it
// marked anything new.
func (r *Runner) bracketsNeedRuns(nodes []*plan.Node, out map[string]*decision, extra map[string]string) bool {
	changed := false
	for _, n := range nodes {
		if n.Step.Brackets == "" || n.Phase != "" || n.Cell == nil || out[n.ID].Action != ActRun {
			continue
		}
		b := r.bracketed(n)
		if b == nil || out[b.ID].Action != ActReuse || extra[b.ID] != "" {
			continue
		}
		extra[b.ID] = fmt.Sprintf("%s must run right after this point, so the point is measured again", n.ID)
		changed = true
	}
	return changed
}

// bracketed finds the node a bracketing node (either half) wraps.
func (r *Runner) bracketed(n *plan.Node) *plan.Node {
	if n.Cell == nil || n.Step.Brackets == "" {
		return nil
	}
	b, _ := r.plan.Node(plan.Name(n.Step.Brackets, "", n.Cell.ID, n.Load))
	return b
}

// missingOutput names the first recorded output that no longer exists ("" when all do): a
// node whose files were deleted is re-run, never reused.
func missingOutput(dir string, rec *checkpoint.Record) string {
	if len(rec.Outputs) == 0 {
		return ""
	}
	keys := make([]string, 0, len(rec.Outputs))
	for k := range rec.Outputs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, rel := range keys {
		if _, err := os.Stat(campaigndir.Abs(dir, rel)); err != nil {
			return rel
		}
	}
	return ""
}

func limit(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(s[:n:n], fmt.Sprintf("and %d more", len(s)-n))
}

func (r *Runner) forced(id string) bool {
	for _, g := range r.opts.Force {
		if Match(g, id) {
			return true
		}
	}
	return false
}

// Match reports whether a node id matches a glob where * is any text (slashes and brackets
// included, so run-shape* matches run-shape[aa-1k/c16]) and ? is one character.
func Match(glob, id string) bool {
	if glob == id {
		return true
	}
	return globRE(glob).MatchString(id)
}

// globRE is the anchored expression of a node glob: * is any text, ? one character.
func globRE(glob string) *regexp.Regexp {
	return regexp.MustCompile("^" + strings.NewReplacer(`\*`, ".*", `\?`, ".").Replace(regexp.QuoteMeta(glob)) + "$")
}

// selected is the set --only names plus every ancestor they need; nil selects everything.
func (r *Runner) selected() map[string]bool {
	if len(r.opts.Only) == 0 {
		return nil
	}
	sel := map[string]bool{}
	var mark func(n *plan.Node)
	mark = func(n *plan.Node) {
		if sel[n.ID] {
			return
		}
		sel[n.ID] = true
		if n.Parent != nil {
			mark(n.Parent) // a probe runs inside its search: selecting it selects the fan-out node
		}
		for _, d := range n.Deps {
			if d.Data {
				mark(d.Node)
			}
		}
		if b := r.bracketed(n); b != nil && n.Phase == "" {
			mark(b)
		}
	}
	for _, n := range r.plan.Nodes {
		for _, g := range r.opts.Only {
			if Match(g, n.ID) {
				mark(n)
			}
		}
	}
	return sel
}
