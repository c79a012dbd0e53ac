package run

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/perfdag/perfdag/engine/checkpoint"
	"github.com/perfdag/perfdag/engine/fingerprint"
	"github.com/perfdag/perfdag/engine/plan"
)

// Actions a plan decides for a node before the walk.
const (
	ActRun    = "run"
	ActReuse  = "reuse"
	ActSkip   = "skip"   // `when:` is false
	ActFail   = "fail"   // `when:` could not be evaluated: the node fails with the rule's error
	ActIgnore = "ignore" // outside --only
)

// Decision is what will happen to a node, and why.
type Decision struct {
	Node    string   `json:"node"`
	Kind    string   `json:"kind"`
	Action  string   `json:"action"`
	Reasons []string `json:"reasons,omitempty"`
}

// decide computes the reuse plan in topological order: a node is reused when its checkpoint
// succeeded, its fingerprint (with its data dependencies' recorded digests) is unchanged and
// none of those dependencies re-runs. The walk follows these decisions exactly, so a dry run
// shows what a real run will do.
func (r *Runner) decide(records map[string]*checkpoint.Record) (map[string]*Decision, error) {
	out := make(map[string]*Decision, len(r.plan.Nodes))
	selected := r.selected()
	for _, n := range r.plan.Nodes {
		d := &Decision{Node: n.ID, Kind: n.Step.Kind.Name}
		out[n.ID] = d
		rec := records[n.ID]
		switch {
		case n.Skip != "":
			d.Action, d.Reasons = ActSkip, []string{n.Skip}
			continue
		case n.CondErr != "":
			d.Action, d.Reasons = ActFail, []string{n.CondErr}
			continue
		case selected != nil && !selected[n.ID]:
			d.Action, d.Reasons = ActIgnore, []string{"not selected by --only"}
			continue
		case r.forced(n.ID):
			d.Action, d.Reasons = ActRun, []string{"forced by --force"}
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
			case ActSkip:
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
		doc, err := r.doc(n, ups)
		if err != nil {
			return nil, err
		}
		if doc.Sum() != rec.Fingerprint {
			d.Action, d.Reasons = ActRun, fingerprint.Explain(rec.FingerprintDoc(), doc, 3)
			continue
		}
		d.Action, d.Reasons = ActReuse, []string{"unchanged since " + rec.EndedAt.UTC().Format("2006-01-02 15:04:05Z")}
	}
	// The first half of a bracket (a before-scrape) belongs to the window of the node it
	// brackets: when that node re-runs, the window must be measured afresh.
	for _, n := range r.plan.Nodes {
		if n.Phase != "before" || out[n.ID].Action != ActReuse {
			continue
		}
		for _, b := range r.plan.Nodes {
			if b.Step.ID == n.Step.Brackets && b.Cell == n.Cell && b.Conc == n.Conc && out[b.ID].Action == ActRun {
				out[n.ID].Action = ActRun
				out[n.ID].Reasons = []string{"bracketed " + b.ID + " re-runs: its window needs a fresh before-measurement"}
			}
		}
	}
	return out, nil
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
	re := "^" + strings.NewReplacer(`\*`, ".*", `\?`, ".").Replace(regexp.QuoteMeta(glob)) + "$"
	ok, _ := regexp.MatchString(re, id)
	return ok
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
		for _, d := range n.Deps {
			if d.Data {
				mark(d.Node)
			}
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
