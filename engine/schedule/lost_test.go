package schedule

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfdag/perfdag/schema"
)

// TestKilledMidRun: before a run starts, the state file marks its slot running with the
// scheduler's pid and start time, then the campaign directory the Runner reports — what a
// SIGKILL leaves behind. The next start hands the Hook that run as failed, with the reason,
// before anything else runs; the slot never runs again, and it is recorded only once.
func TestKilledMidRun(t *testing.T) {
	job := hourly("weekly", "")
	// 10:00 would be caught up at every restart below if the watermark forgot it
	job.Schedule.CatchupWindow = schema.Duration{Duration: 3 * time.Hour}

	live := t.TempDir()
	clk, run, ev := newFakeClock(at(9, 59, 0)), newFakeRunner(false), newEvents()
	stop := started(t, newScheduler(t, []Job{job}, live, clk, run, nil, ev))
	clk.Set(at(10, 0, 0))
	c := run.next(t) // the runner reported its directory before handing the call over
	killed, err := os.ReadFile(StatePath(live, "weekly"))
	if err != nil {
		t.Fatal(err)
	}
	c.release <- nil
	ev.waitFor(t, EventEnd, "weekly")
	stop()
	var mid State
	if err := json.Unmarshal(killed, &mid); err != nil {
		t.Fatal(err)
	}
	if r := mid.Running; r == nil || !r.Time.Equal(at(10, 0, 0)) || r.Trigger != TriggerScheduled || r.PID != os.Getpid() ||
		!r.Started.Equal(at(10, 0, 0)) || r.Dir != "campaigns/run-1" {
		t.Fatalf("state file mid-run: running = %+v, want slot 10:00, pid %d, start 10:00, dir campaigns/run-1", mid.Running, os.Getpid())
	}

	reason := "scheduler stopped during the run (pid " + strconv.Itoa(os.Getpid()) + ", started 2026-01-05T10:00:00Z)"
	cases := []struct {
		name   string
		now    time.Time
		edit   func(j *Job, st *State)
		runs   []string // what the restart returns (the hook sees the same, in order)
		reason string
		dir    string
	}{
		{"restart", at(10, 20, 0), nil, []string{"10:00 scheduled failed"}, reason, "campaigns/run-1"},
		{"restart when the next slot is due", at(11, 0, 10), nil,
			[]string{"10:00 scheduled failed", "11:00 scheduled succeeded"}, reason, "campaigns/run-1"},
		{"schedule edited while down", at(10, 20, 0), func(j *Job, _ *State) { j.Schedule.Cron = "30 * * * *" },
			[]string{"10:00 scheduled failed"}, reason, "campaigns/run-1"},
		{"killed before the runner named its directory", at(10, 20, 0), func(_ *Job, st *State) { st.Running.Dir = "" },
			[]string{"10:00 scheduled failed"}, reason, ""},
		{"state written before pids were recorded", at(10, 20, 0), func(_ *Job, st *State) { *st.Running = RunningSlot{Slot: st.Running.Slot} },
			[]string{"10:00 scheduled failed"}, "scheduler stopped during the run", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir, j := t.TempDir(), job
			st := mid
			rs := *mid.Running
			st.Running = &rs
			if tc.edit != nil {
				tc.edit(&j, &st)
			}
			if err := writeState(dir, &st); err != nil {
				t.Fatal(err)
			}
			run, hook, ev := newFakeRunner(true), &hookLog{}, newEvents()
			runs := mustOnce(t, newScheduler(t, []Job{j}, dir, newFakeClock(tc.now), run, hook, ev))
			if got := slotsOf(runs); !equal(got, tc.runs) || !equal(slotsOf(hook.all()), tc.runs) {
				t.Fatalf("restart ran %v, hook saw %v; want %v", got, slotsOf(hook.all()), tc.runs)
			}
			lost := hook.all()[0]
			if lost.Reason != tc.reason || lost.Error != tc.reason || lost.Err == nil || lost.Dir != tc.dir ||
				!lost.Ended.Equal(tc.now) || lost.Campaign != "weekly" {
				t.Errorf("lost run %+v, want reason %q, dir %q", lost, tc.reason, tc.dir)
			}
			if e := ev.waitFor(t, EventEnd, "weekly"); !strings.Contains(e.Detail, tc.reason) || (tc.dir != "") != strings.Contains(e.Detail, "perfdag resume "+tc.dir) {
				t.Errorf("end event detail %q", e.Detail)
			}
			if want := int64(len(tc.runs) - 1); run.n.Load() != want {
				t.Errorf("runner called %d times, want %d: the lost slot must never run again", run.n.Load(), want)
			}
			after, found, err := ReadState(dir, "weekly")
			if err != nil || !found || after.Running != nil || after.LastRun == nil {
				t.Fatalf("state after restart: %+v found=%v err=%v", after, found, err)
			}
			// Restarting again records nothing twice and runs nothing.
			again := mustOnce(t, newScheduler(t, []Job{j}, dir, newFakeClock(tc.now.Add(30*time.Second)), run, hook, nil))
			if len(again) != 0 || len(hook.all()) != len(tc.runs) {
				t.Errorf("second restart: runs %v, hook saw %v", slotsOf(again), slotsOf(hook.all()))
			}
		})
	}
}
