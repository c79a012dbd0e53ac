package schedule

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// A scheduler killed mid-run (SIGKILL, OOM, power cut) takes its campaign with it. Before a
// run starts, the state file records the slot as running, with the scheduler's pid and the
// start time, and later the campaign directory the Runner reports; the next start finds that
// record — the state directory's lock proves its scheduler is gone — and hands the Hook a
// failed run, so the slot gets its history line and alarm like any other. The watermark
// already covers the slot, so it never runs again.

// dirKey carries a run's directory reporter in the run's context.
type dirKey struct{}

// dirNote is a Runner telling the loop which campaign directory its run writes.
type dirNote struct {
	run  *active
	dir  string
	done chan struct{} // closed once the state file names the directory (or saving failed)
}

// ReportDir tells the scheduler running ctx's campaign which directory the run writes, so a
// run lost with a killed scheduler is recorded with its directory (and can be resumed). It
// returns once the state file names it; outside a scheduled run it does nothing.
func ReportDir(ctx context.Context, dir string) {
	if report, ok := ctx.Value(dirKey{}).(func(string)); ok {
		report(dir)
	}
}

// dirReporter is what ReportDir calls for run a: it passes the directory to the loop, which
// owns the state, and waits until it is saved; a cancelled run does not wait.
func dirReporter(runCtx context.Context, a *active, notes chan<- dirNote) func(string) {
	return func(dir string) {
		n := dirNote{run: a, dir: dir, done: make(chan struct{})}
		select {
		case notes <- n:
		case <-runCtx.Done():
			return
		}
		select {
		case <-n.done:
		case <-runCtx.Done():
		}
	}
}

// noteDir records a running slot's campaign directory in its state file.
func (s *Scheduler) noteDir(n dirNote) error {
	defer close(n.done)
	j := n.run.job
	if j.running != n.run || j.st.Running == nil {
		return nil // the run already ended
	}
	j.st.Running.Dir = n.dir
	if err := s.save(j); err != nil {
		return fmt.Errorf("record the campaign directory of %s: %w", j.Name, err)
	}
	return nil
}

// lostRun is the failed run a slot still marked running at start stands for.
func (j *jobRun) lostRun(rs *RunningSlot, now time.Time) *Run {
	reason := "scheduler stopped during the run"
	if rs.PID > 0 {
		reason += fmt.Sprintf(" (pid %d, started %s)", rs.PID, rs.Started.Format(time.RFC3339))
	}
	return &Run{Campaign: j.Name, File: j.File, Slot: rs.Time.In(j.loc), Trigger: rs.Trigger,
		Started: rs.Started, Ended: now, Dir: rs.Dir, Outcome: Failed, Reason: reason,
		Err: errors.New(reason), Error: reason}
}

// recordLost hands every lost run to the Hook (history line, on_red) before anything runs,
// and only then clears it from the state file: a crash in between records it again at the
// next start rather than never.
func (s *Scheduler) recordLost(ctx context.Context) ([]Run, error) {
	var runs []Run
	for _, j := range s.jobs {
		if j.lost == nil {
			continue
		}
		r := *j.lost
		detail := r.Outcome + ": " + r.Reason
		if r.Dir != "" {
			detail += "; continue its campaign with 'perfdag resume " + r.Dir + "'"
		}
		s.emit(Event{Action: EventEnd, Campaign: j.Name, Slot: Slot{Time: r.Slot, Trigger: r.Trigger}, Run: &r, Detail: detail})
		if s.opts.Hook != nil {
			s.opts.Hook.AfterRun(ctx, r)
		}
		runs = append(runs, r)
		j.lost = nil
		j.st.LastRun = &r
		if err := s.save(j); err != nil {
			return runs, fmt.Errorf("record the lost run of %s: %w", j.Name, err)
		}
	}
	return runs, nil
}
