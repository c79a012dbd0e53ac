package schedule

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// TriggerManual marks a run fired by hand (perfdag schedule --now), not by the cron grid.
const TriggerManual = "manual"

// A campaign's runs hold run locks in the state directory while they go — one for the
// campaign, one per exclusive resource — so that a manual fire from another process never
// overlaps a scheduled run of the same campaign (or one holding the same endpoint), and a slot
// coming due during a manual fire waits for it. The state directory's own lock stays with the
// long-running scheduler: a manual fire never takes it and never writes the state file, so it
// consumes no slot and moves no watermark.

// lockPoll is how often a slot blocked by another process's run lock tries again.
const lockPoll = 2 * time.Second

// BusyError says a manual fire found the campaign (or a resource it holds) running.
type BusyError struct {
	Campaign string
	Holder   string // what the lock file says about its holder: pid, trigger, slot
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("campaign %s is running (%s): a manual fire would overlap it; wait for that run to end and fire again", e.Campaign, e.Holder)
}

// runLockPaths are the lock files a job's run holds: its campaign's, then one per resource.
func runLockPaths(stateDir string, j *compiled) []string {
	paths := []string{filepath.Join(stateDir, j.Name+".run.lock")}
	for _, r := range j.Exclusive {
		sum := sha256.Sum256([]byte(r))
		paths = append(paths, filepath.Join(stateDir, "resource-"+hex.EncodeToString(sum[:6])+".run.lock"))
	}
	return paths
}

// errLocked is tryRunLocks' answer when another process holds one of the locks.
type errLocked struct{ holder string }

func (e *errLocked) Error() string { return "held by " + e.holder }

// tryRunLocks takes every run lock of j without waiting and writes who holds them (pid,
// trigger, slot); when one is held elsewhere it releases what it took and says who holds it.
func tryRunLocks(stateDir string, j *compiled, slot Slot) (unlock func(), err error) {
	var held []*os.File
	release := func() {
		for _, f := range held {
			_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
			f.Close()
		}
	}
	for _, p := range runLockPaths(stateDir, j) {
		f, err := os.OpenFile(p, os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			release()
			return nil, fmt.Errorf("run lock of %s: %w", j.Name, err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			b, _ := os.ReadFile(p)
			f.Close()
			release()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, &errLocked{holder: strings.TrimSpace(string(b))}
			}
			return nil, fmt.Errorf("run lock of %s: %w", j.Name, err)
		}
		_ = f.Truncate(0)
		fmt.Fprintf(f, "pid %d, %s run of %s, slot %s", os.Getpid(), slot.Trigger, j.Name, slot.Time.Format(time.RFC3339))
		held = append(held, f)
	}
	return release, nil
}

// Fire runs the named job once, now, as a manual fire: through the same Runner and Hook as a
// due slot (the Hook sees Trigger "manual" and the fire time as the slot), holding the
// campaign's run locks. It never takes the state directory's lock, writes no state file and
// moves no watermark (its own record, <campaign>.manual.json, lives only while it runs: see
// manual.go), so it can run beside a long-running scheduler of the same state
// directory and the next due slot still runs. When a run of the campaign (or of a campaign
// sharing its resources) is going, it refuses at once with a *BusyError.
func (s *Scheduler) Fire(ctx context.Context, name string) (Run, error) {
	var j *jobRun
	for _, c := range s.jobs {
		if c.Name == name {
			j = c
		}
	}
	if j == nil {
		return Run{}, fmt.Errorf("no scheduled campaign named %s", name)
	}
	if err := os.MkdirAll(s.opts.StateDir, 0o755); err != nil {
		return Run{}, fmt.Errorf("create state dir: %w", err)
	}
	started := s.opts.Clock.Now()
	slot := Slot{Time: started.In(j.loc).Truncate(time.Second), Trigger: TriggerManual}
	unlock, err := tryRunLocks(s.opts.StateDir, j.compiled, slot)
	var locked *errLocked
	if errors.As(err, &locked) {
		return Run{}, &BusyError{Campaign: name, Holder: locked.holder}
	}
	if err != nil {
		return Run{}, err
	}
	defer unlock()
	if _, err := s.recordLostManual(ctx, j); err != nil { // an earlier manual fire that died
		return Run{}, err
	}
	rs := RunningSlot{Slot: slot, PID: os.Getpid(), Started: started}
	if err := writeManual(s.opts.StateDir, name, rs); err != nil {
		return Run{}, err
	}
	s.emit(Event{Action: EventStart, Campaign: name, Slot: slot, Detail: TriggerManual})
	runCtx, cancel := context.WithCancelCause(ctx)
	runCtx = context.WithValue(runCtx, dirKey{}, manualDirReporter(s.opts.StateDir, name, &rs))
	r := s.runSlot(runCtx, j.compiled, slot, started)
	cancel(nil)
	if s.opts.Hook != nil {
		s.opts.Hook.AfterRun(ctx, r)
	}
	if err := os.Remove(manualPath(s.opts.StateDir, name)); err != nil {
		return r, fmt.Errorf("the manual fire ran, but its record stays: %w", err)
	}
	s.emit(Event{Action: EventEnd, Campaign: name, Slot: slot, Run: &r, Detail: r.Outcome})
	return r, nil
}

// runSlot runs one slot of j through the Runner and says how it ended.
func (s *Scheduler) runSlot(runCtx context.Context, j *compiled, slot Slot, started time.Time) Run {
	dir, err := s.opts.Runner.Run(runCtx, j.File)
	r := Run{Campaign: j.Name, File: j.File, Slot: slot.Time, Trigger: slot.Trigger,
		Started: started, Ended: s.opts.Clock.Now(), Dir: dir, Err: err}
	switch {
	case err == nil:
		r.Outcome = Succeeded
	case runCtx.Err() != nil:
		r.Outcome = Interrupted
		r.Reason = "scheduler stopping"
		if slot.Trigger == TriggerManual {
			r.Reason = "manual fire interrupted"
		}
		if cause := context.Cause(runCtx); cause != nil && !errors.Is(cause, context.Canceled) {
			r.Reason = cause.Error()
		}
	default:
		r.Outcome = Failed
	}
	if err != nil {
		r.Error = err.Error()
	}
	return r
}
