package run

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/engine/checkpoint"
	"github.com/perfdag/perfdag/engine/enginetest"
)

// dryRun returns the predicted action of every node.
func (f *fixture) dryRun(src string, opts Options) map[string]*Decision {
	f.t.Helper()
	opts.Registry = f.reg
	dec, err := New(f.plan(src), f.dir, opts).DryRun()
	if err != nil {
		f.t.Fatal(err)
	}
	out := map[string]*Decision{}
	for _, d := range dec {
		out[d.Node] = d
	}
	return out
}

func TestDeletedOutputReRunsNotReused(t *testing.T) {
	f := newFixture(t)
	f.rec.Files = true
	src := enginetest.Campaign(1, 2, "")
	f.run(context.Background(), src, Options{})
	victim := "run-shape[cell-000/c1]"
	if err := os.Remove(filepath.Join(f.dir, enginetest.OutputOf(victim))); err != nil {
		t.Fatal(err)
	}
	dec := f.dryRun(src, Options{})
	if d := dec[victim]; d.Action != ActRun || !strings.Contains(strings.Join(d.Reasons, " "), "is missing") {
		t.Fatalf("dry run: %+v", d)
	}
	if dec["run-shape[cell-000/c2]"].Action != ActReuse || dec["aggregate"].Action != ActRun {
		t.Errorf("dry run: c2 %s, aggregate %s", dec["run-shape[cell-000/c2]"].Action, dec["aggregate"].Action)
	}
	before := f.rec.Count(victim)
	o := outcomes(f.run(context.Background(), src, Options{}))
	if f.rec.Count(victim) != before+1 || o[victim] != OutRan || o["aggregate"] != OutRan {
		t.Errorf("after deleting an output: %v", o)
	}
	if _, err := os.Stat(filepath.Join(f.dir, enginetest.OutputOf(victim))); err != nil {
		t.Errorf("output not rewritten: %v", err)
	}
}

// A bracket's second half must run right after its point: when it is missing (a crash right
// after the point ended) the point is measured again with both halves, never closed later.
func TestBracketSecondHalfNeverClosesAnOldWindow(t *testing.T) {
	f := newFixture(t)
	src := enginetest.Campaign(1, 2, "")
	f.run(context.Background(), src, Options{})
	store, err := checkpoint.Open(f.dir)
	if err != nil {
		t.Fatal(err)
	}
	after := "scrape-spec[cell-000/c1]"
	if err := store.Save(&checkpoint.Record{Node: after, Step: "scrape-spec", Kind: "scrape-spec", Status: checkpoint.Running, StartedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	store.Close()
	dec := f.dryRun(src, Options{})
	for _, id := range []string{"scrape-spec:before[cell-000/c1]", "run-shape[cell-000/c1]", after} {
		if dec[id].Action != ActRun {
			t.Errorf("%s: %s (%v), want run", id, dec[id].Action, dec[id].Reasons)
		}
	}
	if !strings.Contains(strings.Join(dec["run-shape[cell-000/c1]"].Reasons, " "), after) {
		t.Errorf("point re-measured without saying why: %v", dec["run-shape[cell-000/c1]"].Reasons)
	}
	if dec["run-shape[cell-000/c2]"].Action != ActReuse {
		t.Errorf("the other point re-runs: %+v", dec["run-shape[cell-000/c2]"])
	}
	var order []string
	f.rec.Order = nil
	o := outcomes(f.run(context.Background(), src, Options{}))
	order = append(order, f.rec.Order...)
	i, j := indexOf(order, "run-shape[cell-000/c1]"), indexOf(order, after)
	if o[after] != OutRan || i < 0 || j != i+1 {
		t.Errorf("second half ran %s at %d, point at %d: %v", o[after], j, i, order)
	}
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

// A step that fails but keeps its result (a point whose every request failed) is evidence for
// tolerant readers, and is never reused.
func TestFailedStepKeepsEvidenceForTolerantReaders(t *testing.T) {
	f := newFixture(t)
	var seen []string
	f.rec.Hook = func(ctx context.Context, tk *engine.Task) error {
		if tk.Node == "run-shape[cell-000/c1]" {
			return enginetest.KeepResult{Err: errors.New("every request failed")}
		}
		if tk.Node == "aggregate" {
			for _, u := range tk.Upstream {
				if u.Failed != "" {
					seen = append(seen, u.Node)
				}
			}
		}
		return nil
	}
	sum := f.run(context.Background(), enginetest.Campaign(1, 2, ""), Options{})
	o := outcomes(sum)
	if o["run-shape[cell-000/c1]"] != OutFailed || o["aggregate"] != OutRan || o["dcgm-correlate[cell-000]"] != OutBlocked {
		t.Fatalf("outcomes %v", o)
	}
	if len(seen) != 1 || seen[0] != "run-shape[cell-000/c1]" {
		t.Errorf("aggregate saw failed upstreams %v", seen)
	}
	dec := f.dryRun(enginetest.Campaign(1, 2, ""), Options{})
	if dec["run-shape[cell-000/c1]"].Action != ActRun {
		t.Errorf("a failed step would be reused: %+v", dec["run-shape[cell-000/c1]"])
	}
}

// Inspect says which recorded results no longer match the campaign file, and only those.
func TestInspectFindsStaleResults(t *testing.T) {
	f := newFixture(t)
	src := enginetest.Campaign(1, 2, "")
	f.run(context.Background(), src, Options{})
	st, err := New(f.plan(src), f.dir, Options{Registry: f.reg}).Inspect()
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Check(); err != nil || len(st.Verdicts()) != 0 {
		t.Fatalf("fresh run: %v", err)
	}
	// The same campaign with a gate added: every run-shape's verdicts are now stale, and the
	// readers of verdicts with them; nothing measured needs to change.
	gated := enginetest.Campaign(1, 2, "gates:\n  - {id: big, on: run-shape, rule: \"concurrency < 2\"}\n")
	st, err = New(f.plan(gated), f.dir, Options{Registry: f.reg}).Inspect()
	if err != nil {
		t.Fatal(err)
	}
	var stale []string
	for _, n := range st.Stale() {
		stale = append(stale, n.Node)
	}
	want := "run-shape[cell-000/c1] run-shape[cell-000/c2] render publish"
	if strings.Join(stale, " ") != want {
		t.Errorf("stale %v, want %s", stale, want)
	}
	var se *StaleError
	if err := st.Check(); !errors.As(err, &se) || se.Code() != 1 || !strings.Contains(err.Error(), "perfdag resume") {
		t.Errorf("check: %v", err)
	}
	// After the edited campaign runs, nothing is stale and the verdicts are the latest run's.
	f.run(context.Background(), gated, Options{})
	st, err = New(f.plan(gated), f.dir, Options{Registry: f.reg}).Inspect()
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Check(); err != nil {
		t.Errorf("after the run: %v", err)
	}
	if v := st.Verdicts(); len(v) != 2 || v[0].Passed == v[1].Passed {
		t.Errorf("verdicts %+v", v)
	}
	if n, _ := st.Node("publish"); n.State != StateBlocked {
		t.Errorf("publish %s, want blocked by the fail verdict", n.State)
	}
}
