package loadgen

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/sse"
)

// gauge tracks requests in flight and the most seen at once.
type gauge struct {
	now, peak atomic.Int64
}

func (g *gauge) enter() {
	n := g.now.Add(1)
	for {
		p := g.peak.Load()
		if n <= p || g.peak.CompareAndSwap(p, n) {
			return
		}
	}
}

func (g *gauge) leave() { g.now.Add(-1) }

// sleeper is a Send that holds each request for d (or until ctx ends).
func sleeper(g *gauge, d time.Duration) Send {
	return func(ctx context.Context, i int) schema.RequestRecord {
		g.enter()
		defer g.leave()
		start := sse.Now()
		select {
		case <-time.After(d):
			return schema.RequestRecord{Index: -1, StartNs: start, FirstTokenNs: start + int64(i+1)*int64(time.Millisecond), EndNs: sse.Now()}
		case <-ctx.Done():
			return schema.RequestRecord{StartNs: start, EndNs: sse.Now(), ErrorClass: schema.ErrorTimeout, Error: "gave up"}
		}
	}
}

// holder is a Send that holds every request until want requests have been in flight at once
// (or 10 s have passed: a hang bound, after which the peak check fails), then answers at
// once. Whether the loop reaches its concurrency is then an event, not a race between sleeps
// on a loaded machine.
func holder(g *gauge, want int64) Send {
	reached := make(chan struct{})
	var once sync.Once
	return func(ctx context.Context, i int) schema.RequestRecord {
		g.enter()
		defer g.leave()
		start := sse.Now()
		if g.peak.Load() >= want {
			once.Do(func() { close(reached) })
		}
		select {
		case <-reached:
		case <-time.After(10 * time.Second):
			once.Do(func() { close(reached) })
		case <-ctx.Done():
		}
		return schema.RequestRecord{Index: -1, StartNs: start, FirstTokenNs: start + int64(i+1)*int64(time.Millisecond), EndNs: sse.Now()}
	}
}

func TestClosedLoopKeepsConcurrency(t *testing.T) {
	cases := []struct {
		name            string
		requests, conc  int
		wantPeak        int64
		wantRecordCount int
	}{
		{"C below N", 24, 4, 4, 24},
		{"C equals N", 8, 8, 8, 8},
		{"C above N", 3, 10, 3, 3},
		{"one at a time", 5, 1, 1, 5},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var g gauge
			recs, err := Run(context.Background(), Config{Requests: c.requests, Concurrency: c.conc}, holder(&g, c.wantPeak), nil)
			if err != nil {
				t.Fatal(err)
			}
			if g.peak.Load() != c.wantPeak {
				t.Errorf("peak in flight = %d, want %d", g.peak.Load(), c.wantPeak)
			}
			if len(recs) != c.wantRecordCount {
				t.Fatalf("records = %d, want %d", len(recs), c.wantRecordCount)
			}
			for i, r := range recs {
				if r.Index != i {
					t.Fatalf("record %d has index %d: records must come back in index order", i, r.Index)
				}
			}
		})
	}
}

func TestArrivals(t *testing.T) {
	// Constant: every gap after the first is exactly 1/R = 1 s / 50 = 20 ms.
	gaps := Arrivals(Config{Requests: 4, Rate: 50, Arrival: ArrivalConstant})
	want := []time.Duration{0, 20 * time.Millisecond, 20 * time.Millisecond, 20 * time.Millisecond}
	for i := range want {
		if gaps[i] != want[i] {
			t.Fatalf("constant gaps = %v, want %v", gaps, want)
		}
	}
	// Poisson: exponential gaps with mean 1/R = 10 ms; over 20,000 gaps the sample mean is
	// within 3 % (the standard error is 10 ms / √20000 ≈ 0.07 ms, i.e. 0.7 %).
	p := Arrivals(Config{Requests: 20001, Rate: 100, Seed: 7})
	var sum time.Duration
	for _, g := range p[1:] {
		if g < 0 {
			t.Fatalf("negative gap %v", g)
		}
		sum += g
	}
	if mean := sum / 20000; mean < 9700*time.Microsecond || mean > 10300*time.Microsecond {
		t.Errorf("poisson mean gap = %v, want 10 ms ± 3 %%", mean)
	}
	again := Arrivals(Config{Requests: 20001, Rate: 100, Seed: 7})
	other := Arrivals(Config{Requests: 20001, Rate: 100, Seed: 8})
	if again[500] != p[500] || other[500] == p[500] {
		t.Errorf("same seed must give the same schedule and another seed another one")
	}
}

