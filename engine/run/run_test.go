package run

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/engine/checkpoint"
	"github.com/perfdag/perfdag/engine/enginetest"
	"github.com/perfdag/perfdag/engine/plan"
)

type fixture struct {
	t   *testing.T
	dir string
	rec *enginetest.Recorder
	reg *engine.Registry
}

func newFixture(t *testing.T) *fixture {
	rec := enginetest.NewRecorder()
	return &fixture{t: t, dir: t.TempDir(), rec: rec, reg: enginetest.Registry(t, rec)}
}

func (f *fixture) plan(src string) *plan.Plan {
	f.t.Helper()
	p, err := plan.Compile(enginetest.Load(f.t, src, f.reg))
	if err != nil {
		f.t.Fatal(err)
	}
	return p
}

func (f *fixture) run(ctx context.Context, src string, opts Options) *Summary {
	f.t.Helper()
	opts.Registry = f.reg
	if opts.Parallel == 0 {
		opts.Parallel = 4
	}
	sum, err := New(f.plan(src), f.dir, opts).Run(ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	return sum
}

func outcomes(s *Summary) map[string]string {
	m := map[string]string{}
	for _, n := range s.Nodes {
		m[n.Node] = n.Outcome
	}
	return m
}

func TestRunThenReuseEverything(t *testing.T) {
	f := newFixture(t)
	src := enginetest.Campaign(2, 2, "")
	first := f.run(context.Background(), src, Options{})
	if first.Counts[OutRan] != len(first.Nodes) {
		t.Fatalf("first run: %v", first.Counts)
	}
	second := f.run(context.Background(), src, Options{})
	if second.Counts[OutReused] != len(second.Nodes) {
		t.Fatalf("second run: %v", second.Counts)
	}
	for id, n := range f.rec.Calls {
		if n != 1 {
			t.Errorf("%s ran %d times", id, n)
		}
	}
}

func TestAddingAConcurrencyRunsOnlyWhatItTouches(t *testing.T) {
	f := newFixture(t)
	f.run(context.Background(), enginetest.Campaign(2, 2, ""), Options{})
	before := map[string]int{}
	for k, v := range f.rec.Calls {
		before[k] = v
	}
	edited := strings.Replace(enginetest.Campaign(2, 2, ""), "concurrencies: [1, 2]", "concurrencies: [1, 2, 4]", 1)
	sum := f.run(context.Background(), edited, Options{})
	var ran []string
	for id, n := range f.rec.Calls {
		if n > before[id] {
			ran = append(ran, id)
		}
	}
	want := map[string]bool{
		"settle[cell-000/c4]": true, "scrape-spec:before[cell-000/c4]": true, "run-shape[cell-000/c4]": true,
		"scrape-spec[cell-000/c4]": true, "dcgm-correlate[cell-000]": true, "aggregate": true, "render": true, "publish": true,
	}
	if len(ran) != len(want) {
		t.Errorf("re-ran %v, want exactly %v", ran, want)
	}
	for _, id := range ran {
		if !want[id] {
			t.Errorf("%s re-ran but the edit does not touch it", id)
		}
	}
	if sum.Counts[OutReused] != len(sum.Nodes)-len(want) {
		t.Errorf("counts %v", sum.Counts)
	}
}

func TestFailureBlocksOnlyDependents(t *testing.T) {
	f := newFixture(t)
	f.rec.Hook = func(ctx context.Context, tk *engine.Task) error {
		if tk.Node == "run-shape[cell-000/c1]" {
			return errors.New("endpoint answered 500 to everything")
		}
		return nil
	}
	sum := f.run(context.Background(), enginetest.Campaign(2, 2, ""), Options{})
	o := outcomes(sum)
	if o["run-shape[cell-000/c1]"] != OutFailed || !sum.Failed() {
		t.Fatalf("outcomes %v", o)
	}
	for _, id := range []string{"scrape-spec[cell-000/c1]", "dcgm-correlate[cell-000]"} {
		if o[id] != OutBlocked {
			t.Errorf("%s = %s, want blocked", id, o[id])
		}
	}
	// a tolerant kind (aggregate) runs past failures, and what reads it runs too
	for _, id := range []string{"aggregate", "render"} {
		if o[id] != OutRan {
			t.Errorf("%s = %s, want ran (aggregate is tolerant)", id, o[id])
		}
	}
	// order-only successors still run: the next point and the other cell
	for _, id := range []string{"run-shape[cell-000/c2]", "run-shape[cell-001/c1]", "dcgm-correlate[cell-001]"} {
		if o[id] != OutRan {
			t.Errorf("%s = %s, want ran", id, o[id])
		}
	}
	// resume after the fix re-runs the failed node and what it blocked, nothing else
	f.rec.Hook = nil
	calls := f.rec.Count("run-shape[cell-001/c1]")
	sum = f.run(context.Background(), enginetest.Campaign(2, 2, ""), Options{})
	if sum.Failed() || outcomes(sum)["run-shape[cell-000/c1]"] != OutRan || f.rec.Count("run-shape[cell-001/c1]") != calls {
		t.Errorf("resume: %v", sum.Counts)
	}
}

func TestGates(t *testing.T) {
	gates := `gates:
  - {id: steady, on: run-shape, rule: "num_prompts >= 4 * concurrency", severity: warn}
  - {id: big-enough, on: run-shape, rule: "concurrency < 2"}
`
	f := newFixture(t)
	var seen []int
	f.rec.Hook = func(ctx context.Context, tk *engine.Task) error {
		if tk.Node == "render" {
			seen = append(seen, len(tk.Verdicts))
		}
		return nil
	}
	sum := f.run(context.Background(), enginetest.Campaign(1, 2, gates), Options{})
	o := outcomes(sum)
	if o["run-shape[cell-000/c1]"] != OutRan || o["run-shape[cell-000/c2]"] != OutGateFailed {
		t.Fatalf("outcomes %v", o)
	}
	if !sum.Refused() || sum.Failed() {
		t.Errorf("refused %v failed %v", sum.Refused(), sum.Failed())
	}
	// a fail verdict keeps the evidence: analysis and the report run, publishing does not
	if o["scrape-spec[cell-000/c2]"] != OutRan || o["aggregate"] != OutRan || o["render"] != OutRan || o["publish"] != OutBlocked {
		t.Errorf("dependents of a failing gate: %v", o)
	}
	if len(seen) != 1 || seen[0] != 4 {
		t.Errorf("render read %v verdicts, want [4] (2 gates × 2 points)", seen)
	}
	warns := 0
	for _, n := range sum.Nodes {
		for _, v := range n.Verdicts {
			if v.Gate == "steady" && !v.Passed {
				warns++
				if v.Value != "concurrency = 1, num_prompts = 3" && v.Value != "concurrency = 2, num_prompts = 6" {
					t.Errorf("verdict value %q", v.Value)
				}
			}
		}
	}
	if warns != 2 {
		t.Errorf("%d steady warnings, want 2 (num_prompts = 3c < 4c)", warns)
	}
	// relaxing the rule re-evaluates the reused results: the readers of verdicts re-run and
	// publishing is unblocked, the measurements are reused; the dry run says so beforehand
	relaxed := enginetest.Campaign(1, 2, strings.Replace(gates, "concurrency < 2", "concurrency < 4", 1))
	r := New(f.plan(relaxed), f.dir, Options{Registry: f.reg})
	dec, err := r.DryRun()
	if err != nil {
		t.Fatal(err)
	}
	predicted := map[string]string{}
	for _, d := range dec {
		predicted[d.Node] = d.Action
	}
	runs := f.rec.Count("run-shape[cell-000/c2]")
	sum = f.run(context.Background(), relaxed, Options{})
	o = outcomes(sum)
	if sum.Refused() || f.rec.Count("run-shape[cell-000/c2]") != runs || o["render"] != OutRan || o["publish"] != OutRan || o["aggregate"] != OutReused {
		t.Errorf("after relaxing: %v", o)
	}
	for id, act := range predicted {
		want := map[string]string{ActRun: OutRan, ActReuse: OutReused}[act]
		if o[id] != want {
			t.Errorf("%s: dry run said %s, the run %s", id, act, o[id])
		}
	}
	// tightening it again: status of the journal carries the new verdict, publish is blocked
	sum = f.run(context.Background(), enginetest.Campaign(1, 2, gates), Options{})
	if o := outcomes(sum); o["run-shape[cell-000/c2]"] != OutGateFailed || o["publish"] != OutBlocked || o["render"] != OutRan {
		t.Errorf("after tightening: %v", o)
	}
	recs, _ := checkpoint.ReadOnly(f.dir).LoadAll()
	if r := recs["run-shape[cell-000/c2]"]; r == nil || len(r.Gates) != 2 || !r.Gates[1].Failing() {
		t.Errorf("journal verdicts of the reused node are stale: %+v", r)
	}
	if r := recs["publish"]; r == nil || r.Status != checkpoint.Blocked {
		t.Errorf("journal still says publish %+v", r)
	}
}

func TestInterruptThenResume(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	f.rec.Hook = func(c context.Context, tk *engine.Task) error {
		if tk.Node == "run-shape[cell-000/c2]" {
			cancel()
			<-c.Done()
			return c.Err()
		}
		return nil
	}
	src := enginetest.Campaign(1, 2, "")
	sum := f.run(ctx, src, Options{})
	o := outcomes(sum)
	if !sum.Interrupted || o["run-shape[cell-000/c2]"] != OutInterrupted || o["aggregate"] != OutPending {
		t.Fatalf("interrupted run: %v", o)
	}
	rec, _ := checkpoint.ReadOnly(f.dir).Load("run-shape[cell-000/c2]")
	if rec == nil || rec.Status != checkpoint.Interrupted {
		t.Fatalf("checkpoint %+v", rec)
	}
	f.rec.Hook = nil
	sum = f.run(context.Background(), src, Options{})
	o = outcomes(sum)
	if o["run-shape[cell-000/c1]"] != OutReused || o["run-shape[cell-000/c2]"] != OutRan || o["render"] != OutRan {
		t.Errorf("resume: %v", o)
	}
	// The interrupted point settles again before it re-runs; the finished one's settle is kept.
	if o["settle[cell-000/c2]"] != OutRan || o["settle[cell-000/c1]"] != OutReused || o["burn-in[cell-000]"] != OutReused {
		t.Errorf("resume: settle c2 %s, settle c1 %s, burn-in %s: want ran, reused, reused",
			o["settle[cell-000/c2]"], o["settle[cell-000/c1]"], o["burn-in[cell-000]"])
	}
}

func TestForceReRunsBracketHalf(t *testing.T) {
	f := newFixture(t)
	src := enginetest.Campaign(1, 1, "")
	f.run(context.Background(), src, Options{})
	dec, err := New(f.plan(src), f.dir, Options{Registry: f.reg, Force: []string{"run-shape*"}}).DryRun()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, d := range dec {
		got[d.Node] = d.Action
	}
	for id, want := range map[string]string{"run-shape[cell-000/c1]": ActRun, "scrape-spec:before[cell-000/c1]": ActRun,
		"scrape-spec[cell-000/c1]": ActRun, "settle[cell-000/c1]": ActRun, "burn-in[cell-000]": ActReuse, "prewarm[cell-000]": ActReuse, "aggregate": ActRun} {
		if got[id] != want {
			t.Errorf("%s: %s, want %s", id, got[id], want)
		}
	}
}

func TestDryRunWritesNothing(t *testing.T) {
	f := newFixture(t)
	dir := filepath.Join(f.dir, "fresh")
	if _, err := New(f.plan(enginetest.Campaign(1, 2, "")), dir, Options{Registry: f.reg}).DryRun(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("dry run created %s", dir)
	}
	if len(f.rec.Calls) != 0 {
		t.Fatalf("dry run ran steps: %v", f.rec.Calls)
	}
}

func TestEndpointSerializedAnalysisParallel(t *testing.T) {
	f := newFixture(t)
	var mu sync.Mutex
	active := map[string]int{}
	maxActive := map[string]int{}
	var analysis, maxAnalysis atomic.Int32
	// The first analysis task holds its slot until a second one runs beside it, so the overlap
	// is an event, not a matter of timing; a serial engine leaves it alone until the liveness
	// bound and the test fails on the parallelism it saw.
	overlapped := make(chan struct{})
	var overlapOnce sync.Once
	f.rec.Hook = func(ctx context.Context, tk *engine.Task) error {
		key := "analysis"
		if tk.Step == "run-shape" || tk.Step == "settle" || tk.Step == "prewarm" || tk.Step == "burn-in" || tk.Step == "scrape-spec" {
			key = tk.EndpointKey
		}
		mu.Lock()
		active[key]++
		maxActive[key] = max(maxActive[key], active[key])
		mu.Unlock()
		if tk.Step == "fan" {
			n := analysis.Add(1)
			for {
				m := maxAnalysis.Load()
				if n <= m || maxAnalysis.CompareAndSwap(m, n) {
					break
				}
			}
			if n >= 2 {
				overlapOnce.Do(func() { close(overlapped) })
			}
			select {
			case <-overlapped:
			case <-time.After(10 * time.Second): // no overlap came: stop holding slots
				overlapOnce.Do(func() { close(overlapped) })
			case <-ctx.Done():
			}
			analysis.Add(-1)
		}
		time.Sleep(time.Millisecond)
		mu.Lock()
		active[key]--
		mu.Unlock()
		return nil
	}
	src := strings.Replace(enginetest.Campaign(8, 2, `pipeline:
  - {id: prewarm, kind: prewarm}
  - {id: run-shape, kind: run-shape, needs: [prewarm]}
  - {id: fan, kind: step, foreach: cell}
`), "cells:\n", "", 1)
	src = strings.Replace(src, "  main: {url: \"sim://\", model: m}\n", "  main: {url: \"sim://\", model: m}\n  other: {url: \"sim://\", model: m}\ncells:\n", 1)
	src = strings.Replace(src, "id: cell-001\n", "id: cell-001\n    endpoint: other\n", 1)
	src = strings.ReplaceAll(src, "    workload", "    endpoint: main\n    workload")
	src = strings.Replace(src, "endpoint: other\n    endpoint: main\n", "endpoint: other\n", 1)
	f.run(context.Background(), src, Options{Parallel: 4})
	if maxActive["main"] != 1 || maxActive["other"] != 1 {
		t.Errorf("endpoint overlap: %v", maxActive)
	}
	if maxAnalysis.Load() < 2 || maxAnalysis.Load() > 4 {
		t.Errorf("analysis parallelism %d, want 2..4 with --parallel 4", maxAnalysis.Load())
	}
}

func TestRefusalIsNotAFailure(t *testing.T) {
	f := newFixture(t)
	f.rec.Hook = func(ctx context.Context, tk *engine.Task) error {
		if tk.Node == "render" {
			return &engine.Refusal{Reasons: []string{"ungrounded: sol_rigor L1"}}
		}
		return nil
	}
	sum := f.run(context.Background(), enginetest.Campaign(1, 1, ""), Options{})
	if !sum.Refused() || sum.Failed() || outcomes(sum)["render"] != OutGateFailed {
		t.Fatalf("refused %v failed %v: %v", sum.Refused(), sum.Failed(), outcomes(sum))
	}
	// a refusal is never reused: the next run tries again
	f.rec.Hook = nil
	sum = f.run(context.Background(), enginetest.Campaign(1, 1, ""), Options{})
	if outcomes(sum)["render"] != OutRan || sum.Refused() {
		t.Fatalf("after the gap is fixed: %v", outcomes(sum))
	}
}
