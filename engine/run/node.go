package run

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
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
	d := w.dec[n.ID]
	res := &NodeResult{Node: n.ID, Kind: n.Step.Kind.Name}
	switch d.Action {
	case ActSkip, ActIgnore:
		res.Outcome, res.Reason = map[string]string{ActSkip: OutSkipped, ActIgnore: OutIgnored}[d.Action], strings.Join(d.Reasons, "; ")
		w.emit(events.Event{Type: events.NodeSkipped, Node: n.ID, Kind: res.Kind, Reason: res.Reason})
		w.finish(n, res)
		return
	case ActFail: // never started (like blocked), but failed: the campaign fails with the rule's error
		res.Outcome, res.Reason = OutFailed, strings.Join(d.Reasons, "; ")
		w.emit(events.Event{Type: events.NodeSkipped, Node: n.ID, Kind: res.Kind, Status: res.Outcome, Reason: res.Reason})
		w.finish(n, res)
		return
	}
	if w.ctx.Err() != nil {
		res.Outcome = OutPending // interrupted before it could start
		w.finish(n, res)
		return
	}
	for _, dep := range n.Deps {
		up := w.result(dep.Node.ID)
		if dep.Data && up != nil && blocking(up.Outcome) && !(n.Step.Kind.Tolerant && failedOnly(up.Outcome)) {
			res.Outcome, res.Reason = OutBlocked, fmt.Sprintf("upstream %s %s", dep.Node.ID, up.Outcome)
			w.emit(events.Event{Type: events.NodeSkipped, Node: n.ID, Kind: res.Kind, Status: OutBlocked, Reason: res.Reason})
			w.finish(n, res)
			return
		}
	}
	if d.Action == ActReuse {
		w.reuse(n, res, strings.Join(d.Reasons, "; "))
		return
	}
	go w.execute(n, res, strings.Join(d.Reasons, "; "))
}

// failedOnly is what a tolerant kind runs past: failures, not refusals.
func failedOnly(outcome string) bool {
	return outcome == OutFailed || outcome == OutBlocked
}

func blocking(outcome string) bool {
	switch outcome {
	case OutFailed, OutGateFailed, OutBlocked, OutInterrupted, OutPending:
		return true
	}
	return false
}

