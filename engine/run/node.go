package run

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/engine/checkpoint"
	"github.com/perfdag/perfdag/engine/events"
	"github.com/perfdag/perfdag/engine/fingerprint"
	"github.com/perfdag/perfdag/engine/gate"
	"github.com/perfdag/perfdag/engine/plan"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// setup starts run-wide resources only when some node will actually run.
func (w *walk) setup() error {
	reg := w.r.opts.Registry
	needed := false
	for _, d := range w.dec {
		needed = needed || d.Action == ActRun
	}
	if reg == nil || reg.Setup == nil || !needed {
		return nil
	}
	env, cleanup, err := reg.Setup(w.ctx, w.r.plan.Campaign.Spec)
	if err != nil {
		return fmt.Errorf("set up run: %w", err)
	}
	w.env, w.cleanup = env, cleanup
	return nil
}

func (w *walk) teardown() {
	if w.cleanup != nil {
		w.cleanup()
	}
}

// dispatch settles a ready node: skipped, blocked, reused, or started on a worker.
func (w *walk) dispatch(n *plan.Node) {
	d := w.decisionOf(n.ID)
	res := &NodeResult{Node: n.ID, Kind: n.Step.Kind.Name}
	switch d.Action {
	case ActSkip, ActIgnore:
		res.Outcome, res.Reason = map[string]string{ActSkip: OutSkipped, ActIgnore: OutIgnored}[d.Action], strings.Join(d.Reasons, "; ")
		w.emit(events.Event{Type: events.NodeSkipped, Node: n.ID, Kind: res.Kind, Reason: res.Reason})
		w.finish(n, res)
		return
	case ActFail: // never started (like blocked), but failed: the campaign fails with the rule's error
		res.Outcome, res.Reason = OutFailed, strings.Join(d.Reasons, "; ")
		w.saveOutcome(n, checkpoint.Failed, res.Reason)
		w.emit(events.Event{Type: events.NodeSkipped, Node: n.ID, Kind: res.Kind, Status: res.Outcome, Reason: res.Reason})
		w.finish(n, res)
		return
	}
	if w.ctx.Err() != nil {
		res.Outcome = OutPending // interrupted before it could start
		w.finish(n, res)
		return
	}
	if why := w.blocked(n); why != "" {
		w.block(n, res, why)
		return
	}
	if why := w.unbracketed(n); why != "" {
		res.Outcome, res.Reason = OutSkipped, why
		w.saveOutcome(n, checkpoint.Skipped, why)
		w.emit(events.Event{Type: events.NodeSkipped, Node: n.ID, Kind: res.Kind, Reason: why})
		w.finish(n, res)
		return
	}
	if d.Action == ActBlock {
		w.block(n, res, strings.Join(d.Reasons, "; "))
		return
	}
	if n.Fanout() {
		go w.expand(n, res, strings.Join(d.Reasons, "; "))
		return
	}
	if d.Action == ActReuse {
		w.reuse(n, res, strings.Join(d.Reasons, "; "))
		return
	}
	if n.Parent != nil {
		w.execute(n, res, strings.Join(d.Reasons, "; ")) // its fan-out node waits for it
		return
	}
	go w.execute(n, res, strings.Join(d.Reasons, "; "))
}

// blocked says why a node cannot run: a data dependency that failed (tolerant kinds run past
// failures, seeing only what succeeded), or — for kinds that act on a pass — a fail verdict on
// a node it reads from. A fail verdict never blocks analysis or the report.
func (w *walk) blocked(n *plan.Node) string {
	for _, dep := range n.Deps {
		up := w.result(dep.Node.ID)
		if !dep.Data || up == nil {
			continue
		}
		outcome := up.Outcome
		if outcome == OutGateFailed && w.value(dep.Node.ID) == nil {
			outcome = OutFailed // it refused (strict publish): there is no result to read
		}
		switch outcome {
		case OutInterrupted, OutPending:
			return fmt.Sprintf("upstream %s %s", dep.Node.ID, up.Outcome)
		case OutFailed, OutBlocked:
			if !n.Step.Kind.Tolerant {
				return fmt.Sprintf("upstream %s %s", dep.Node.ID, up.Outcome)
			}
		}
	}
	if w.r.actsOnPass(n) {
		return w.r.failingAmong(n, w.verdictsOf)
	}
	return ""
}

