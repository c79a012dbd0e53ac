// Package schedule runs campaigns on cron expressions (robfig/cron/v3) in their IANA time
// zones: never two runs of one campaign at once (overlap skip, queue or replace), missed slots
// caught up within a window and a cap, and a persisted watermark per campaign so no slot runs
// twice across restarts. It knows nothing of what a campaign measures: it calls a Runner for
// each due slot and a Hook after each run. Time comes from a Clock, so tests drive it.
package schedule

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/perfdag/perfdag/schema"
)

// Clock is the scheduler's source of time: the system clock in production, a fake in tests.
type Clock interface {
	Now() time.Time
	// After delivers the time on the channel once d has passed (at once when d <= 0).
	After(d time.Duration) <-chan time.Time
}

// SystemClock is the wall clock.
type SystemClock struct{}

// Now returns the current time.
func (SystemClock) Now() time.Time { return time.Now() }

// After waits for d on the wall clock.
func (SystemClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Runner runs one campaign file into a fresh campaign directory and returns that directory
// (even when the run failed, if it got that far). It must stop promptly when ctx is cancelled,
// leaving the campaign checkpointed.
type Runner interface {
	Run(ctx context.Context, campaignFile string) (campaignDir string, err error)
}

// RunnerFunc adapts a function to Runner.
type RunnerFunc func(ctx context.Context, campaignFile string) (string, error)

// Run calls f.
func (f RunnerFunc) Run(ctx context.Context, file string) (string, error) { return f(ctx, file) }

// Hook is called after every run, before the campaign's next run may start (diff it against
// a baseline, notify). Calls for different campaigns may run concurrently.
type Hook interface {
	AfterRun(ctx context.Context, r Run)
}

// HookFunc adapts a function to Hook.
type HookFunc func(ctx context.Context, r Run)

// AfterRun calls f.
func (f HookFunc) AfterRun(ctx context.Context, r Run) { f(ctx, r) }

// Overlap policies: what a due slot does while the campaign's previous run is still going.
const (
	OverlapSkip    = "skip"    // drop the slot (default)
	OverlapQueue   = "queue"   // run it when the current run ends; at most one waits
	OverlapReplace = "replace" // cancel the current run and start this one
)

// Triggers say why a slot ran.
const (
	TriggerScheduled = "scheduled" // on time
	TriggerCatchup   = "catch-up"  // missed while the scheduler was down, within catchup_window
	TriggerQueued    = "queued"    // came due while a run was going (overlap queue)
)

// Outcomes of a run.
const (
	Succeeded   = "succeeded"
	Failed      = "failed"
	Interrupted = "interrupted"
)

// Job is one scheduled campaign.
type Job struct {
	Name     string          // campaign slug: names the state file; unique per scheduler
	File     string          // campaign file handed to the Runner
	Schedule schema.Schedule // cron, zone, overlap, catch-up
	// Exclusive lists resources the campaign holds while it runs (e.g. endpoint URLs): two
	// campaigns sharing one never run at once, the later waits. Benchmarks sharing an
	// endpoint would corrupt each other's numbers.
	Exclusive []string
}

// Slot is one fire time of a job and why it runs.
type Slot struct {
	Time    time.Time `json:"time"`
	Trigger string    `json:"trigger"`
}

// Run is what the Hook (and Once) receives about one finished run.
type Run struct {
	Campaign string    `json:"campaign"`
	File     string    `json:"file"`
	Slot     time.Time `json:"slot"` // in the schedule's zone
	Trigger  string    `json:"trigger"`
	Started  time.Time `json:"started"`
	Ended    time.Time `json:"ended"` // for a run lost with its scheduler: when the restart recorded it
	Dir      string    `json:"dir,omitempty"`
	Outcome  string    `json:"outcome"`          // succeeded, failed, interrupted
	Reason   string    `json:"reason,omitempty"` // why an interrupted run was cancelled, or a run was lost
	Err      error     `json:"-"`
	Error    string    `json:"error,omitempty"`
}

var slugRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)

// compiled is a validated job: its parsed expression, zone and schedule fingerprint.
type compiled struct {
	Job
	spec        cron.Schedule
	loc         *time.Location
	fingerprint string
	overlap     string
	catchupMax  int
}

