package loadgen

import (
	"context"
	"math"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/sse"
	"github.com/perfdag/perfdag/steps/measure/stats"
)

// quick is a Send for a server that answers at once: a valid record stamped now.
func quick(ctx context.Context, i int) schema.RequestRecord {
	now := sse.Now()
	return schema.RequestRecord{Phase: stats.PhaseProfiling, StartNs: now, FirstTokenNs: now + 1, FirstOutputNs: now + 1, LastContentNs: now + 2, EndNs: now + 2, Status: 200}
}

// TestOpenLoopRecordsItsSchedule: 10 requests at a constant 1,000/s with a cap of 2, the first
// two held for 300 ms. Every record carries its scheduled send, exactly i ms after request
// 0's (the clock, not the completions, places it), and goes out no earlier; requests 2..9,
// all due while both slots are held, are marked cap-delayed and went out after the hold, the
// first two are not. Each fact is one-sided: a slow machine cannot fake it.
func TestOpenLoopRecordsItsSchedule(t *testing.T) {
	const hold = 300 * time.Millisecond
	send := func(ctx context.Context, i int) schema.RequestRecord {
		r := quick(ctx, i)
		if i < 2 {
			time.Sleep(hold)
		}
		return r
	}
	recs, err := Run(context.Background(), Config{Requests: 10, Rate: 1000, Concurrency: 2, Arrival: ArrivalConstant}, send, nil)
	if err != nil || len(recs) != 10 {
		t.Fatalf("records %d, err %v", len(recs), err)
	}
	for i, r := range recs {
		if got, want := r.ScheduledNs-recs[0].ScheduledNs, int64(i)*int64(time.Millisecond); r.ScheduledNs == 0 || got != want {
			t.Errorf("request %d scheduled %d ns after request 0, want %d", i, got, want)
		}
		if r.StartNs < r.ScheduledNs {
			t.Errorf("request %d went out %v before its schedule", i, time.Duration(r.ScheduledNs-r.StartNs))
		}
		if r.CapDelayed != (i >= 2) {
			t.Errorf("request %d cap_delayed = %v, want %v", i, r.CapDelayed, i >= 2)
		}
		if i >= 2 && r.StartNs < recs[0].StartNs+int64(hold) {
			t.Errorf("request %d went out %v after request 0, while both slots were held", i, time.Duration(r.StartNs-recs[0].StartNs))
		}
	}
	p := stats.Compute(recs, stats.Options{Concurrency: 2, RequestRate: 1000, Arrival: ArrivalConstant})
	if ol := p.OpenLoop; ol == nil || ol.CapDelayedSends != 8 || ol.CapDelayMaxMs < float64(hold-2*time.Millisecond)/1e6 {
		t.Errorf("open loop %+v: want 8 cap-delayed sends, the first late by at least 298 ms", ol)
	}
}

// A closed loop's records carry no schedule.
func TestClosedLoopRecordsNoSchedule(t *testing.T) {
	recs, err := Run(context.Background(), Config{Requests: 8, Concurrency: 2}, quick, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.ScheduledNs != 0 || r.CapDelayed {
			t.Errorf("closed-loop request %d: scheduled %d, cap_delayed %v; want neither", r.Index, r.ScheduledNs, r.CapDelayed)
		}
	}
}

