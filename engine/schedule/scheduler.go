package schedule

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/perfdag/perfdag/engine/plural"
	"github.com/perfdag/perfdag/engine/workspace"
)

// DefaultGrace is how late a slot may be evaluated and still count as on time; older slots
// were missed and only run through catch-up.
const DefaultGrace = time.Minute

// maxSleep bounds one wait of the loop, so wall-clock jumps and host suspends are noticed.
const maxSleep = time.Minute

// Options configure a Scheduler.
type Options struct {
	StateDir string        // per-campaign state files; one scheduler per directory (locked)
	Runner   Runner        // runs a campaign file
	Hook     Hook          // after each run; optional
	Clock    Clock         // default SystemClock
	Grace    time.Duration // default DefaultGrace
	Log      io.Writer     // one line per decision; optional
	Observe  func(Event)   // every decision, for tests and UIs; called from the scheduler loop
}

// Scheduler runs jobs on their schedules.
type Scheduler struct {
	opts Options
	jobs []*jobRun
}

// jobRun is a job's live state inside the loop.
type jobRun struct {
	*compiled
	st       State
	restored []time.Time // pending slots from the state file, reconsidered on start
	pending  []Slot
	running  *active
	blocked  time.Time // slot last reported as blocked, so it is reported once
	fired    bool      // the pending slot waits for another process's run lock (a manual fire)
	lost     *Run      // a run the state file says was going when its scheduler died
}

type active struct {
	job     *jobRun
	slot    Slot
	started time.Time
	cancel  context.CancelCauseFunc
	unlock  func() // releases the run's locks (fire.go)
}