// unbracketed says why a bracket's second half must not run: the point it closes was not
// measured in this run, so a window closed now would bracket nothing.
func (w *walk) unbracketed(n *plan.Node) string {
	if n.Phase != "" || n.Step.Brackets == "" {
		return ""
	}
	b := w.r.bracketed(n)
	if b == nil {
		return ""
	}
	if up := w.result(b.ID); up != nil && (up.Outcome == OutRan || up.Outcome == OutGateFailed && w.decisionOf(b.ID).Action == ActRun) {
		return ""
	}
	if w.decisionOf(n.ID).Action == ActReuse {
		return "" // both halves and the point are reused together
	}
	return fmt.Sprintf("%s was not measured in this run: an after-window taken now would bracket nothing", b.ID)
}

// block records a node that could not run, so status and readers see the latest run's truth.
func (w *walk) block(n *plan.Node, res *NodeResult, why string) {
	res.Outcome, res.Reason = OutBlocked, why
	w.saveOutcome(n, checkpoint.Blocked, why)
	w.emit(events.Event{Type: events.NodeSkipped, Node: n.ID, Kind: res.Kind, Status: OutBlocked, Reason: why})
	w.finish(n, res)
}

// saveOutcome records a node that did not run in this walk (blocked, or a skipped second
// half), so status shows the latest run's truth and a stale success never outlives it.
func (w *walk) saveOutcome(n *plan.Node, status, why string) {
	prev := w.records[n.ID]
	if prev != nil && prev.Status == status && prev.Error == why {
		return
	}
	now := time.Now().UTC()
	rec := &checkpoint.Record{Node: n.ID, Step: n.Step.ID, Kind: n.Step.Kind.Name, Status: status, Error: why,
		StartedAt: now, EndedAt: now, RunID: w.r.opts.RunID}
	if prev != nil {
		rec.Attempt = prev.Attempt
		w.mu.Lock()
		for rel := range prev.Outputs {
			delete(w.outputs, rel)
		}
		w.mu.Unlock()
	}
	_ = w.r.store.Save(rec)
}

// reuse takes a node's checkpoint as its result and records the verdicts the current gates
// give it: rules may have been edited, results have not, and a verdict is evidence of this run.
func (w *walk) reuse(n *plan.Node, res *NodeResult, reason string) {
	rec := w.records[n.ID]
	d := w.decisionOf(n.ID)
	val := d.value
	if val == nil {
		var err error
		if val, err = decodeResult(n.Step.Kind, rec.Result); err != nil {
			res.Outcome, res.Reason = OutFailed, fmt.Sprintf("stored result unreadable: %v", err)
			w.finish(n, res)
			return
		}
	}
	w.mu.Lock()
	w.values[n.ID] = val
	w.verdicts[n.ID] = d.verdicts
	// Its files are readable in this run from here, as a run publishes them: a point group a
	// fan-out adds at run time is decided only then, so no list made before the walk has them.
	for rel, sum := range rec.Outputs {
		w.outputs[rel] = sum
	}
	w.mu.Unlock()
	res.Outcome, res.Reason, res.Summary = OutReused, reason, rec.Summary
	res.Verdicts = d.verdicts
	if !sameVerdicts(rec.Gates, d.verdicts) {
		updated := *rec
		updated.Gates = d.verdicts
		if err := w.r.store.Save(&updated); err != nil {
			res.Outcome, res.Reason = OutFailed, "record verdicts: "+err.Error()
			w.finish(n, res)
			return
		}
	}
	w.emitVerdicts(n, d.verdicts)
	if refused(d.verdicts) {
		res.Outcome = OutGateFailed
	}
	w.emit(events.Event{Type: events.NodeReused, Node: n.ID, Kind: res.Kind, Reason: reason})
	w.finish(n, res)
}

// execute runs a node's step: endpoint lock, then a worker slot, only around the real work.
func (w *walk) execute(n *plan.Node, res *NodeResult, reason string) {
	if n.Endpoint != "" {
		mu := w.endpointLock(n.Endpoint)
		mu.Lock()
		defer mu.Unlock()
	}
	select {
	case w.slots <- struct{}{}:
	case <-w.ctx.Done():
		res.Outcome = OutPending
		w.finish(n, res)
		return
	}
	defer func() { <-w.slots }()
	w.run(n, res, reason)
	w.finish(n, res)
}

