package run

import (
	"fmt"
	"strings"

	"github.com/perfdag/perfdag/engine/checkpoint"
	"github.com/perfdag/perfdag/engine/plan"
	"github.com/perfdag/perfdag/schema"
)

// replayFanouts adds to the plan the point groups each fan-out node's checkpoint says it made,
// so a dry run, plan and status show them and the walk can reuse them.
func (r *Runner) replayFanouts(records map[string]*checkpoint.Record) error {
	for _, n := range r.plan.Snapshot() {
		rec := records[n.ID]
		if !n.Fanout() || rec == nil {
			continue
		}
		for _, l := range rec.Fanout {
			if _, err := r.plan.AddPoint(n, recordedLoad(n, l)); err != nil {
				return fmt.Errorf("replay %s: %w", n.ID, err)
			}
		}
	}
	return nil
}

// childRuns says why a fan-out node cannot be reused although its own fingerprint matches:
// one of the point groups it made will run again.
func (r *Runner) childRuns(n *plan.Node, out map[string]*decision) string {
	if !n.Fanout() {
		return ""
	}
	for _, c := range r.plan.Children(n) {
		if d := out[c.ID]; d != nil && d.Action != ActReuse && d.Action != ActSkip {
			return "probe " + c.ID + " re-runs"
		}
	}
	return ""
}

// describeFanouts adds to each fan-out node's reasons what it will expand into: its bound, and
// the probes an earlier run made.
func (r *Runner) describeFanouts(nodes []*plan.Node, out map[string]*decision) {
	for _, n := range nodes {
		d := out[n.ID]
		if !n.Fanout() || d == nil || (d.Action != ActRun && d.Action != ActReuse) {
			continue
		}
		var made []string
		seen := map[schema.Load]bool{}
		for _, c := range r.plan.Children(n) {
			if !seen[c.Load] {
				seen[c.Load] = true
				made = append(made, c.Load.Key())
			}
		}
		line := fmt.Sprintf("expands at run time: ≤ %d probes", n.Bound())
		if len(made) > 0 {
			line += "; recorded probes " + strings.Join(made, " ")
		}
		d.Reasons = append(d.Reasons, line)
	}
}