// New validates the jobs (expression, zone, overlap, unique names) and returns a scheduler.
func New(jobs []Job, opts Options) (*Scheduler, error) {
	if opts.StateDir == "" {
		return nil, errors.New("schedule: a state directory is required")
	}
	if opts.Runner == nil {
		return nil, errors.New("schedule: a runner is required")
	}
	if opts.Clock == nil {
		opts.Clock = SystemClock{}
	}
	if opts.Grace <= 0 {
		opts.Grace = DefaultGrace
	}
	s := &Scheduler{opts: opts}
	seen := map[string]string{}
	var errs []error
	for _, j := range jobs {
		c, err := compile(j)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if other, dup := seen[j.Name]; dup {
			errs = append(errs, fmt.Errorf("%s: campaign %q is also scheduled by %s: one campaign, one schedule", j.File, j.Name, other))
			continue
		}
		seen[j.Name] = j.File
		s.jobs = append(s.jobs, &jobRun{compiled: c})
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return s, nil
}

// Run schedules until ctx is cancelled, then cancels running campaigns (they checkpoint and
// stop), waits for them and their hooks, saves the state and returns.
func (s *Scheduler) Run(ctx context.Context) error {
	_, err := s.loop(ctx, false)
	return err
}

// Once runs every slot due now — on time or caught up — one after another per campaign, and
// returns their runs. For system cron and CI.
func (s *Scheduler) Once(ctx context.Context) ([]Run, error) {
	return s.loop(ctx, true)
}

func (s *Scheduler) loop(ctx context.Context, once bool) ([]Run, error) {
	if err := os.MkdirAll(s.opts.StateDir, 0o755); err != nil {
		return nil, fmt.Errorf("create state dir: %w", err)
	}
	unlock, err := workspace.Lock(s.opts.StateDir)
	if err != nil {
		return nil, fmt.Errorf("state dir %s is in use by another perfdag schedule: %w", s.opts.StateDir, err)
	}
	defer unlock()
	if err := s.restore(); err != nil {
		return nil, err
	}
	runs, err := s.recordLost(ctx)
	if err != nil {
		return runs, err
	}
	manual, err := s.recordLostManuals(ctx)
	runs = append(runs, manual...)
	if err != nil {
		return runs, err
	}
	done := make(chan Run)
	notes := make(chan dirNote)
	held := map[string]*jobRun{}
	evaluated := false
	for {
		if ctx.Err() != nil {
			s.stop(done, held, &runs)
			return runs, nil
		}
		now := s.opts.Clock.Now()
		if !once || !evaluated {
			if err := s.evaluate(now); err != nil {
				s.stop(done, held, &runs)
				return runs, err
			}
			evaluated = true
		}
		if err := s.startReady(ctx, done, notes, held); err != nil {
			s.stop(done, held, &runs)
			return runs, err
		}
		if once && s.idle() {
			return runs, nil
		}
		var timer <-chan time.Time
		if s.waitingForFire() {
			timer = s.opts.Clock.After(lockPoll)
		} else if !once {
			if next := s.nextSlot(); !next.IsZero() {
				s.emit(Event{Action: EventWait, Slot: Slot{Time: next}})
				// Wake at least every maxSleep: timers run on the monotonic clock, which stops
				// while the host is suspended, so a long sleep could overshoot the wall clock.
				timer = s.opts.Clock.After(min(next.Sub(s.opts.Clock.Now()), maxSleep))
			}
		}
		select {
		case <-ctx.Done():
			s.stop(done, held, &runs)
			return runs, nil
		case <-timer:
		case r := <-done:
			runs = append(runs, r)
			if err := s.finish(r, held); err != nil {
				s.stop(done, held, &runs)
				return runs, err
			}
		case n := <-notes:
			if err := s.noteDir(n); err != nil {
				s.stop(done, held, &runs)
				return runs, err
			}
		}
	}
}

// restore loads every job's state; a missing state or a changed schedule starts the
// watermark one grace period ago, so only an on-time slot runs and nothing stale replays.
// A slot still marked running becomes the job's lost run, recorded before anything runs.
func (s *Scheduler) restore() error {
	now := s.opts.Clock.Now()
	for _, j := range s.jobs {
		j.pending, j.running, j.restored, j.blocked, j.lost = nil, nil, nil, time.Time{}, nil
		st, found, err := ReadState(s.opts.StateDir, j.Name)
		if err != nil {
			return err
		}
		if found && st.Running != nil {
			j.lost = j.lostRun(st.Running, now)
		}
		switch {
		case !found:
			s.emit(Event{Action: EventReset, Campaign: j.Name, Detail: "first run under this state dir: no past slots are replayed"})
			st = State{Watermark: now.Add(-s.opts.Grace)}
		case st.Fingerprint != j.fingerprint:
			s.emit(Event{Action: EventReset, Campaign: j.Name, Detail: "schedule (cron or zone) changed: slots of the old schedule are not replayed"})
			st = State{Watermark: now.Add(-s.opts.Grace), LastRun: st.LastRun}
		default:
			for _, p := range st.Pending {
				j.restored = append(j.restored, p.Time)
			}
		}
		st.Campaign, st.File, st.Fingerprint = j.Name, j.File, j.fingerprint
		st.Pending, st.Running = nil, nil
		j.st = st
	}
	return nil
}

// evaluate decides every job's slots up to now and applies the overlap policy.
func (s *Scheduler) evaluate(now time.Time) error {
	for _, j := range s.jobs {
		if !j.next(j.st.Watermark).After(now) || j.restored != nil {
			ds := j.due(j.st.Watermark, now, s.opts.Grace, j.restored)
			j.restored = nil
			j.st.Watermark = now
			if ds.dropped > 0 {
				n := plural.N(ds.dropped, "missed slot")
				if ds.more {
					n = fmt.Sprintf("more than %d missed slots", ds.dropped)
				}
				s.emit(Event{Action: EventMissed, Campaign: j.Name, Count: ds.dropped,
					Detail: fmt.Sprintf("%s not caught up (catchup_window %s, catchup_max %d)", n, j.Schedule.CatchupWindow.Duration, j.catchupMax)})
			}
			s.accept(j, ds.accepted)
			if err := s.save(j); err != nil {
				return err
			}
		}
	}
	return nil
}

// accept applies the overlap policy to the slots one evaluation accepted for a job.
func (s *Scheduler) accept(j *jobRun, slots []Slot) {
	if len(slots) == 0 {
		return
	}
	if j.running == nil && len(j.pending) == 0 {
		j.pending = append(j.pending, slots...)
		return
	}
	newest := slots[len(slots)-1]
	switch j.overlap {
	case OverlapQueue:
		if len(j.pending) == 0 {
			newest.Trigger = TriggerQueued
			j.pending = append(j.pending, newest)
			s.emit(Event{Action: EventQueue, Campaign: j.Name, Slot: newest, Detail: "waits for the running campaign (overlap queue)"})
			slots = slots[:len(slots)-1]
		}
	case OverlapReplace:
		for _, old := range j.pending {
			s.emit(Event{Action: EventSkip, Campaign: j.Name, Slot: old, Detail: "superseded by a newer slot (overlap replace)"})
		}
		j.pending = []Slot{newest}
		slots = slots[:len(slots)-1]
		if j.running != nil {
			j.running.cancel(fmt.Errorf("replaced by slot %s (overlap replace)", newest.Time.Format(time.RFC3339)))
			s.emit(Event{Action: EventReplace, Campaign: j.Name, Slot: newest, Detail: "cancels the running campaign (overlap replace)"})
		}
	}
	for _, sl := range slots {
		s.emit(Event{Action: EventSkip, Campaign: j.Name, Slot: sl, Detail: "the previous run is still going (overlap " + j.overlap + ")"})
	}
}

// startReady starts the first pending slot of every idle job whose resources are free.
func (s *Scheduler) startReady(ctx context.Context, done chan<- Run, notes chan<- dirNote, held map[string]*jobRun) error {
	for _, j := range s.jobs {
		if j.running != nil || len(j.pending) == 0 {
			continue
		}
		slot := j.pending[0]
		if other := blocker(j, held); other != nil {
			if !j.blocked.Equal(slot.Time) {
				j.blocked = slot.Time
				s.emit(Event{Action: EventBlocked, Campaign: j.Name, Slot: slot, Detail: "waits for " + other.Name + ", which holds a shared resource"})
			}
			continue
		}
		unlock, err := tryRunLocks(s.opts.StateDir, j.compiled, slot)
		var locked *errLocked
		if errors.As(err, &locked) {
			if !j.blocked.Equal(slot.Time) {
				j.blocked = slot.Time
				s.emit(Event{Action: EventBlocked, Campaign: j.Name, Slot: slot, Detail: "waits for a run of another process (" + locked.holder + ")"})
			}
			j.fired = true
			continue
		}
		if err != nil {
			return err
		}
		j.fired = false
		j.pending = j.pending[1:]
		for _, r := range j.Exclusive {
			held[r] = j
		}
		runCtx, cancel := context.WithCancelCause(ctx)
		a := &active{job: j, slot: slot, started: s.opts.Clock.Now(), cancel: cancel, unlock: unlock}
		runCtx = context.WithValue(runCtx, dirKey{}, dirReporter(runCtx, a, notes))
		j.running = a
		// on disk before the run starts: a scheduler killed during it is found at restart
		j.st.Running = &RunningSlot{Slot: slot, PID: os.Getpid(), Started: a.started}
		if err := s.save(j); err != nil {
			cancel(err)
			return err
		}
		s.emit(Event{Action: EventStart, Campaign: j.Name, Slot: slot, Detail: slot.Trigger})
		go s.execute(ctx, runCtx, a, done)
	}
	return nil
}

func blocker(j *jobRun, held map[string]*jobRun) *jobRun {
	for _, r := range j.Exclusive {
		if other := held[r]; other != nil && other != j {
			return other
		}
	}
	return nil
}

// execute runs one slot and its hook, then reports on done.
func (s *Scheduler) execute(ctx, runCtx context.Context, a *active, done chan<- Run) {
	r := s.runSlot(runCtx, a.job.compiled, a.slot, a.started)
	a.cancel(nil)
	if s.opts.Hook != nil {
		s.opts.Hook.AfterRun(ctx, r)
	}
	done <- r
}

// finish records a run's end and frees its campaign and resources.
func (s *Scheduler) finish(r Run, held map[string]*jobRun) error {
	for _, j := range s.jobs {
		if j.running == nil || j.Name != r.Campaign {
			continue
		}
		for _, res := range j.Exclusive {
			if held[res] == j {
				delete(held, res)
			}
		}
		j.running.unlock()
		j.running, j.st.Running = nil, nil
		last := r
		j.st.LastRun = &last
		s.emit(Event{Action: EventEnd, Campaign: j.Name, Slot: Slot{Time: r.Slot, Trigger: r.Trigger}, Run: &last, Detail: r.Outcome})
		return s.save(j)
	}
	return nil
}

// stop cancels every running campaign and waits for it (and its hook) to end.
func (s *Scheduler) stop(done <-chan Run, held map[string]*jobRun, runs *[]Run) {
	n := 0
	for _, j := range s.jobs {
		if j.running != nil {
			j.running.cancel(errors.New("scheduler stopping"))
			n++
		}
	}
	for ; n > 0; n-- {
		r := <-done
		*runs = append(*runs, r)
		_ = s.finish(r, held)
	}
	for _, j := range s.jobs {
		_ = s.save(j)
	}
}

// waitingForFire says a pending slot waits for another process's run (a manual fire).
func (s *Scheduler) waitingForFire() bool {
	for _, j := range s.jobs {
		if j.fired && j.running == nil && len(j.pending) > 0 {
			return true
		}
	}
	return false
}

func (s *Scheduler) idle() bool {
	for _, j := range s.jobs {
		if j.running != nil || len(j.pending) > 0 {
			return false
		}
	}
	return true
}

// nextSlot is the earliest next fire time over all jobs.
func (s *Scheduler) nextSlot() time.Time {
	var next time.Time
	for _, j := range s.jobs {
		if t := j.next(j.st.Watermark); !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	return next
}

func (s *Scheduler) save(j *jobRun) error {
	j.st.Pending = append([]Slot(nil), j.pending...)
	j.st.Updated = s.opts.Clock.Now().UTC()
	return writeState(s.opts.StateDir, &j.st)
}
