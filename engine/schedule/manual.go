package schedule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/perfdag/perfdag/engine/checkpoint"
)

// A manual fire killed during its run (SIGKILL, power cut) would leave no trace in the
// history: it writes no state file. So before its run starts it writes
// <state>/<campaign>.manual.json — the slot, its pid, its start and, once the Runner reports
// it, the campaign directory — and removes it after the Hook. The next manual fire or scheduler
// start that finds the file while the campaign's run lock is free (its writer is gone) hands
// the Hook a failed run for it, as recordLost does for a scheduled slot.

// ManualSchema names the manual fire's running file.
const ManualSchema = "schedule_manual_v1"

type manualState struct {
	Schema string `json:"schema"`
	RunningSlot
}

func manualPath(stateDir, campaign string) string {
	return filepath.Join(stateDir, campaign+".manual.json")
}

func writeManual(stateDir, campaign string, rs RunningSlot) error {
	b, err := json.MarshalIndent(manualState{Schema: ManualSchema, RunningSlot: rs}, "", "  ")
	if err != nil {
		return fmt.Errorf("encode the manual fire of %s: %w", campaign, err)
	}
	return checkpoint.WriteFile(manualPath(stateDir, campaign), append(b, '\n'))
}

// lostManual is the failed run a manual fire's leftover file stands for; nil without one. The
// caller holds the campaign's run locks, so the file's writer is gone.
func (s *Scheduler) lostManual(j *jobRun) (*Run, error) {
	b, err := os.ReadFile(manualPath(s.opts.StateDir, j.Name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the manual fire of %s: %w", j.Name, err)
	}
	var m manualState
	if err := json.Unmarshal(b, &m); err != nil || m.Schema != ManualSchema {
		return nil, fmt.Errorf("%s: not a manual fire's record (%v): delete it", manualPath(s.opts.StateDir, j.Name), err)
	}
	reason := fmt.Sprintf("manual fire stopped during the run (pid %d, started %s)", m.PID, m.Started.Format(time.RFC3339))
	return &Run{Campaign: j.Name, File: j.File, Slot: m.Time.In(j.loc), Trigger: TriggerManual, Started: m.Started,
		Ended: s.opts.Clock.Now(), Dir: m.Dir, Outcome: Failed, Reason: reason, Err: errors.New(reason), Error: reason}, nil
}

// recordLostManual hands a dead manual fire of j to the Hook (history line, verdict.json,
// on_red) and then removes its file; the caller holds j's run locks.
func (s *Scheduler) recordLostManual(ctx context.Context, j *jobRun) (*Run, error) {
	r, err := s.lostManual(j)
	if err != nil || r == nil {
		return nil, err
	}
	detail := r.Outcome + ": " + r.Reason
	if r.Dir != "" {
		detail += "; continue its campaign with 'perfdag resume " + r.Dir + "'"
	}
	s.emit(Event{Action: EventEnd, Campaign: j.Name, Slot: Slot{Time: r.Slot, Trigger: r.Trigger}, Run: r, Detail: detail})
	if s.opts.Hook != nil {
		s.opts.Hook.AfterRun(ctx, *r)
	}
	if err := os.Remove(manualPath(s.opts.StateDir, j.Name)); err != nil {
		return r, fmt.Errorf("record the lost manual fire of %s: %w", j.Name, err)
	}
	return r, nil
}

// recordLostManuals records the dead manual fires of every job whose run lock is free, at a
// scheduler's start; a manual fire still going (its lock held) is left to finish.
func (s *Scheduler) recordLostManuals(ctx context.Context) ([]Run, error) {
	var runs []Run
	for _, j := range s.jobs {
		if _, err := os.Stat(manualPath(s.opts.StateDir, j.Name)); err != nil {
			continue
		}
		unlock, err := tryRunLocks(s.opts.StateDir, j.compiled, Slot{Trigger: "recovery", Time: s.opts.Clock.Now()})
		var locked *errLocked
		if errors.As(err, &locked) {
			continue
		}
		if err != nil {
			return runs, err
		}
		r, err := s.recordLostManual(ctx, j)
		unlock()
		if r != nil {
			runs = append(runs, *r)
		}
		if err != nil {
			return runs, err
		}
	}
	return runs, nil
}

// manualDirReporter is ReportDir's function in a manual fire: the file names the directory.
func manualDirReporter(stateDir, campaign string, rs *RunningSlot) func(string) {
	return func(dir string) {
		rs.Dir = dir
		_ = writeManual(stateDir, campaign, *rs) // best effort: a lost fire is still recorded, without its directory
	}
}
