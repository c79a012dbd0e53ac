package run

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/engine/checkpoint"
	"github.com/perfdag/perfdag/engine/events"
	"github.com/perfdag/perfdag/engine/plan"
	"github.com/perfdag/perfdag/schema"
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

func (w *walk) fanLoadsOf(id string) []schema.Load {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.fanLoads[id])
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
// none of their own), asks the node's Fanout for points round by round, runs or reuses
// each group's nodes as ordinary nodes, and finally runs the node's own step over them. A
// reused fan-out node replays the groups its checkpoint lists.
func (w *walk) expand(n *plan.Node, res *NodeResult, reason string) {
	reused := w.decisionOf(n.ID).Action == ActReuse
	var jr *expansion
	err := w.holding(n, func() error {
		if !reused {
			jr = w.startExpansion(n)
			return w.search(n, jr)
		}
		for _, l := range w.records[n.ID].Fanout {
			if _, err := w.group(n, recordedLoad(n, l)); err != nil {
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
			jr.end(checkpoint.Interrupted, res.Reason)
			w.emit(events.Event{Type: events.NodeEnd, Node: n.ID, Kind: res.Kind, Status: res.Outcome, Reason: res.Reason})
			w.finish(n, res)
			return
		}
		w.failFanout(n, res, err, jr)
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

// search asks the fan-out for groups until it has its answer, journalling each point it asks
// for in jr before measuring it.
func (w *walk) search(n *plan.Node, jr *expansion) error {
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
	made := map[schema.Load]bool{}
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
		for _, l := range next {
			if made[l] || l.IsZero() || l.InFlight() < 0 {
				return fmt.Errorf("fan-out asked for point %q twice or out of range", l.Key())
			}
			if len(made) >= maxGroups {
				return fmt.Errorf("fan-out made %d point groups without an answer", maxGroups)
			}
			made[l] = true
			jr.asked(l)
			p, err := w.group(n, l)
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

// free lists the points of replayed groups that would be reused whole, and of those --force
// names: the user asked for that probe, so the search takes it like a free one (before any
// new midpoint) rather than passing it by. They come in key order (schema.Load.Compare).
func (w *walk) free(n *plan.Node) []schema.Load {
	byLoad, forced := map[schema.Load]bool{}, map[schema.Load]bool{}
	for _, c := range w.r.plan.Children(n) {
		ok, seen := byLoad[c.Load]
		reused := w.decisionOf(c.ID).Action == ActReuse
		byLoad[c.Load] = reused && (ok || !seen)
		forced[c.Load] = forced[c.Load] || w.r.forced(c.ID)
	}
	var out []schema.Load
	for l, ok := range byLoad {
		if ok || forced[l] {
			out = append(out, l)
		}
	}
	slices.SortFunc(out, schema.Load.Compare)
	return out
}

// recordedLoad is a point a fan-out checkpoint lists, as the cell means it: a bare concurrency
// recorded before points were keyed by load stands for the cell's LegacyLoad.
func recordedLoad(n *plan.Node, l schema.Load) schema.Load {
	if !l.IsRate() && n.Cell != nil {
		return n.Cell.LegacyLoad(l.Concurrency)
	}
	return l
}

// group adds (or finds) the point group of n at load l, decides its new nodes, runs them in
// order and returns what they produced.
func (w *walk) group(n *plan.Node, l schema.Load) (engine.Probe, error) {
	nodes, err := w.r.plan.AddPoint(n, l)
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
		w.emit(events.Event{Type: events.Expand, Node: n.ID, Kind: n.Step.Kind.Name, Total: len(fresh), Message: l.Key()})
	}
	probe := engine.Probe{Load: l, Reused: true}
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
				ups = append(ups, engine.Upstream{Node: m.ID, Step: m.Step.ID, Kind: m.Step.Kind.Name, Cell: cellID(m), Load: l, Failed: r.Reason})
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
			Load: l, Result: w.value(m.ID), Outputs: rec.Outputs, Failed: map[bool]string{true: rec.Error}[rec.Error != ""]})
	}
	probe.Upstream = ups
	w.mu.Lock()
	w.fanUps[n.ID] = append(w.fanUps[n.ID], ups...)
	w.fanLoads[n.ID] = append(w.fanLoads[n.ID], l)
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

// failFanout records a fan-out node that could not finish its expansion (with the points it
// asked for, when jr journalled them).
func (w *walk) failFanout(n *plan.Node, res *NodeResult, err error, jr *expansion) {
	res.Outcome, res.Reason = OutFailed, strings.TrimSpace(err.Error())
	if jr != nil {
		jr.end(checkpoint.Failed, res.Reason)
	} else {
		w.saveOutcome(n, checkpoint.Failed, res.Reason)
	}
	w.emit(events.Event{Type: events.NodeEnd, Node: n.ID, Kind: res.Kind, Status: res.Outcome, Reason: res.Reason})
	w.finish(n, res)
}

// expansion journals a fan-out node while it expands: running, with the points it has asked
// for so far, so a campaign stopped or crashed mid-search still lists its probes (status
// shows them, and resume replays them as it does a failed search's); interrupted or failed,
// with them, when the expansion ends so. Before, the node had no record until its expansion
// ended, and a stopped search's measured probes were invisible to status.
type expansion struct {
	w   *walk
	rec *checkpoint.Record
}

// startExpansion journals n as running (a crash from here leaves it unreusable, as a running
// node's record does), as run starts a node.
func (w *walk) startExpansion(n *plan.Node) *expansion {
	rec := w.runningRecord(n, nil)
	_ = w.r.store.Save(rec)
	return &expansion{w: w, rec: rec}
}

// asked journals point l as asked for, before its group runs.
func (e *expansion) asked(l schema.Load) {
	if e == nil {
		return
	}
	e.rec.Fanout = append(e.rec.Fanout, l)
	_ = e.w.r.store.Save(e.rec)
}

// end journals how the expansion ended, with every point it asked for.
func (e *expansion) end(status, why string) {
	if e == nil {
		return
	}
	e.rec.Status, e.rec.Error, e.rec.EndedAt = status, why, time.Now().UTC()
	_ = e.w.r.store.Save(e.rec)
}
