// Package loadgen drives load independently of any protocol: a closed loop that keeps exactly
// C requests in flight, or an open loop that issues requests at rate R (Poisson or constant
// arrivals from a seeded generator, absolute deadlines, an in-flight cap). It hands back the
// records in index order and a progress feed for a live terminal line.
package loadgen

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/perfdag/perfdag/schema"
)

// Arrival patterns of the open loop.
const (
	ArrivalPoisson  = "poisson"
	ArrivalConstant = "constant"
	ArrivalGamma    = "gamma" // gaps from a gamma distribution of shape Burstiness (vLLM bench's --burstiness)
)

// Config is one point's load.
type Config struct {
	Requests    int           // N: requests to issue
	Concurrency int           // closed loop: requests in flight; open loop: in-flight cap (0 = none)
	Rate        float64       // requests per second; 0 selects the closed loop
	Arrival     string        // open loop: poisson (default), constant or gamma
	Burstiness  float64       // gamma arrivals: the shape (1 is poisson, below 1 burstier, above 1 more even)
	Seed        int64         // seeds the inter-arrival generator
	Every       time.Duration // progress interval (default 250 ms); the final report always comes
	Adaptive    *Adaptive     // when set, Requests is the most to send and looks decide when to stop
}

// Progress is a live view of a run. Errors counts requests that failed; Cancelled those the
// run's own interrupt cut off (class cancelled), which are no failure of the server.
type Progress struct {
	Done, Total, Errors, Cancelled, InFlight int
	Adaptive                                 bool    // Total is a cap: looks decide when the point stops
	TTFTP50Ms                                float64 // median TTFT of the last RollingWindow valid requests (0 before any)
	Elapsed                                  time.Duration
}

// RollingWindow is how many recent valid requests the live TTFT median covers.
const RollingWindow = 256

// causedByCancel reports the failures an interrupted request shows (the transport was torn
// down under it); a server's own answer (an HTTP status, an error event) stays as it is.
func causedByCancel(class string) bool {
	switch class {
	case schema.ErrorTimeout, schema.ErrorDropped, schema.ErrorConnect:
		return true
	}
	return false
}

// Send issues request i and returns its record; it must return promptly once ctx ends.
type Send func(ctx context.Context, i int) schema.RequestRecord

// Validate checks a Config, naming the bad field.
func (c Config) Validate() error {
	switch {
	case c.Requests <= 0:
		return fmt.Errorf("loadgen: requests = %d: want at least 1", c.Requests)
	case c.Concurrency < 0:
		return fmt.Errorf("loadgen: concurrency = %d: want at least 1", c.Concurrency)
	case c.Rate == 0 && c.Concurrency == 0:
		return errors.New("loadgen: concurrency = 0 with no request rate: want a concurrency (closed loop) or a rate (open loop)")
	case c.Rate < 0 || math.IsNaN(c.Rate) || math.IsInf(c.Rate, 0):
		return fmt.Errorf("loadgen: rate = %v: want a positive number of requests per second", c.Rate)
	case c.Adaptive != nil && (c.Adaptive.Next == nil || c.Adaptive.Enough == nil):
		return errors.New("loadgen: adaptive without Next and Enough: want both")
	}
	switch c.Arrival {
	case "", ArrivalPoisson, ArrivalConstant:
	case ArrivalGamma:
		if !(c.Burstiness > 0) || math.IsInf(c.Burstiness, 0) {
			return fmt.Errorf("loadgen: gamma arrivals with burstiness = %v: want a positive shape", c.Burstiness)
		}
	default:
		return fmt.Errorf("loadgen: arrival = %q: want poisson, constant or gamma", c.Arrival)
	}
	return nil
}