func TestOpenLoopFollowsSchedule(t *testing.T) {
	// 21 requests at a constant 100/s: request i is due at i × 10 ms. With one slot, request 0
	// holds it past request 10's due time, so requests 1..10 are all overdue when it frees.
	// Deadlines are absolute, so overdue requests go out at once, one after the other; a
	// scheduler that waited 10 ms after each issue (drift) would space every one of them at
	// least 10 ms apart. Both facts are one-sided, so a loaded machine cannot fake either.
	const gap = 10 * time.Millisecond
	begin := time.Now()
	var mu sync.Mutex
	issued := make([]time.Duration, 21)
	send := func(ctx context.Context, i int) schema.RequestRecord {
		mu.Lock()
		issued[i] = time.Since(begin)
		mu.Unlock()
		if i == 0 {
			time.Sleep(10*gap + gap/2)
		}
		return schema.RequestRecord{StartNs: 1, FirstTokenNs: 2, EndNs: 3}
	}
	recs, err := Run(context.Background(), Config{Requests: 21, Rate: 100, Concurrency: 1, Arrival: ArrivalConstant}, send, nil)
	if err != nil || len(recs) != 21 {
		t.Fatalf("records %d, err %v", len(recs), err)
	}
	for i, at := range issued {
		if due := time.Duration(i) * gap; at < due {
			t.Errorf("request %d issued at %v, before its due time %v", i, at, due)
		}
	}
	closest := time.Duration(math.MaxInt64)
	for i := 2; i <= 10; i++ {
		closest = min(closest, issued[i]-issued[i-1])
	}
	if closest >= gap {
		t.Errorf("overdue requests 1..10 went out at least %v apart (%v): the schedule drifts instead of catching up", closest, issued[:11])
	}
}

func TestOpenLoopInFlightCap(t *testing.T) {
	var g gauge
	recs, err := Run(context.Background(), Config{Requests: 12, Rate: 1000, Concurrency: 3, Arrival: ArrivalConstant}, holder(&g, 3), nil)
	if err != nil || len(recs) != 12 {
		t.Fatalf("records %d, err %v", len(recs), err)
	}
	if g.peak.Load() != 3 {
		t.Errorf("peak in flight = %d, want the cap 3", g.peak.Load())
	}
}

func TestCancelStopsIssuingAndClassesInFlight(t *testing.T) {
	for _, cfg := range []Config{{Requests: 100, Concurrency: 4}, {Requests: 100, Rate: 200, Concurrency: 4}} {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Millisecond)
		var g gauge
		// The sends sleep an hour: Run can only return, with the context's error, because
		// the context was cancelled.
		recs, err := Run(ctx, cfg, sleeper(&g, time.Hour), nil)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("%+v: err = %v, want the context's error", cfg, err)
		}
		if len(recs) == 0 || len(recs) > 4 {
			t.Fatalf("%+v: %d records, want the in-flight ones only (1..4)", cfg, len(recs))
		}
		for _, r := range recs {
			if r.ErrorClass != schema.ErrorCancelled || !strings.HasPrefix(r.Error, "cancelled") {
				t.Errorf("%+v: in-flight record classed %q (%s), want cancelled", cfg, r.ErrorClass, r.Error)
			}
		}
	}
}

func TestProgress(t *testing.T) {
	// Request i has TTFT (i+1) ms (see sleeper); request 3 fails. Valid TTFTs 1, 2, 3, 5, 6 ms
	// → median 3 ms.
	send := func(ctx context.Context, i int) schema.RequestRecord {
		if i == 3 {
			return schema.RequestRecord{ErrorClass: schema.ErrorHTTP}
		}
		return schema.RequestRecord{StartNs: 1000, FirstTokenNs: 1000 + int64(i+1)*int64(time.Millisecond)}
	}
	var last Progress
	calls := 0
	_, err := Run(context.Background(), Config{Requests: 6, Concurrency: 1, Every: time.Hour}, send, func(p Progress) { last = p; calls++ })
	if err != nil {
		t.Fatal(err)
	}
	if calls != 1 {
		t.Errorf("progress called %d times with a one-hour interval, want the final report only", calls)
	}
	if last.Done != 6 || last.Total != 6 || last.Errors != 1 || last.InFlight != 0 || last.TTFTP50Ms != 3 {
		t.Errorf("final progress = %+v, want done 6/6, 1 error, none in flight, TTFT p50 3 ms", last)
	}
}