func (w *walk) endpointLock(name string) *sync.Mutex {
	w.mu.Lock()
	defer w.mu.Unlock()
	mu, ok := w.locks[name]
	if !ok {
		mu = new(sync.Mutex)
		w.locks[name] = mu
	}
	return mu
}

// runningRecord is n's record from the moment it starts (or a fan-out node starts expanding):
// the next attempt, listing fanout, its previous outputs retired from this run's readable set.
func (w *walk) runningRecord(n *plan.Node, fanout []schema.Load) *checkpoint.Record {
	prev := w.records[n.ID]
	rec := &checkpoint.Record{Node: n.ID, Step: n.Step.ID, Kind: n.Step.Kind.Name, Status: checkpoint.Running,
		StartedAt: time.Now().UTC(), Attempt: 1, RunID: w.r.opts.RunID, Fanout: fanout}
	if prev != nil {
		rec.Attempt = prev.Attempt + 1
		w.mu.Lock()
		for rel := range prev.Outputs {
			delete(w.outputs, rel) // being rewritten: no reader may take the old file for it
		}
		w.mu.Unlock()
	}
	return rec
}

func (w *walk) run(n *plan.Node, res *NodeResult, reason string) {
	k := n.Step.Kind
	rec := w.runningRecord(n, w.fanLoadsOf(n.ID))
	// From here until the final record lands, the node is "running": a crash leaves it
	// unreusable, so half-written outputs are never trusted.
	if err := w.r.store.Save(rec); err != nil {
		res.Outcome, res.Reason = OutFailed, err.Error()
		return
	}
	w.emit(events.Event{Type: events.NodeStart, Node: n.ID, Kind: k.Name, Reason: reason})
	task, ups, err := w.buildTask(n)
	if err == nil {
		var doc fingerprint.Doc
		doc, err = w.r.doc(n, ups, task.Verdicts)
		rec.SetDoc(doc)
	}
	var out engine.Result
	if err == nil {
		out, err = safeRun(w.ctx, k, task)
	}
	rec.EndedAt = time.Now().UTC()
	res.Seconds = rec.EndedAt.Sub(rec.StartedAt).Seconds()
	switch {
	case w.ctx.Err() != nil:
		rec.Status, rec.Error = checkpoint.Interrupted, "interrupted by a signal"
		res.Outcome, res.Reason = OutInterrupted, rec.Error
	case errors.As(err, new(*engine.Refusal)):
		rec.Status, rec.Error, rec.Refused = checkpoint.Failed, err.Error(), true
		res.Outcome, res.Reason = OutGateFailed, err.Error()
	case err != nil:
		// A step that failed but still produced a result (a point whose every request
		// failed) keeps it as evidence: tolerant readers see it, nothing reuses it.
		if out.Value != nil && w.record(n, rec, out) == nil {
			w.publish(n, rec)
		}
		rec.Status, rec.Error = checkpoint.Failed, err.Error()
		res.Outcome, res.Reason = OutFailed, err.Error()
	default:
		if err := w.record(n, rec, out); err != nil {
			rec.Status, rec.Error = checkpoint.Failed, err.Error()
			res.Outcome, res.Reason = OutFailed, err.Error()
			break
		}
		res.Outcome, res.Summary = OutRan, out.Summary
	}
	// The result is saved before any gate reads it: a rule that errors or exhausts its budget
	// costs a verdict, never the measurement.
	if err := w.r.store.Save(rec); err != nil && res.Outcome == OutRan {
		res.Outcome, res.Reason = OutFailed, err.Error()
	}
	if res.Outcome == OutRan {
		w.publish(n, rec)
		verdicts := w.r.evalGates(n, w.value(n.ID))
		if len(verdicts) > 0 {
			rec.Gates = verdicts
			if err := w.r.store.Save(rec); err != nil {
				res.Outcome, res.Reason = OutFailed, "record verdicts: "+err.Error()
			}
		}
		w.mu.Lock()
		w.verdicts[n.ID] = verdicts
		w.mu.Unlock()
		res.Verdicts = verdicts
		w.emitVerdicts(n, verdicts)
		if res.Outcome == OutRan && refused(verdicts) {
			res.Outcome = OutGateFailed
		}
	}
	w.emit(events.Event{Type: events.NodeEnd, Node: n.ID, Kind: k.Name, Status: res.Outcome,
		Reason: res.Reason, Message: res.Summary, Seconds: res.Seconds})
}

func (w *walk) value(id string) any {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.values[id]
}

