package schedule

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

// TestFireConsumesNoSlot: a manual fire runs the campaign through the Runner and the Hook
// (trigger manual, the fire time as its slot) without writing the state file, so the slot
// due at 10:00 still runs on time afterwards and the watermark is the scheduler's alone.
func TestFireConsumesNoSlot(t *testing.T) {
	dir := t.TempDir()
	clk, run, hook := newFakeClock(at(9, 59, 30)), newFakeRunner(true), &hookLog{}
	// a first scheduler start decides the past (no slot due at 9:59:30)
	if runs, err := newScheduler(t, []Job{hourly("nightly", "")}, dir, clk, run, hook, nil).Once(context.Background()); err != nil || len(runs) != 0 {
		t.Fatalf("first start: %v %v", runs, err)
	}
	before, _, err := ReadState(dir, "nightly")
	if err != nil {
		t.Fatal(err)
	}
	r, err := newScheduler(t, []Job{hourly("nightly", "")}, dir, clk, run, hook, nil).Fire(context.Background(), "nightly")
	if err != nil {
		t.Fatal(err)
	}
	if r.Trigger != TriggerManual || r.Outcome != Succeeded || !r.Slot.Equal(at(9, 59, 30)) || r.Dir == "" {
		t.Errorf("manual run %+v", r)
	}
	after, _, err := ReadState(dir, "nightly")
	if err != nil {
		t.Fatal(err)
	}
	if !after.Watermark.Equal(before.Watermark) || after.LastRun != nil || after.Updated != before.Updated {
		t.Errorf("the manual fire changed the state file: %+v, was %+v", after, before)
	}
	clk.Set(at(10, 0, 10))
	runs, err := newScheduler(t, []Job{hourly("nightly", "")}, dir, clk, run, hook, nil).Once(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := slotsOf(runs), []string{"10:00 scheduled succeeded"}; !equal(got, want) {
		t.Errorf("after the manual fire, --once ran %v, want %v", got, want)
	}
	if got, want := slotsOf(hook.all()), []string{"09:59 manual succeeded", "10:00 scheduled succeeded"}; !equal(got, want) {
		t.Errorf("hook saw %v, want %v", got, want)
	}
	if _, err := newScheduler(t, []Job{hourly("nightly", "")}, dir, clk, run, hook, nil).Fire(context.Background(), "weekly"); err == nil || !strings.Contains(err.Error(), "no scheduled campaign named weekly") {
		t.Errorf("fire of an unknown campaign: %v", err)
	}
}

// TestFireRefusedWhileScheduledRunGoes: a running scheduler's run of the campaign holds its
// run lock; a manual fire (another Scheduler on the same state directory, as another process
// is) is refused at once, naming the holder, and never reaches the Runner.
func TestFireRefusedWhileScheduledRunGoes(t *testing.T) {
	dir := t.TempDir()
	clk, run, ev := newFakeClock(at(9, 59, 0)), newFakeRunner(false), newEvents()
	stop := started(t, newScheduler(t, []Job{hourly("nightly", "")}, dir, clk, run, nil, ev))
	ev.waitFor(t, EventWait, "")
	clk.Set(at(10, 0, 0))
	first := run.next(t)
	hook := &hookLog{}
	_, err := newScheduler(t, []Job{hourly("nightly", "")}, dir, clk, run, hook, nil).Fire(context.Background(), "nightly")
	var busy *BusyError
	if !errors.As(err, &busy) || !strings.Contains(err.Error(), "scheduled run of nightly, slot 2026-01-05T10:00:00Z") {
		t.Errorf("fire during a scheduled run: %v, want a BusyError naming the scheduled slot", err)
	}
	if n := len(hook.all()); n != 0 {
		t.Errorf("the refused fire reached the hook %d times", n)
	}
	first.release <- nil
	ev.waitFor(t, EventEnd, "nightly")
	stop()
	if run.overlap.Load() || run.n.Load() != 1 {
		t.Errorf("runs %d, overlap %v: the refused fire ran", run.n.Load(), run.overlap.Load())
	}
}

// TestSlotWaitsForManualFire: a slot coming due while a manual fire of the campaign runs is
// blocked (never a second run at once) and starts once the fire ends, on the scheduler's
// next look at the lock.
func TestSlotWaitsForManualFire(t *testing.T) {
	dir := t.TempDir()
	clk, run, ev := newFakeClock(at(9, 59, 0)), newFakeRunner(false), newEvents()
	fired := make(chan error, 1)
	go func() {
		_, err := newScheduler(t, []Job{hourly("nightly", "")}, dir, clk, run, nil, nil).Fire(context.Background(), "nightly")
		fired <- err
	}()
	manual := run.next(t)
	stop := started(t, newScheduler(t, []Job{hourly("nightly", "")}, dir, clk, run, nil, ev))
	ev.waitFor(t, EventWait, "")
	clk.Set(at(10, 0, 0))
	if e := ev.waitFor(t, EventBlocked, "nightly"); !strings.Contains(e.Detail, "manual run of nightly") {
		t.Errorf("blocked: %q, want it to name the manual fire", e.Detail)
	}
	select {
	case c := <-run.calls:
		t.Fatalf("%s started while the manual fire ran", c.file)
	case <-time.After(50 * time.Millisecond):
	}
	manual.release <- nil
	if err := <-fired; err != nil {
		t.Fatal(err)
	}
	clk.Set(at(10, 0, 0).Add(lockPoll))
	if e := ev.waitFor(t, EventStart, "nightly"); !e.Slot.Time.Equal(at(10, 0, 0)) || e.Slot.Trigger != TriggerScheduled {
		t.Errorf("after the fire: start %+v, want the 10:00 slot", e.Slot)
	}
	run.next(t).release <- nil
	ev.waitFor(t, EventEnd, "nightly")
	stop()
	if run.overlap.Load() {
		t.Error("the scheduled slot overlapped the manual fire")
	}
}

// TestLostManualFireRecorded: a manual fire killed during its run leaves its record; the next
// scheduler start (or manual fire) whose run lock is free hands the Hook a failed manual run
// naming its directory and pid, once, and removes the record. A manual fire still going
// (its run lock held) is not taken for lost.
func TestLostManualFireRecorded(t *testing.T) {
	dir := t.TempDir()
	clk, run, hook := newFakeClock(at(9, 30, 0)), newFakeRunner(true), &hookLog{}
	killed := RunningSlot{Slot: Slot{Time: at(9, 0, 0), Trigger: TriggerManual}, PID: 4242, Started: at(9, 0, 0), Dir: "campaigns/killed"}
	if err := writeManual(dir, "nightly", killed); err != nil {
		t.Fatal(err)
	}
	runs, err := newScheduler(t, []Job{hourly("nightly", "")}, dir, clk, run, hook, nil).Once(context.Background())
	if err != nil || len(runs) != 1 {
		t.Fatalf("scheduler start: %v %v", runs, err)
	}
	lost := hook.all()
	if len(lost) != 1 || lost[0].Trigger != TriggerManual || lost[0].Outcome != Failed || lost[0].Dir != "campaigns/killed" ||
		!lost[0].Slot.Equal(at(9, 0, 0)) || !strings.Contains(lost[0].Error, "manual fire stopped during the run (pid 4242") {
		t.Fatalf("lost manual fire recorded as %+v", lost)
	}
	if _, err := os.Stat(manualPath(dir, "nightly")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the record stayed: %v", err)
	}
	if runs, err := newScheduler(t, []Job{hourly("nightly", "")}, dir, clk, run, hook, nil).Once(context.Background()); err != nil || len(runs) != 0 {
		t.Errorf("a second start recorded again: %v %v", runs, err)
	}

	// the next manual fire records a dead one before it runs
	if err := writeManual(dir, "nightly", killed); err != nil {
		t.Fatal(err)
	}
	if _, err := newScheduler(t, []Job{hourly("nightly", "")}, dir, clk, run, hook, nil).Fire(context.Background(), "nightly"); err != nil {
		t.Fatal(err)
	}
	if got, want := slotsOf(hook.all()), []string{"09:00 manual failed", "09:00 manual failed", "09:30 manual succeeded"}; !equal(got, want) {
		t.Errorf("hook saw %v, want %v", got, want)
	}

	// a live manual fire's record is not a lost one
	blocking := newFakeRunner(false)
	fired := make(chan error, 1)
	go func() {
		_, err := newScheduler(t, []Job{hourly("nightly", "")}, dir, clk, blocking, nil, nil).Fire(context.Background(), "nightly")
		fired <- err
	}()
	c := blocking.next(t)
	before := len(hook.all())
	if runs, err := newScheduler(t, []Job{hourly("nightly", "")}, dir, clk, run, hook, nil).Once(context.Background()); err != nil || len(runs) != 0 || len(hook.all()) != before {
		t.Errorf("a start during a live manual fire recorded %v (%v)", runs, err)
	}
	c.release <- nil
	if err := <-fired; err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(manualPath(dir, "nightly")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a finished manual fire left its record: %v", err)
	}
}