func compile(j Job) (*compiled, error) {
	if !slugRE.MatchString(j.Name) {
		return nil, fmt.Errorf("%s: campaign %q cannot name a state file: want [a-z0-9._-]", j.File, j.Name)
	}
	sc := j.Schedule
	if sc.Timezone != "" {
		if _, err := time.LoadLocation(sc.Timezone); err != nil {
			return nil, fmt.Errorf("%s: schedule.timezone %q is not an IANA zone (e.g. Europe/Berlin): %w", j.File, sc.Timezone, err)
		}
	}
	spec, loc, err := ParseCron(sc.Cron, sc.Timezone, time.Now())
	if err != nil {
		return nil, fmt.Errorf("%s: schedule.cron %q: %w", j.File, sc.Cron, err)
	}
	c := &compiled{Job: j, spec: spec, loc: loc, overlap: sc.Overlap, catchupMax: sc.CatchupMax}
	switch c.overlap {
	case "":
		c.overlap = OverlapSkip
	case OverlapSkip, OverlapQueue, OverlapReplace:
	default:
		return nil, fmt.Errorf("%s: schedule.overlap %q: want skip, queue or replace", j.File, sc.Overlap)
	}
	switch {
	case c.catchupMax < 0:
		return nil, fmt.Errorf("%s: schedule.catchup_max %d must not be negative", j.File, sc.CatchupMax)
	case c.catchupMax == 0:
		c.catchupMax = 1
	}
	// Only what decides the slot grid enters the fingerprint: an edited expression or zone
	// must not replay slots of the old schedule; a changed window or cap may.
	sum := sha256.Sum256([]byte(sc.Cron + "\x00" + loc.String()))
	c.fingerprint = hex.EncodeToString(sum[:8])
	return c, nil
}

// next is the first slot strictly after t, in the job's zone; zero when there is none.
func (c *compiled) next(t time.Time) time.Time {
	n := c.spec.Next(t.In(c.loc))
	if n.IsZero() {
		return n
	}
	return n.In(c.loc)
}

// Upcoming lists the next n fire times of a job after from, in its zone.
func Upcoming(j Job, from time.Time, n int) ([]time.Time, error) {
	c, err := compile(j)
	if err != nil {
		return nil, err
	}
	var out []time.Time
	for t := from; len(out) < n; {
		t = c.next(t)
		if t.IsZero() {
			break
		}
		out = append(out, t)
	}
	return out, nil
}

// maxScan bounds how many slots one evaluation enumerates only to count them as too old
// (and how many candidates it keeps): counts beyond it are reported as "more than".
const maxScan = 1000

// dueSet is what one evaluation decided for a job.
type dueSet struct {
	accepted []Slot // catch-up slots (oldest first), then the on-time slot
	dropped  int    // missed slots not run (outside the window or over the cap)
	more     bool   // dropped is a lower bound (the scan stopped at maxScan)
}

// due decides every slot in (watermark, now], plus slots restored from the state file (they
// were waiting when the scheduler stopped): the latest is on time when at most grace old;
// older ones were missed and are caught up when within catchup_window, the most recent
// catchup_max of them. Afterwards every slot up to now is decided: now is the new watermark.
func (c *compiled) due(watermark, now time.Time, grace time.Duration, restored []time.Time) dueSet {
	var ds dueSet
	window := c.Schedule.CatchupWindow.Duration
	oldest := now.Add(-max(window, grace)) // slots before this are never run
	from := watermark
	if from.Before(oldest) {
		// Count what is too old to catch up, without enumerating years of slots.
		for t, n := c.next(from), 0; !t.IsZero() && t.Before(oldest); t, n = c.next(t), n+1 {
			if n == maxScan {
				ds.more = true
				break
			}
			ds.dropped++
		}
		from = oldest.Add(-time.Nanosecond)
	}
	var cands []time.Time
	for _, r := range restored {
		if r.Before(oldest) {
			ds.dropped++
		} else if !r.After(now) {
			cands = append(cands, r)
		}
	}
	for t := c.next(from); !t.IsZero() && !t.After(now); t = c.next(t) {
		cands = append(cands, t)
		if len(cands) > maxScan {
			cands = cands[1:]
			ds.dropped++
		}
	}
	slices.SortFunc(cands, time.Time.Compare)
	cands = slices.CompactFunc(cands, time.Time.Equal)
	if len(cands) == 0 {
		return ds
	}
	var onTime *time.Time
	if last := cands[len(cands)-1]; now.Sub(last) <= grace {
		onTime = &last
		cands = cands[:len(cands)-1]
	}
	if window <= 0 {
		ds.dropped += len(cands)
		cands = nil
	}
	if len(cands) > c.catchupMax {
		ds.dropped += len(cands) - c.catchupMax
		cands = cands[len(cands)-c.catchupMax:]
	}
	for _, t := range cands {
		ds.accepted = append(ds.accepted, Slot{Time: t.In(c.loc), Trigger: TriggerCatchup})
	}
	if onTime != nil {
		ds.accepted = append(ds.accepted, Slot{Time: onTime.In(c.loc), Trigger: TriggerScheduled})
	}
	return ds
}