// TestOpenLoopAchievesItsRate: against a Send that answers at once, the achieved send rate
// ((sends − 1) / span of the sends) is within 2 % of the asked rate at 10,000 requests/s. A
// constant schedule is the asked rate exactly, so all 2 % is the client's. A Poisson draw of
// n sends has its own rate within about ±1/√n of the asked one (the count over a window is
// Poisson: sd √n), so it is held to 3/√(n−1) for the draw plus what is left of 2 % for the
// client, with n = 40,000 (3/√n = 1.5 %); and the client alone to that remainder against the
// draw's own rate.
func TestOpenLoopAchievesItsRate(t *testing.T) {
	const rate = 10000.0
	for _, tc := range []struct {
		arrival string
		n       int
	}{{ArrivalConstant, 20000}, {ArrivalPoisson, 40000}} {
		t.Run(tc.arrival, func(t *testing.T) {
			cfg := Config{Requests: tc.n, Rate: rate, Concurrency: 64, Arrival: tc.arrival, Seed: 11}
			recs, err := Run(context.Background(), cfg, quick, nil)
			if err != nil {
				t.Fatal(err)
			}
			ol := stats.Compute(recs, stats.Options{Concurrency: 64, RequestRate: rate, Arrival: tc.arrival}).OpenLoop
			draw := 0.0
			if tc.arrival == ArrivalPoisson {
				draw = 3 / math.Sqrt(float64(tc.n-1))
			}
			client := 0.02 - draw
			t.Logf("%s: asked %.0f/s, drawn %.1f/s, achieved %.1f/s, lateness p50 %.3f p99 %.3f max %.3f ms, %d sends cap-delayed; tolerances: draw %.2f %%, client %.2f %%",
				tc.arrival, rate, ol.ScheduledRate, ol.AchievedRate, ol.SendLatenessMs.P50, ol.SendLatenessMs.P99, ol.SendLatenessMs.Max, ol.CapDelayedSends, 100*draw, 100*client)
			if d := math.Abs(ol.ScheduledRate/rate - 1); d > draw+1e-9 {
				t.Errorf("the schedule's own rate %.1f/s is %.2f %% off the asked %.0f/s, past %.2f %%", ol.ScheduledRate, 100*d, rate, 100*draw)
			}
			if d := math.Abs(ol.AchievedRate/ol.ScheduledRate - 1); d > client {
				t.Errorf("achieved %.1f/s is %.2f %% off the schedule's %.1f/s, past the client's %.2f %%", ol.AchievedRate, 100*d, ol.ScheduledRate, 100*client)
			}
			if d := math.Abs(ol.AchievedRate/rate - 1); d > 0.02 {
				t.Errorf("achieved %.1f/s is %.2f %% off the asked %.0f/s, past 2 %%", ol.AchievedRate, 100*d, rate)
			}
			if !ol.RateMet {
				t.Errorf("rate not met: %s", ol.RateShort)
			}
		})
	}
}

// TestOpenLoopGoroutinesBounded: at 5,000 requests/s with each request held 20 ms (about 100
// in flight), the open loop runs on at most cap workers with a cap of 32, and without one on
// workers it starts only when none is idle: about the requests in flight (a worker between
// its request and its next may be passed over, so up to twice that), never one per request.
func TestOpenLoopGoroutinesBounded(t *testing.T) {
	for _, limit := range []int{32, 0} {
		var most atomic.Int64
		var g gauge
		base := int64(runtime.NumGoroutine())
		send := func(ctx context.Context, i int) schema.RequestRecord {
			g.enter()
			defer g.leave()
			n := int64(runtime.NumGoroutine()) - base
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			time.Sleep(20 * time.Millisecond)
			return quick(ctx, i)
		}
		if _, err := Run(context.Background(), Config{Requests: 2000, Rate: 5000, Concurrency: limit, Arrival: ArrivalConstant}, send, nil); err != nil {
			t.Fatal(err)
		}
		bound := int64(limit)
		if limit == 0 {
			bound = 2 * g.peak.Load()
		}
		t.Logf("cap %d: peak in flight %d, most goroutines beyond the test's %d", limit, g.peak.Load(), most.Load())
		if limit > 0 && g.peak.Load() > int64(limit) {
			t.Errorf("cap %d: %d in flight at once", limit, g.peak.Load())
		}
		if most.Load() > bound+4 {
			t.Errorf("cap %d: %d goroutines beside the test's while at most %d requests were in flight", limit, most.Load(), bound)
		}
	}
}

// BenchmarkOpenLoop drives 20,000 requests/s for one second against a Send that answers at
// once and reports the sends' lateness (actual − scheduled: the scheduler's and the worker
// hand-over's lag) and how far the achieved rate fell below the schedule's.
func BenchmarkOpenLoop(b *testing.B) {
	const rate, n = 20000.0, 20000
	var p50, p99, worst, short []float64
	for b.Loop() {
		recs, err := Run(context.Background(), Config{Requests: n, Rate: rate, Concurrency: 256, Seed: 3}, quick, nil)
		if err != nil {
			b.Fatal(err)
		}
		ol := stats.Compute(recs, stats.Options{Concurrency: 256, RequestRate: rate}).OpenLoop
		p50, p99, worst = append(p50, ol.SendLatenessMs.P50), append(p99, ol.SendLatenessMs.P99), append(worst, ol.SendLatenessMs.Max)
		short = append(short, 100*(1-ol.AchievedRate/ol.ScheduledRate))
	}
	mean := func(v []float64) float64 {
		s := 0.0
		for _, x := range v {
			s += x
		}
		return s / float64(len(v))
	}
	b.ReportMetric(mean(p50), "lateness-p50-ms")
	b.ReportMetric(mean(p99), "lateness-p99-ms")
	b.ReportMetric(mean(worst), "lateness-max-ms")
	b.ReportMetric(mean(short), "shortfall-%")
	b.ReportMetric(0, "ns/op")
}