// TestGammaArrivals: gamma gaps keep the mean 1/R and have the coefficient of variation
// 1/√burstiness (burstier below 1, more even above; 1 is Poisson's), from the seed alone.
func TestGammaArrivals(t *testing.T) {
	for _, k := range []float64{0.25, 1, 4} {
		cfg := Config{Requests: 40001, Rate: 100, Arrival: ArrivalGamma, Burstiness: k, Seed: 7}
		gaps := Arrivals(cfg)
		var sum, sq float64
		for _, g := range gaps[1:] {
			if g < 0 {
				t.Fatalf("burstiness %v: negative gap %v", k, g)
			}
			x := float64(g) / float64(time.Millisecond)
			sum, sq = sum+x, sq+x*x
		}
		n := float64(len(gaps) - 1)
		mean := sum / n
		cv := math.Sqrt(sq/n-mean*mean) / mean
		// standard errors: mean 10 ms × cv / √n (≤ 0.1 ms), the cv's about cv/√(2n)·√(1+…) (≤ 3 %)
		if math.Abs(mean-10) > 0.3 {
			t.Errorf("burstiness %v: mean gap %.3f ms, want 10 ± 0.3", k, mean)
		}
		if want := 1 / math.Sqrt(k); math.Abs(cv-want) > 0.06*want {
			t.Errorf("burstiness %v: coefficient of variation %.3f, want %.3f ± 6 %%", k, cv, want)
		}
		if again := Arrivals(cfg); again[777] != gaps[777] {
			t.Errorf("burstiness %v: the same seed gave another schedule", k)
		}
	}
}

func TestValidate(t *testing.T) {
	cases := []struct {
		cfg  Config
		want string
	}{
		{Config{Requests: 0, Concurrency: 1}, "requests = 0"},
		{Config{Requests: 1}, "concurrency = 0"},
		{Config{Requests: 1, Concurrency: -1}, "concurrency = -1"},
		{Config{Requests: 1, Rate: -2}, "rate = -2"},
		{Config{Requests: 1, Rate: 2, Arrival: "bursty"}, `arrival = "bursty"`},
		{Config{Requests: 1, Rate: 2, Arrival: ArrivalGamma}, "burstiness = 0"},
		{Config{Requests: 1, Rate: 2, Arrival: ArrivalGamma, Burstiness: 0.5}, ""},
		{Config{Requests: 1, Rate: 2}, ""},
	}
	for _, c := range cases {
		err := c.cfg.Validate()
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("Validate(%+v) = %v, want %q", c.cfg, err, c.want)
		}
	}
}

// TestProgressInterrupted: requests the run's own interrupt cuts off count as cancelled, not
// as errors; a server's answer during the interrupt (an HTTP error) stays an error.
func TestProgressInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	send := func(ctx context.Context, i int) schema.RequestRecord {
		switch i {
		case 0:
			return schema.RequestRecord{StartNs: 1000, FirstTokenNs: 2000, LastContentNs: 3000}
		case 1:
			cancel()
			return schema.RequestRecord{ErrorClass: schema.ErrorHTTP}
		}
		<-ctx.Done()
		return schema.RequestRecord{ErrorClass: schema.ErrorDropped}
	}
	var last Progress
	recs, err := Run(ctx, Config{Requests: 8, Concurrency: 2, Every: time.Hour}, send, func(p Progress) { last = p })
	if err == nil {
		t.Fatal("an interrupted run returned no error")
	}
	cancelled := 0
	for _, r := range recs {
		if r.ErrorClass == schema.ErrorCancelled {
			cancelled++
		}
	}
	if last.Errors != 1 || last.Cancelled != cancelled || last.Done != last.Errors+last.Cancelled+1 {
		t.Errorf("progress %+v over records with %d cancelled: want 1 error (the HTTP one), the rest cancelled", last, cancelled)
	}
}
