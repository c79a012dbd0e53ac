package schedule

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfdag/perfdag/schema"
)

func newScheduler(t *testing.T, jobs []Job, dir string, clk Clock, r Runner, h Hook, ev *events) *Scheduler {
	t.Helper()
	opts := Options{StateDir: dir, Runner: r, Clock: clk}
	if h != nil {
		opts.Hook = h
	}
	if ev != nil {
		opts.Observe = ev.observe
	}
	s, err := New(jobs, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func slotsOf(runs []Run) []string {
	var out []string
	for _, r := range runs {
		out = append(out, r.Slot.UTC().Format("15:04")+" "+r.Trigger+" "+r.Outcome)
	}
	return out
}

func equal(a, b []string) bool { return strings.Join(a, "|") == strings.Join(b, "|") }

// TestOverlapSkip: a slot that comes due while the previous run is going is dropped.
func TestOverlapSkip(t *testing.T) {
	clk, run, hook, ev := newFakeClock(at(9, 30, 0)), newFakeRunner(false), &hookLog{}, newEvents()
	s := newScheduler(t, []Job{hourly("weekly", OverlapSkip)}, t.TempDir(), clk, run, hook, ev)
	stop := started(t, s)
	ev.waitFor(t, EventWait, "")

	clk.Set(at(10, 0, 0))
	ev.waitFor(t, EventStart, "weekly")
	first := run.next(t)
	clk.Set(at(11, 0, 0))
	if e := ev.waitFor(t, EventSkip, "weekly"); !e.Slot.Time.Equal(at(11, 0, 0)) {
		t.Errorf("skipped slot %v, want 11:00", e.Slot.Time)
	}
	first.release <- nil
	ev.waitFor(t, EventEnd, "weekly")
	clk.Set(at(12, 0, 0))
	ev.waitFor(t, EventStart, "weekly")
	run.next(t).release <- nil
	ev.waitFor(t, EventEnd, "weekly")
	stop()

	if got, want := slotsOf(hook.all()), []string{"10:00 scheduled succeeded", "12:00 scheduled succeeded"}; !equal(got, want) {
		t.Errorf("runs %v, want %v", got, want)
	}
	if run.overlap.Load() {
		t.Error("two runs of one campaign overlapped")
	}
}

// TestOverlapQueue: the first slot due during a run waits for it; a second one is dropped
// (at most one queued).
func TestOverlapQueue(t *testing.T) {
	clk, run, hook, ev := newFakeClock(at(9, 30, 0)), newFakeRunner(false), &hookLog{}, newEvents()
	s := newScheduler(t, []Job{hourly("weekly", OverlapQueue)}, t.TempDir(), clk, run, hook, ev)
	stop := started(t, s)

	clk.Set(at(10, 0, 0))
	first := run.next(t)
	clk.Set(at(11, 0, 0))
	ev.waitFor(t, EventQueue, "weekly")
	clk.Set(at(12, 0, 0))
	if e := ev.waitFor(t, EventSkip, "weekly"); !e.Slot.Time.Equal(at(12, 0, 0)) {
		t.Errorf("skipped %v, want 12:00 (11:00 already queued)", e.Slot.Time)
	}
	first.release <- nil
	second := run.next(t) // the queued 11:00 starts as soon as 10:00 ends
	second.release <- nil
	ev.waitFor(t, EventEnd, "weekly")
	ev.waitFor(t, EventEnd, "weekly")
	stop()

	want := []string{"10:00 scheduled succeeded", "11:00 queued succeeded"}
	if got := slotsOf(hook.all()); !equal(got, want) {
		t.Errorf("runs %v, want %v", got, want)
	}
	if run.overlap.Load() {
		t.Error("two runs of one campaign overlapped")
	}
}

// TestOverlapReplace: a due slot cancels the running campaign (its context), which ends
// interrupted, and then starts — never both at once.
func TestOverlapReplace(t *testing.T) {
	clk, run, hook, ev := newFakeClock(at(9, 30, 0)), newFakeRunner(false), &hookLog{}, newEvents()
	s := newScheduler(t, []Job{hourly("weekly", OverlapReplace)}, t.TempDir(), clk, run, hook, ev)
	stop := started(t, s)

	clk.Set(at(10, 0, 0))
	run.next(t) // never released: replace must cancel it
	clk.Set(at(11, 0, 0))
	ev.waitFor(t, EventReplace, "weekly")
	end := ev.waitFor(t, EventEnd, "weekly")
	if end.Run.Outcome != Interrupted || !strings.Contains(end.Run.Reason, "replaced by slot") {
		t.Errorf("replaced run: outcome %s reason %q", end.Run.Outcome, end.Run.Reason)
	}
	run.next(t).release <- nil
	ev.waitFor(t, EventEnd, "weekly")
	stop()

	want := []string{"10:00 scheduled interrupted", "11:00 scheduled succeeded"}
	if got := slotsOf(hook.all()); !equal(got, want) {
		t.Errorf("runs %v, want %v", got, want)
	}
	if run.overlap.Load() {
		t.Error("the replacing run started before the replaced one ended")
	}
}

// TestCatchupWindowAndCap: slots missed while the scheduler was down run on start when within
// catchup_window, the most recent catchup_max of them; a restart runs nothing twice.
func TestCatchupWindowAndCap(t *testing.T) {
	dir := t.TempDir()
	job := hourly("weekly", "")
	job.Schedule.CatchupWindow = schema.Duration{Duration: 3 * time.Hour}
	job.Schedule.CatchupMax = 2
	run := newFakeRunner(true)
	ctx := context.Background()

	// First start ever at 10:00:30: the 10:00 slot is 30 s old, within the 1 min grace → on time.
	ev := newEvents()
	runs, err := newScheduler(t, []Job{job}, dir, newFakeClock(at(10, 0, 30)), run, nil, ev).Once(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := slotsOf(runs), []string{"10:00 scheduled succeeded"}; !equal(got, want) {
		t.Fatalf("first start: %v, want %v", got, want)
	}

	// Down until 15:20. Missed: 11, 12, 13, 14, 15. The window reaches back to 12:20, so 11
	// and 12 are out; of 13, 14, 15 the cap keeps the two most recent; 15:00 is 20 min old,
	// beyond grace, so it is a catch-up too. Dropped: 11, 12, 13 = 3.
	ev = newEvents()
	runs, err = newScheduler(t, []Job{job}, dir, newFakeClock(at(15, 20, 0)), run, nil, ev).Once(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := slotsOf(runs), []string{"14:00 catch-up succeeded", "15:00 catch-up succeeded"}; !equal(got, want) {
		t.Errorf("catch-up: %v, want %v", got, want)
	}
	if e := ev.waitFor(t, EventMissed, "weekly"); e.Count != 3 {
		t.Errorf("missed count %d, want 3", e.Count)
	}

	// Restart a few seconds later: the watermark survived, nothing runs again.
	runs, err = newScheduler(t, []Job{job}, dir, newFakeClock(at(15, 20, 30)), run, nil, nil).Once(ctx)
	if err != nil || len(runs) != 0 {
		t.Errorf("restart: runs %v err %v, want none", slotsOf(runs), err)
	}
	if n := run.n.Load(); n != 3 {
		t.Errorf("runner called %d times, want 3 (10:00, 14:00, 15:00)", n)
	}

	// Without a window nothing missed is caught up; the default cap is 1.
	noWindow := hourly("nowindow", "")
	dir2 := t.TempDir()
	mustOnce(t, newScheduler(t, []Job{noWindow}, dir2, newFakeClock(at(10, 0, 30)), run, nil, nil))
	if runs := mustOnce(t, newScheduler(t, []Job{noWindow}, dir2, newFakeClock(at(15, 20, 0)), run, nil, nil)); len(runs) != 0 {
		t.Errorf("no window: %v, want none", slotsOf(runs))
	}
	capOne := hourly("capone", "")
	capOne.Schedule.CatchupWindow = schema.Duration{Duration: 24 * time.Hour}
	dir3 := t.TempDir()
	mustOnce(t, newScheduler(t, []Job{capOne}, dir3, newFakeClock(at(10, 0, 30)), run, nil, nil))
	// 15:00:10 is on time; of the missed 11–14 the default cap 1 keeps 14:00.
	runs = mustOnce(t, newScheduler(t, []Job{capOne}, dir3, newFakeClock(at(15, 0, 10)), run, nil, nil))
	if got, want := slotsOf(runs), []string{"14:00 catch-up succeeded", "15:00 scheduled succeeded"}; !equal(got, want) {
		t.Errorf("default cap: %v, want %v", got, want)
	}
}

func mustOnce(t *testing.T, s *Scheduler) []Run {
	t.Helper()
	runs, err := s.Once(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return runs
}

// TestRestartWatermark: SIGTERM (cancel) stops the running campaign, which checkpoints and
// ends interrupted; a restarted scheduler neither re-runs that slot nor loses the next one.
// (A scheduler killed mid-run: TestKilledMidRun.)
func TestRestartWatermark(t *testing.T) {
	dir := t.TempDir()
	job := hourly("weekly", "")
	job.Schedule.CatchupWindow = schema.Duration{Duration: 2 * time.Hour}
	clk, run, hook, ev := newFakeClock(at(9, 59, 0)), newFakeRunner(false), &hookLog{}, newEvents()
	stop := started(t, newScheduler(t, []Job{job}, dir, clk, run, hook, ev))
	clk.Set(at(10, 0, 0))
	run.next(t) // running when SIGTERM comes
	stop()
	if runs := hook.all(); len(runs) != 1 || runs[0].Outcome != Interrupted || runs[0].Reason != "scheduler stopping" {
		t.Fatalf("hook after SIGTERM: %+v", runs)
	}
	st, found, err := ReadState(dir, "weekly")
	if err != nil || !found || st.Running != nil || !st.Watermark.Equal(at(10, 0, 0)) || st.LastRun.Outcome != Interrupted {
		t.Fatalf("state after stop: %+v found=%v err=%v", st, found, err)
	}

	// Restart at 10:30 (the 10:00 slot is within the catch-up window but already decided):
	// nothing runs until 11:00.
	clk2, ev2 := newFakeClock(at(10, 30, 0)), newEvents()
	stop = started(t, newScheduler(t, []Job{job}, dir, clk2, run, nil, ev2))
	if e := ev2.waitFor(t, EventWait, ""); !e.Slot.Time.Equal(at(11, 0, 0)) {
		t.Errorf("next wake %v, want 11:00", e.Slot.Time)
	}
	clk2.Set(at(11, 0, 0))
	if e := ev2.waitFor(t, EventStart, "weekly"); !e.Slot.Time.Equal(at(11, 0, 0)) {
		t.Errorf("started %v, want 11:00", e.Slot.Time)
	}
	run.next(t).release <- nil
	ev2.waitFor(t, EventEnd, "weekly")
	stop()
	for _, e := range ev2.all {
		if e.Action == EventStart && e.Slot.Time.Equal(at(10, 0, 0)) {
			t.Error("10:00 ran twice")
		}
	}
}

// TestEditedScheduleDoesNotReplay: a changed cron expression resets the watermark.
func TestEditedScheduleDoesNotReplay(t *testing.T) {
	dir := t.TempDir()
	job := hourly("weekly", "")
	job.Schedule.CatchupWindow = schema.Duration{Duration: 24 * time.Hour}
	run := newFakeRunner(true)
	mustOnce(t, newScheduler(t, []Job{job}, dir, newFakeClock(at(10, 0, 30)), run, nil, nil))
	job.Schedule.Cron = "30 * * * *"
	ev := newEvents()
	runs := mustOnce(t, newScheduler(t, []Job{job}, dir, newFakeClock(at(15, 20, 0)), run, nil, ev))
	if len(runs) != 0 {
		t.Errorf("edited schedule replayed %v", slotsOf(runs))
	}
	if e := ev.waitFor(t, EventReset, "weekly"); !strings.Contains(e.Detail, "changed") {
		t.Errorf("reset detail %q", e.Detail)
	}
}

// TestExclusiveResources: two campaigns on one endpoint never run at once; the later waits.
func TestExclusiveResources(t *testing.T) {
	a, b := hourly("a", ""), hourly("b", "")
	a.Exclusive, b.Exclusive = []string{"http://vllm:8000"}, []string{"http://vllm:8000"}
	clk, run, ev := newFakeClock(at(9, 59, 0)), newFakeRunner(false), newEvents()
	stop := started(t, newScheduler(t, []Job{a, b}, t.TempDir(), clk, run, nil, ev))
	clk.Set(at(10, 0, 0))
	first := run.next(t)
	ev.waitFor(t, EventBlocked, "b")
	select {
	case c := <-run.calls:
		t.Fatalf("%s started while a held the endpoint", c.file)
	case <-time.After(50 * time.Millisecond):
	}
	first.release <- nil
	second := run.next(t)
	if first.file != "a.yaml" || second.file != "b.yaml" {
		t.Errorf("order %s, %s", first.file, second.file)
	}
	second.release <- nil
	ev.waitFor(t, EventEnd, "b")
	stop()
}

func TestStateDirLocked(t *testing.T) {
	dir := t.TempDir()
	clk, run, ev := newFakeClock(at(9, 59, 0)), newFakeRunner(false), newEvents()
	stop := started(t, newScheduler(t, []Job{hourly("weekly", "")}, dir, clk, run, nil, ev))
	ev.waitFor(t, EventWait, "")
	_, err := newScheduler(t, []Job{hourly("weekly", "")}, dir, clk, run, nil, nil).Once(context.Background())
	if err == nil || !strings.Contains(err.Error(), "in use by another perfdag schedule") {
		t.Errorf("second scheduler on one state dir: %v", err)
	}
	stop()
}

func TestNewRejects(t *testing.T) {
	bad := func(mut func(*Job)) Job {
		j := hourly("weekly", "")
		mut(&j)
		return j
	}
	cases := []struct {
		jobs []Job
		want string
	}{
		{[]Job{bad(func(j *Job) { j.Schedule.Cron = "0 25 * * *" })}, "weekly.yaml: schedule.cron"},
		{[]Job{bad(func(j *Job) { j.Schedule.Timezone = "Mars/Olympus" })}, "schedule.timezone"},
		{[]Job{bad(func(j *Job) { j.Schedule.Overlap = "all" })}, "schedule.overlap"},
		{[]Job{bad(func(j *Job) { j.Schedule.CatchupMax = -1 })}, "catchup_max"},
		{[]Job{bad(func(j *Job) { j.Name = "../x" })}, "cannot name a state file"},
		{[]Job{hourly("weekly", ""), bad(func(j *Job) { j.File = "other.yaml" })}, "also scheduled by weekly.yaml"},
	}
	for _, tc := range cases {
		_, err := New(tc.jobs, Options{StateDir: t.TempDir(), Runner: newFakeRunner(true)})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("err %v, want %q", err, tc.want)
		}
	}
	if _, err := New(nil, Options{Runner: newFakeRunner(true)}); err == nil {
		t.Error("no state dir accepted")
	}
}

// TestUpcomingZone: fire times are computed in the schedule's zone, across a DST change.
func TestUpcomingZone(t *testing.T) {
	j := Job{Name: "w", File: "w.yaml", Schedule: schema.Schedule{Cron: "0 3 * * 1", Timezone: "Europe/Berlin"}}
	got, err := Upcoming(j, time.Date(2026, 3, 20, 0, 0, 0, 0, time.UTC), 2)
	if err != nil {
		t.Fatal(err)
	}
	// Mon 23 Mar 03:00 CET (UTC+1) = 02:00Z; Mon 30 Mar 03:00 CEST (UTC+2, after the 29 Mar
	// change) = 01:00Z.
	want := []time.Time{time.Date(2026, 3, 23, 2, 0, 0, 0, time.UTC), time.Date(2026, 3, 30, 1, 0, 0, 0, time.UTC)}
	for i := range want {
		if i >= len(got) || !got[i].Equal(want[i]) || got[i].Location().String() != "Europe/Berlin" || got[i].Hour() != 3 {
			t.Errorf("fire %d = %v, want %v at 03:00 Berlin", i, got, want[i])
		}
	}
}

// TestDue covers the pure slot decision: grace, window, cap, restored slots.
func TestDue(t *testing.T) {
	mk := func(window time.Duration, maxN int) *compiled {
		c, err := compile(Job{Name: "x", File: "x.yaml", Schedule: schema.Schedule{Cron: "0 * * * *",
			CatchupWindow: schema.Duration{Duration: window}, CatchupMax: maxN}})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	cases := []struct {
		name      string
		c         *compiled
		w, now    time.Time
		restored  []time.Time
		accepted  []string
		dropped   int
		moreThanN bool
	}{
		{"nothing due", mk(0, 0), at(10, 0, 0), at(10, 59, 0), nil, nil, 0, false},
		{"on time", mk(0, 0), at(10, 30, 0), at(11, 0, 59), nil, []string{"11:00 scheduled"}, 0, false},
		{"late without window", mk(0, 0), at(10, 30, 0), at(11, 2, 0), nil, nil, 1, false},
		// W 08:30, now 12:00:20: slots 9, 10, 11 missed, 12 on time; window 2h reaches 10:00:20
		// so 9 and 10 are out; 11 is caught up.
		{"window", mk(2*time.Hour, 5), at(8, 30, 0), at(12, 0, 20), nil, []string{"11:00 catch-up", "12:00 scheduled"}, 2, false},
		// A queued slot restored from the state file counts as missed.
		{"restored", mk(time.Hour, 1), at(10, 30, 0), at(10, 40, 0), []time.Time{at(10, 0, 0)}, []string{"10:00 catch-up"}, 0, false},
		{"restored outside window", mk(0, 1), at(10, 30, 0), at(10, 40, 0), []time.Time{at(10, 0, 0)}, nil, 1, false},
		// A year down with an hourly schedule: counting stops at maxScan.
		{"years", mk(time.Hour, 1), at(10, 0, 0).AddDate(-3, 0, 0), at(10, 30, 0), nil, []string{"10:00 catch-up"}, maxScan, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ds := tc.c.due(tc.w, tc.now, time.Minute, tc.restored)
			var got []string
			for _, s := range ds.accepted {
				got = append(got, s.Time.UTC().Format("15:04")+" "+s.Trigger)
			}
			if !equal(got, tc.accepted) || ds.dropped != tc.dropped || ds.more != tc.moreThanN {
				t.Errorf("accepted %v dropped %d more %v, want %v %d %v", got, ds.dropped, ds.more, tc.accepted, tc.dropped, tc.moreThanN)
			}
		})
	}
}

func TestReadStateErrors(t *testing.T) {
	dir := t.TempDir()
	if _, found, err := ReadState(dir, "none"); found || err != nil {
		t.Errorf("missing state: found=%v err=%v", found, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bad.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadState(dir, "bad"); err == nil || !strings.Contains(err.Error(), "bad.json") {
		t.Errorf("corrupt state: %v", err)
	}
}
