package schedule

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfdag/perfdag/schema"
)

// fakeClock is a Clock the test moves by hand; After fires when the clock passes its deadline.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []fakeWaiter
}

type fakeWaiter struct {
	at time.Time
	ch chan time.Time
}

func newFakeClock(t time.Time) *fakeClock { return &fakeClock{now: t} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- c.now
		return ch
	}
	c.waiters = append(c.waiters, fakeWaiter{at: c.now.Add(d), ch: ch})
	return ch
}

// Set moves the clock to t and fires every timer due by then.
func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if !w.at.After(t) {
			w.ch <- t
		} else {
			kept = append(kept, w)
		}
	}
	c.waiters = kept
}

// call is one Runner.Run the test controls: it returns when released or cancelled.
type call struct {
	file    string
	release chan error
}

// fakeRunner hands every call to the test (or finishes it at once when auto), and tracks how
// many runs of one file overlap.
type fakeRunner struct {
	auto    bool
	calls   chan *call
	mu      sync.Mutex
	started []string
	running map[string]int
	overlap atomic.Bool // two runs of one file at once: must never happen
	n       atomic.Int64
}

func newFakeRunner(auto bool) *fakeRunner {
	return &fakeRunner{auto: auto, calls: make(chan *call, 64), running: map[string]int{}}
}

func (r *fakeRunner) Run(ctx context.Context, file string) (string, error) {
	r.mu.Lock()
	r.running[file]++
	if r.running[file] > 1 {
		r.overlap.Store(true)
	}
	r.started = append(r.started, file)
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.running[file]--
		r.mu.Unlock()
	}()
	dir := fmt.Sprintf("campaigns/run-%d", r.n.Add(1))
	ReportDir(ctx, dir) // as cmd/perfdag's runner does once it created the directory
	if r.auto {
		return dir, nil
	}
	c := &call{file: file, release: make(chan error, 1)}
	r.calls <- c
	select {
	case err := <-c.release:
		return dir, err
	case <-ctx.Done():
		return dir, fmt.Errorf("interrupted: %w", ctx.Err())
	}
}

// next waits for the runner's next call.
func (r *fakeRunner) next(t *testing.T) *call {
	t.Helper()
	select {
	case c := <-r.calls:
		return c
	case <-time.After(time.Minute): // a hang bound, not a speed limit: the machine may be loaded
		t.Fatal("timed out waiting for a run to start")
		return nil
	}
}

// events collects what the scheduler decided, so tests wait on decisions, not on sleeps.
type events struct {
	ch  chan Event
	all []Event
}

func newEvents() *events { return &events{ch: make(chan Event, 256)} }

func (e *events) observe(ev Event) { e.ch <- ev }

// waitFor reads events until one with this action (and campaign, when set) arrives.
func (e *events) waitFor(t *testing.T, action, campaign string) Event {
	t.Helper()
	deadline := time.After(time.Minute) // a hang bound: the machine may be loaded
	for {
		select {
		case ev := <-e.ch:
			e.all = append(e.all, ev)
			if ev.Action == action && (campaign == "" || ev.Campaign == campaign) {
				return ev
			}
		case <-deadline:
			t.Fatalf("timed out waiting for a %q event; saw %v", action, actions(e.all))
			return Event{}
		}
	}
}

func actions(evs []Event) []string {
	var out []string
	for _, e := range evs {
		s := e.Campaign + ":" + e.Action
		if !e.Slot.Time.IsZero() {
			s += "@" + e.Slot.Time.UTC().Format("15:04")
		}
		out = append(out, s)
	}
	return out
}

// hookLog records every run the hook saw.
type hookLog struct {
	mu   sync.Mutex
	runs []Run
}

func (h *hookLog) AfterRun(_ context.Context, r Run) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.runs = append(h.runs, r)
}

func (h *hookLog) all() []Run {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Run(nil), h.runs...)
}

// at is a UTC time on 2026-01-05 (a Monday).
func at(hh, mm, ss int) time.Time { return time.Date(2026, 1, 5, hh, mm, ss, 0, time.UTC) }

func hourly(name, overlap string) Job {
	return Job{Name: name, File: name + ".yaml", Schedule: schema.Schedule{Cron: "0 * * * *", Overlap: overlap}}
}

// started runs s.Run in the background and returns a stop function that cancels it and
// waits for it to return.
func started(t *testing.T, s *Scheduler) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- s.Run(ctx) }()
	return func() {
		t.Helper()
		cancel()
		select {
		case err := <-errc:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(time.Minute): // a hang bound, not a speed limit: the machine may be loaded
			t.Fatal("scheduler did not stop after cancel")
		}
	}
}
