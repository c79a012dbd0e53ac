package run

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/engine/checkpoint"
	"github.com/perfdag/perfdag/engine/events"
	"github.com/perfdag/perfdag/engine/plan"
)

// maxGroups stops a fan-out that keeps asking (a Next that never settles) from running forever.
const maxGroups = 10_000

// decisionOf is a node's decision: from the walk's start, or made when its group was added.
func (w *walk) decisionOf(id string) *decision {
	if d, ok := w.dec[id]; ok {
		return d
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if d, ok := w.dyn[id]; ok {
		return d
	}
	return &decision{Decision: Decision{Node: id, Action: ActIgnore, Reasons: []string{"not decided"}}}
}

func (w *walk) fanConcsOf(id string) []int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.fanConcs[id])
}

// groupsFor is what reader sees of a fan-out node's point groups: for the fan-out node itself
// every group node's result and every group node that failed without one (Result nil, so it
// knows a probe has no evidence); for a reader, the results of the steps it needs.
func (w *walk) groupsFor(reader, fan *plan.Node) []engine.Upstream {
	w.mu.Lock()
	defer w.mu.Unlock()
	if reader == fan {
		return slices.Clone(w.fanUps[fan.ID])
	}
	var out []engine.Upstream
	for _, u := range w.fanUps[fan.ID] {
		if u.Result != nil && slices.Contains(reader.Step.Needs, u.Step) {
			out = append(out, u)
		}
	}
	return out
}

// unprobed is the outcome of a replayed group node its fan-out node did not ask for this run.
func (w *walk) unprobed(n *plan.Node) *NodeResult {
	res := &NodeResult{Node: n.ID, Kind: n.Step.Kind.Name, Outcome: OutSkipped, Reason: "not probed in this run"}
	if p := w.outcome[n.Parent.ID]; p != nil && p.Outcome != OutRan && p.Outcome != OutReused && p.Outcome != OutGateFailed {
		res.Outcome, res.Reason = p.Outcome, p.Reason
	}
	return res
}