// Run issues the requests and returns the records of those issued, in index order. When ctx
// ends, no new request starts, in-flight ones are cancelled through their ctx, and those that
// failed as a result (timeout, dropped, connect) are classed cancelled; Run then returns
// ctx's error with the records issued so far.
func Run(ctx context.Context, cfg Config, send Send, progress func(Progress)) ([]schema.RequestRecord, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Every <= 0 {
		cfg.Every = 250 * time.Millisecond
	}
	t := newTracker(cfg, progress)
	records := make([]schema.RequestRecord, cfg.Requests)
	lk := newLooker(cfg, records)
	finish := func(i int, sched slot) {
		rec := send(ctx, i)
		rec.Index = i
		rec.ScheduledNs, rec.CapDelayed, rec.LookHeld = sched.at, sched.capDelayed, sched.lookHeld
		if ctx.Err() != nil && causedByCancel(rec.ErrorClass) {
			rec.ErrorClass, rec.Error = schema.ErrorCancelled, "cancelled: "+rec.Error
		}
		records[i] = rec
		lk.finish(i)
		t.done(rec)
	}
	stopLooks := lk.start(ctx)
	if cfg.Rate > 0 {
		openLoop(ctx, cfg, lk, t, finish)
	} else {
		closedLoop(ctx, cfg, lk, t, finish)
	}
	stopLooks()
	t.final()
	return records[:lk.issued], ctx.Err()
}

// closedLoop runs C workers; each issues the next index as soon as its previous request ends.
func closedLoop(ctx context.Context, cfg Config, lk *looker, t *tracker, finish func(int, slot)) {
	var wg sync.WaitGroup
	for range min(cfg.Concurrency, cfg.Requests) {
		wg.Go(func() {
			for {
				i, _, ok := lk.take(ctx)
				if !ok {
					return
				}
				t.start()
				finish(i, slot{})
			}
		})
	}
	wg.Wait()
}

// tracker aggregates completions for the progress feed; one mutex serialises the callback.
type tracker struct {
	mu        sync.Mutex
	cfg       Config
	cb        func(Progress)
	begin     time.Time
	last      time.Time
	completed int
	errors    int
	cancelled int
	inFlight  int
	ttft      []float64 // ring of recent valid TTFTs (ms)
	ttftNext  int
}

func newTracker(cfg Config, cb func(Progress)) *tracker {
	now := time.Now()
	return &tracker{cfg: cfg, cb: cb, begin: now, last: now, ttft: make([]float64, 0, RollingWindow)}
}

func (t *tracker) start() {
	t.mu.Lock()
	t.inFlight++
	t.mu.Unlock()
}

func (t *tracker) done(rec schema.RequestRecord) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.inFlight--
	t.completed++
	if rec.ErrorClass == schema.ErrorCancelled {
		t.cancelled++
	} else if rec.ErrorClass != "" {
		t.errors++
	} else if rec.FirstTokenNs > 0 {
		v := float64(rec.FirstTokenNs-rec.StartNs) / 1e6
		if len(t.ttft) < RollingWindow {
			t.ttft = append(t.ttft, v)
		} else {
			t.ttft[t.ttftNext] = v
			t.ttftNext = (t.ttftNext + 1) % RollingWindow
		}
	}
	if t.cb != nil && time.Since(t.last) >= t.cfg.Every && t.completed < t.cfg.Requests {
		t.last = time.Now()
		t.cb(t.snapshot())
	}
}

// final reports the end state once, whatever the interval.
func (t *tracker) final() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cb != nil {
		t.cb(t.snapshot())
	}
}

func (t *tracker) snapshot() Progress {
	p := Progress{Done: t.completed, Total: t.cfg.Requests, Errors: t.errors, Cancelled: t.cancelled, InFlight: t.inFlight,
		Adaptive: t.cfg.Adaptive != nil, Elapsed: time.Since(t.begin)}
	if len(t.ttft) > 0 {
		s := append([]float64(nil), t.ttft...)
		sort.Float64s(s)
		p.TTFTP50Ms = median(s)
	}
	return p
}

// median of sorted values, interpolated between the middle two for an even count.
func median(s []float64) float64 {
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