// publish makes a succeeded node's outputs readable by its dependents.
func (w *walk) publish(n *plan.Node, rec *checkpoint.Record) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for rel, sum := range rec.Outputs {
		w.outputs[rel] = sum
	}
}

func (w *walk) emitVerdicts(n *plan.Node, vs []gate.Verdict) {
	for _, v := range vs {
		if v.Passed {
			continue
		}
		status := "failed"
		if v.Severity == gate.Warn {
			status = "warned"
		}
		w.emit(events.Event{Type: events.Gate, Node: n.ID, Gate: v.Gate, Severity: v.Severity, Status: status, Message: describe(v)})
	}
}

// safeRun turns a panicking step into a failed node with its name, not a dead campaign.
func safeRun(ctx context.Context, k engine.Kind, t *engine.Task) (out engine.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("step %s panicked: %v", k.Name, p)
		}
	}()
	return k.Run(ctx, t)
}

// buildTask adds upstream results, the verdicts a reader reads, the file reader and the
// node's log to its task.
func (w *walk) buildTask(n *plan.Node) (*engine.Task, map[string]string, error) {
	t := w.r.task(n)
	t.Env = w.env
	t.Log = w.r.opts.Log
	t.Progress = func(line string) {
		w.emit(events.Event{Type: events.Progress, Node: n.ID, Message: line})
	}
	t.Files = campaigndir.Reader{Dir: w.r.dir, Digest: w.digest}
	t.Verdicts = w.r.ancestorVerdicts(n, w.verdictsOf)
	ups := map[string]string{}
	for _, d := range n.Deps {
		if !d.Data {
			continue
		}
		up := w.result(d.Node.ID)
		val := w.value(d.Node.ID)
		if up != nil && (up.Outcome == OutSkipped || up.Outcome == OutBlocked || val == nil && (up.Outcome == OutFailed || up.Outcome == OutGateFailed)) {
			ups[d.Node.ID] = "" // skipped, or failed without a result under a tolerant kind
			continue
		}
		rec, err := w.r.store.Load(d.Node.ID)
		if err != nil {
			return nil, nil, err
		}
		failed := ""
		switch {
		case rec == nil:
			return nil, nil, fmt.Errorf("upstream %s has no checkpoint", d.Node.ID)
		case rec.Status == checkpoint.Failed:
			failed = rec.Error // a tolerant reader sees the evidence of a failed step
		case rec.Status != checkpoint.Succeeded:
			return nil, nil, fmt.Errorf("upstream %s has no successful checkpoint", d.Node.ID)
		}
		ups[d.Node.ID] = rec.Digest
		t.Upstream = append(t.Upstream, engine.Upstream{Node: d.Node.ID, Step: d.Node.Step.ID,
			Kind: d.Node.Step.Kind.Name, Cell: cellID(d.Node), Load: d.Node.Load, Result: val, Outputs: rec.Outputs, Failed: failed})
		if d.Node.Fanout() {
			t.Upstream = append(t.Upstream, w.groupsFor(n, d.Node)...)
		}
	}
	if n.Fanout() {
		t.Upstream = append(t.Upstream, w.groupsFor(n, n)...)
	}
	return t, ups, nil
}

func cellID(n *plan.Node) string {
	if n.Cell == nil {
		return ""
	}
	return n.Cell.ID
}

// record completes a succeeded node's checkpoint: result and output digests.
func (w *walk) record(n *plan.Node, rec *checkpoint.Record, out engine.Result) error {
	raw, err := fingerprint.Canonical(out.Value)
	if err != nil {
		return err
	}
	rec.Result = raw
	rec.Outputs = map[string]string{}
	for _, rel := range out.Outputs {
		rel = filepath.ToSlash(rel)
		sum, err := campaigndir.DigestFile(w.r.dir, rel)
		if err != nil {
			return fmt.Errorf("output %s: %w", rel, err)
		}
		rec.Outputs[rel] = sum
	}
	rec.Digest = fingerprint.Digest(raw, rec.Outputs)
	rec.Summary = out.Summary
	rec.Status = checkpoint.Succeeded
	val, err := decodeResult(n.Step.Kind, raw) // the same types a resume will see
	if err != nil {
		return fmt.Errorf("result of %s does not round-trip: %w", n.ID, err)
	}
	w.mu.Lock()
	w.values[n.ID] = val
	w.mu.Unlock()
	return nil
}
