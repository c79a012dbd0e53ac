package loadgen

import (
	"context"
	"sync"

	"github.com/perfdag/perfdag/schema"
)

// Adaptive makes a point's count adaptive: Config.Requests becomes the most it sends, and at
// look points the completed prefix of requests (in issue order, so a look never favours the
// short requests that happen to finish first) is asked whether it is enough. Once it is, no
// new request starts; those in flight finish and stay in the point. The loop keeps its
// concurrency while a look is made: only a request more than Ahead past an undecided look
// waits for the decision.
type Adaptive struct {
	// Next is the prefix size of the look after one at prev (prev 0: the first look).
	Next func(prev int) int
	// Enough decides on the records of the first n requests (all completed).
	Enough func(prefix []schema.RequestRecord) bool
	// Ahead is how many requests may start past an undecided look: 0 means 4 × concurrency;
	// negative means none, so a point stops at exactly a look's prefix (deterministic tests).
	Ahead int
}

// looker issues indices in order and runs the looks of an Adaptive config beside the loop.
type looker struct {
	a        *Adaptive
	limit    int // Config.Requests
	ahead    int // Adaptive.Ahead resolved
	records  []schema.RequestRecord
	mu       sync.Mutex
	changed  chan struct{} // closed and replaced whenever a waiting issuer may proceed
	wake     chan struct{} // tells the look goroutine the prefix grew
	issued   int
	finished []bool
	prefix   int // requests 0..prefix-1 have all finished
	next     int // prefix size of the pending look; 0 when no look is left
	stopped  bool
	looks    int
}

func newLooker(cfg Config, records []schema.RequestRecord) *looker {
	lk := &looker{a: cfg.Adaptive, limit: cfg.Requests, records: records, changed: make(chan struct{})}
	if lk.a != nil {
		lk.finished = make([]bool, cfg.Requests)
		lk.wake = make(chan struct{}, 1)
		switch {
		case lk.a.Ahead == 0:
			lk.ahead = 4 * max(cfg.Concurrency, 1)
		case lk.a.Ahead > 0:
			lk.ahead = lk.a.Ahead
		}
		lk.next = lk.clamp(lk.a.Next(0))
	}
	return lk
}

// clamp keeps a look inside the point; a look at or past its end is no look (the caller
// decides on the whole point anyway).
func (lk *looker) clamp(n int) int {
	if n <= 0 || n >= lk.limit {
		return 0
	}
	return n
}

// take returns the next index to issue, waiting while it is more than Ahead past an
// undecided look (waited says it did); false when the point has its requests (count reached,
// enough, or ctx done).
func (lk *looker) take(ctx context.Context) (i int, waited, ok bool) {
	lk.mu.Lock()
	for {
		switch {
		case ctx.Err() != nil || lk.stopped || lk.issued >= lk.limit:
			lk.mu.Unlock()
			return 0, waited, false
		case lk.a == nil || lk.next == 0 || lk.issued < lk.next+lk.ahead:
			i := lk.issued
			lk.issued++
			lk.mu.Unlock()
			return i, waited, true
		}
		waited = true
		ch := lk.changed
		lk.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
		}
		lk.mu.Lock()
	}
}

// finish notes that request i ended (its record is in place).
func (lk *looker) finish(i int) {
	if lk.a == nil {
		return
	}
	lk.mu.Lock()
	lk.finished[i] = true
	for lk.prefix < len(lk.finished) && lk.finished[lk.prefix] {
		lk.prefix++
	}
	ready := lk.next > 0 && lk.prefix >= lk.next
	lk.mu.Unlock()
	if ready {
		select {
		case lk.wake <- struct{}{}:
		default:
		}
	}
}

// run makes the looks until quit closes, ctx ends or the point stops.
func (lk *looker) run(ctx context.Context, quit <-chan struct{}) {
	for {
		select {
		case <-lk.wake:
		case <-quit:
			return
		case <-ctx.Done():
			return
		}
		for {
			lk.mu.Lock()
			n := lk.next
			if n == 0 || lk.prefix < n || lk.stopped {
				lk.mu.Unlock()
				break
			}
			lk.mu.Unlock()
			enough := lk.a.Enough(lk.records[:n]) // the prefix is complete: no one writes it
			lk.mu.Lock()
			lk.looks++
			if enough {
				lk.stopped = true
			} else {
				lk.next = lk.clamp(lk.a.Next(n))
			}
			close(lk.changed)
			lk.changed = make(chan struct{})
			lk.mu.Unlock()
		}
	}
}

// start runs the looks beside the loop when the config is adaptive; the returned func stops
// them once the loop is over.
func (lk *looker) start(ctx context.Context) func() {
	if lk.a == nil {
		return func() {}
	}
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { lk.run(ctx, quit) })
	return func() {
		close(quit)
		wg.Wait()
	}
}
