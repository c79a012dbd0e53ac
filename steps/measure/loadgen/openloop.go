package loadgen

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/perfdag/perfdag/steps/measure/sse"
)

// slot is how the open loop handed a request over: when its arrival was scheduled (on the
// records' clock, sse.Now) and whether the in-flight cap held it back. A closed loop's is zero.
type slot struct {
	at         int64
	capDelayed bool
	lookHeld   bool
}

// job is one request handed to a worker.
type job struct {
	i int
	s slot
}

// openLoop is the open loop's one scheduler (this goroutine): request i is due at start +
// Schedule(cfg)[i], an absolute deadline on the clock, so neither a late wake-up nor a wait
// for the cap nor a slow completion ever shifts a later arrival (no coordinated omission: a
// send that cannot go out on time goes out late and its record says when it was due). A due
// request takes an in-flight slot (with a cap), then goes to an idle worker; a new worker is
// started only when none is idle, so there are never more goroutines than the cap (without
// one, than the most requests in flight at once), never one per request. When every slot is
// busy the scheduler waits for one; the sends it holds back meanwhile — the one that waited
// and every later one already due when the wait ended — are marked cap-delayed. An adaptive
// point's look holds sends the same way (Adaptive.Ahead past a look whose earlier requests
// are unanswered): those are marked look-held, so a late send says who held it.
func openLoop(ctx context.Context, cfg Config, lk *looker, t *tracker, finish func(int, slot)) {
	var slots chan struct{}
	if cfg.Concurrency > 0 {
		slots = make(chan struct{}, cfg.Concurrency)
	}
	run := func(j job) {
		finish(j.i, j.s)
		if slots != nil {
			<-slots
		}
	}
	jobs := make(chan job) // unbuffered: a receive is an idle worker
	var wg sync.WaitGroup
	defer func() {
		close(jobs)
		wg.Wait()
	}()
	workers := 0
	offsets := Schedule(cfg)
	start := time.Now()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var capFreed time.Time  // when the scheduler last got a slot it had waited for
	var lookFreed time.Time // when a look last let a send go that it had held
	for i := range offsets {
		due := start.Add(offsets[i])
		if d := time.Until(due); d > 0 {
			timer.Reset(d)
			select {
			case <-timer.C:
			case <-ctx.Done():
				return
			}
		}
		capDelayed := due.Before(capFreed)
		if slots != nil {
			select {
			case slots <- struct{}{}:
			default:
				capDelayed = true
				select {
				case slots <- struct{}{}:
					capFreed = time.Now()
				case <-ctx.Done():
					return
				}
			}
		}
		lookHeld := due.Before(lookFreed)
		_, waited, ok := lk.take(ctx) // one issuer: the index it hands out is i
		if !ok {
			if slots != nil {
				<-slots
			}
			return
		}
		if waited {
			lookHeld, lookFreed = true, time.Now()
		}
		t.start()
		j := job{i: i, s: slot{at: sse.At(due), capDelayed: capDelayed, lookHeld: lookHeld}}
		select {
		case jobs <- j:
			continue
		default:
		}
		if slots == nil || workers < cfg.Concurrency {
			workers++
			wg.Go(func() {
				run(j)
				for j := range jobs {
					run(j)
				}
			})
			continue
		}
		// Every worker exists and this send holds a slot, so at most cap − 1 are busy: one is
		// between its release and its next receive, a moment away.
		jobs <- j
	}
}

// Schedule returns when each request of an open loop is due, as offsets from the point's
// start: the first at 0, then gaps exponential with mean 1/R (poisson), exactly 1/R
// (constant), or gamma-distributed with shape k = Burstiness and mean 1/R (gamma: their
// coefficient of variation is 1/√k, as vLLM bench's --burstiness draws them), from a generator
// seeded by cfg.Seed, so the same config always gives the same schedule. Offsets are summed in floating point and rounded once, so a constant rate's nth
// arrival is at n/R to the nanosecond however long the point.
func Schedule(cfg Config) []time.Duration {
	at := make([]time.Duration, cfg.Requests)
	if cfg.Rate <= 0 {
		return at
	}
	mean := float64(time.Second) / cfg.Rate
	src := rand.NewPCG(uint64(cfg.Seed), 0x6c6f616467656e) // "loadgen"
	rng := rand.New(src)
	gamma := distuv.Gamma{Alpha: cfg.Burstiness, Beta: cfg.Burstiness / mean, Src: src}
	sum := 0.0
	for i := 1; i < len(at); i++ {
		switch cfg.Arrival {
		case ArrivalConstant:
			sum = float64(i) * mean
		case ArrivalGamma:
			sum += gamma.Rand()
		default:
			sum += rng.ExpFloat64() * mean
		}
		at[i] = time.Duration(sum + 0.5)
	}
	return at
}

// Arrivals returns the gap before each request of an open loop (Schedule's differences): the
// first is 0, the others exponential with mean 1/R (poisson) or 1/R (constant).
func Arrivals(cfg Config) []time.Duration {
	at := Schedule(cfg)
	gaps := make([]time.Duration, len(at))
	for i := 1; i < len(at); i++ {
		gaps[i] = at[i] - at[i-1]
	}
	return gaps
}