// expand runs a fan-out node: it holds its endpoint for the whole expansion (its groups hold
// none of their own), asks the node's Fanout for concurrencies round by round, runs or reuses
// each group's nodes as ordinary nodes, and finally runs the node's own step over them. A
// reused fan-out node replays the groups its checkpoint lists.
func (w *walk) expand(n *plan.Node, res *NodeResult, reason string) {
	reused := w.decisionOf(n.ID).Action == ActReuse
	err := w.holding(n, func() error {
		if !reused {
			return w.search(n)
		}
		for _, c := range w.records[n.ID].Fanout {
			if _, err := w.group(n, c); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil && reused {
		w.reuse(n, res, reason)
		return
	}
	if err != nil {
		if w.ctx.Err() != nil {
			res.Outcome, res.Reason = OutInterrupted, "interrupted by a signal"
			w.emit(events.Event{Type: events.NodeEnd, Node: n.ID, Kind: res.Kind, Status: res.Outcome, Reason: res.Reason})
			w.finish(n, res)
			return
		}
		w.failFanout(n, res, err)
		return
	}
	w.execute(n, res, reason)
}

// holding runs fn holding n's endpoint, so its groups measure back to back like listed points.
func (w *walk) holding(n *plan.Node, fn func() error) error {
	if n.Endpoint != "" {
		mu := w.endpointLock(n.Endpoint)
		mu.Lock()
		defer mu.Unlock()
	}
	return fn()
}

// search asks the fan-out for groups until it has its answer.
func (w *walk) search(n *plan.Node) error {
	task, _, err := w.buildTask(n)
	if err != nil {
		return err
	}
	fo, err := n.Step.Kind.Fanout.Start(task)
	if err != nil {
		return err
	}
	free := w.free(n)
	var probes []engine.Probe
	made := map[int]bool{}
	for {
		if err := w.ctx.Err(); err != nil {
			return err
		}
		next, err := fo.Next(slices.Clone(probes), free)
		if err != nil {
			return err
		}
		if len(next) == 0 {
			return nil
		}
		for _, c := range next {
			if made[c] || c <= 0 {
				return fmt.Errorf("fan-out asked for concurrency %d twice or out of range", c)
			}
			if len(made) >= maxGroups {
				return fmt.Errorf("fan-out made %d point groups without an answer", maxGroups)
			}
			made[c] = true
			p, err := w.group(n, c)
			if err != nil {
				return err
			}
			if err := w.ctx.Err(); err != nil {
				return err
			}
			probes = append(probes, p)
		}
	}
}

// free lists the concurrencies of replayed groups that would be reused whole, and of those
// --force names: the user asked for that probe, so the search takes it like a free one
// (before any new midpoint) rather than passing it by.
func (w *walk) free(n *plan.Node) []int {
	byConc, forced := map[int]bool{}, map[int]bool{}
	for _, c := range w.r.plan.Children(n) {
		ok, seen := byConc[c.Conc]
		reused := w.decisionOf(c.ID).Action == ActReuse
		byConc[c.Conc] = reused && (ok || !seen)
		forced[c.Conc] = forced[c.Conc] || w.r.forced(c.ID)
	}
	var out []int
	for c, ok := range byConc {
		if ok || forced[c] {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return out
}

// group adds (or finds) the point group of n at concurrency c, decides its new nodes, runs
// them in order and returns what they produced.
func (w *walk) group(n *plan.Node, c int) (engine.Probe, error) {
	nodes, err := w.r.plan.AddPoint(n, c)
	if err != nil {
		return engine.Probe{}, err
	}
	var fresh []*plan.Node
	for _, m := range nodes {
		if _, ok := w.dec[m.ID]; !ok {
			fresh = append(fresh, m)
		}
	}
	if len(fresh) > 0 {
		base := w.decisions()
		out, err := w.r.decideNodes(fresh, w.records, base)
		if err != nil {
			return engine.Probe{}, err
		}
		w.mu.Lock()
		for _, m := range fresh {
			w.dyn[m.ID] = out[m.ID]
		}
		w.mu.Unlock()
		w.emit(events.Event{Type: events.Expand, Node: n.ID, Kind: n.Step.Kind.Name, Total: len(fresh), Message: fmt.Sprintf("c%d", c)})
	}
	probe := engine.Probe{Conc: c, Reused: true}
	var ups []engine.Upstream
	for _, m := range nodes {
		if err := w.ctx.Err(); err != nil {
			return probe, err
		}
		w.dispatch(m)
		r := w.result(m.ID)
		if r == nil {
			return probe, fmt.Errorf("%s left no outcome", m.ID)
		}
		probe.Reused = probe.Reused && r.Outcome == OutReused
		if (r.Outcome == OutFailed || r.Outcome == OutBlocked) && probe.Failed == "" {
			probe.Failed = m.ID + ": " + r.Reason
		}
		if r.Outcome == OutInterrupted || r.Outcome == OutPending {
			return probe, errors.New("interrupted")
		}
		if w.value(m.ID) == nil {
			if r.Outcome == OutFailed || r.Outcome == OutBlocked {
				// no result, but the fan-out must see that its probe has no evidence, and why
				ups = append(ups, engine.Upstream{Node: m.ID, Step: m.Step.ID, Kind: m.Step.Kind.Name, Cell: cellID(m), Conc: c, Failed: r.Reason})
			}
			continue
		}
		if m.Phase != "" {
			continue
		}
		rec, err := w.r.store.Load(m.ID)
		if err != nil || rec == nil {
			return probe, fmt.Errorf("checkpoint of %s: %v", m.ID, err)
		}
		ups = append(ups, engine.Upstream{Node: m.ID, Step: m.Step.ID, Kind: m.Step.Kind.Name, Cell: cellID(m),
			Conc: c, Result: w.value(m.ID), Outputs: rec.Outputs, Failed: map[bool]string{true: rec.Error}[rec.Error != ""]})
	}
	probe.Upstream = ups
	w.mu.Lock()
	w.fanUps[n.ID] = append(w.fanUps[n.ID], ups...)
	w.fanConcs[n.ID] = append(w.fanConcs[n.ID], c)
	w.mu.Unlock()
	return probe, nil
}

// decisions is every decision made so far, for deciding a new group on top of them.
func (w *walk) decisions() map[string]*decision {
	out := make(map[string]*decision, len(w.dec))
	for id, d := range w.dec {
		out[id] = d
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for id, d := range w.dyn {
		out[id] = d
	}
	return out
}

// failFanout records a fan-out node that could not finish its expansion.
func (w *walk) failFanout(n *plan.Node, res *NodeResult, err error) {
	res.Outcome, res.Reason = OutFailed, strings.TrimSpace(err.Error())
	w.saveOutcome(n, checkpoint.Failed, res.Reason)
	w.emit(events.Event{Type: events.NodeEnd, Node: n.ID, Kind: res.Kind, Status: res.Outcome, Reason: res.Reason})
	w.finish(n, res)
}