// reuse takes a node's checkpoint as its result and re-evaluates its gates (rules may have
// been edited; results have not).
func (w *walk) reuse(n *plan.Node, res *NodeResult, reason string) {
	rec := w.records[n.ID]
	val, err := decodeResult(n.Step.Kind, rec.Result)
	if err != nil {
		res.Outcome, res.Reason = OutFailed, fmt.Sprintf("stored result unreadable: %v", err)
		w.finish(n, res)
		return
	}
	w.mu.Lock()
	w.values[n.ID] = val
	w.mu.Unlock()
	res.Outcome, res.Reason, res.Summary = OutReused, reason, rec.Summary
	res.Verdicts = w.gates(n, val)
	if refused(res.Verdicts) {
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

func (w *walk) run(n *plan.Node, res *NodeResult, reason string) {
	k := n.Step.Kind
	prev := w.records[n.ID]
	rec := &checkpoint.Record{Node: n.ID, Step: n.Step.ID, Kind: k.Name, Status: checkpoint.Running,
		StartedAt: time.Now().UTC(), Attempt: 1, RunID: w.r.opts.RunID}
	if prev != nil {
		rec.Attempt = prev.Attempt + 1
	}
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
		doc, err = w.r.doc(n, ups)
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
		rec.Status, rec.Error = checkpoint.Failed, err.Error()
		res.Outcome, res.Reason = OutGateFailed, err.Error()
	case err != nil:
		rec.Status, rec.Error = checkpoint.Failed, err.Error()
		res.Outcome, res.Reason = OutFailed, err.Error()
	default:
		if err := w.record(n, rec, out); err != nil {
			rec.Status, rec.Error = checkpoint.Failed, err.Error()
			res.Outcome, res.Reason = OutFailed, err.Error()
			break
		}
		res.Outcome, res.Summary = OutRan, out.Summary
		res.Verdicts = rec.Gates
		if refused(rec.Gates) {
			res.Outcome = OutGateFailed
		}
	}
	if err := w.r.store.Save(rec); err != nil && res.Outcome == OutRan {
		res.Outcome, res.Reason = OutFailed, err.Error()
	}
	w.emit(events.Event{Type: events.NodeEnd, Node: n.ID, Kind: k.Name, Status: res.Outcome,
		Reason: res.Reason, Message: res.Summary, Seconds: res.Seconds})
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

// buildTask adds upstream results and the node's log to its task.
func (w *walk) buildTask(n *plan.Node) (*engine.Task, map[string]string, error) {
	t := w.r.task(n)
	t.Env = w.env
	t.Log = w.r.opts.Log
	t.Progress = func(line string) {
		w.emit(events.Event{Type: events.Progress, Node: n.ID, Message: line})
	}
	ups := map[string]string{}
	for _, d := range n.Deps {
		if !d.Data {
			continue
		}
		up := w.result(d.Node.ID)
		if up != nil && (up.Outcome == OutSkipped || failedOnly(up.Outcome)) {
			ups[d.Node.ID] = "" // skipped, or failed under a tolerant kind: no result to read
			continue
		}
		rec, err := w.r.store.Load(d.Node.ID)
		if err != nil {
			return nil, nil, err
		}
		if rec == nil {
			return nil, nil, fmt.Errorf("upstream %s has no checkpoint", d.Node.ID)
		}
		ups[d.Node.ID] = rec.Digest
		w.mu.Lock()
		val := w.values[d.Node.ID]
		w.mu.Unlock()
		t.Upstream = append(t.Upstream, engine.Upstream{Node: d.Node.ID, Step: d.Node.Step.ID,
			Kind: d.Node.Step.Kind.Name, Cell: cellID(d.Node), Conc: d.Node.Conc, Result: val})
	}
	return t, ups, nil
}

func cellID(n *plan.Node) string {
	if n.Cell == nil {
		return ""
	}
	return n.Cell.ID
}

// record completes a succeeded node's checkpoint: result, output digests, gates.
func (w *walk) record(n *plan.Node, rec *checkpoint.Record, out engine.Result) error {
	raw, err := fingerprint.Canonical(out.Value)
	if err != nil {
		return err
	}
	rec.Result = raw
	rec.Outputs = map[string]string{}
	for _, rel := range out.Outputs {
		sum, err := digestFile(w.r.dir, rel)
		if err != nil {
			return fmt.Errorf("output %s: %w", rel, err)
		}
		rec.Outputs[filepath.ToSlash(rel)] = sum
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
	rec.Gates = w.gates(n, val)
	return nil
}

// digestFile hashes an output, refusing paths that leave the campaign directory.
func digestFile(dir, rel string) (string, error) {
	clean := filepath.Clean(rel)
	if filepath.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return "", errors.New("outputs must be paths inside the campaign directory")
	}
	f, err := os.Open(filepath.Join(dir, clean))
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// gates evaluates every gate guarding this node's step.
func (w *walk) gates(n *plan.Node, val any) []gate.Verdict {
	var out []gate.Verdict
	spec := w.r.plan.Campaign.Spec
	for _, g := range w.r.plan.Campaign.Gates {
		prog, ok := g.Program[n.Step.ID]
		if !ok || n.Phase != "" {
			continue
		}
		v := gate.Verdict{Gate: g.ID, Node: n.ID, Severity: g.Severity, Rule: g.Rule, Message: g.Message}
		passed, err := gate.Eval(prog, gate.Env(gate.Context(spec, n.Cell, n.Conc, n.Step.ID), val))
		v.Passed = passed && err == nil
		if err != nil {
			v.Error = err.Error()
		}
		out = append(out, v)
		if !v.Passed {
			w.emit(events.Event{Type: events.Gate, Node: n.ID, Gate: g.ID, Severity: g.Severity,
				Status: "refused", Message: firstNonEmpty(v.Error, g.Message, g.Rule+" is false")})
		}
	}
	return out
}

func refused(vs []gate.Verdict) bool {
	for _, v := range vs {
		if !v.Passed && v.Severity == gate.Fail {
			return true
		}
	}
	return false
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
