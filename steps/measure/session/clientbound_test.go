//go:build linux

package session

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/loadgen"
	"github.com/perfdag/perfdag/steps/measure/openai"
)

// TestStarvedClientIsClientBound: a client starved of CPU — one core for the whole process
// (GOMAXPROCS 1) and two goroutines spinning on it — is flagged client_bound on its point, by
// its CPU or by its reads lagging the kernel's receive stamps, and its run line says so; its
// reads are counted and its latencies still come from the kernel's stamps.
func TestStarvedClientIsClientBound(t *testing.T) {
	base := startExact(t)
	s := exactSession(t, base)
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for !stop.Load() {
			}
		})
	}
	recs, err := s.Load(context.Background(), PhaseProfiling, loadgen.Config{Requests: 48, Concurrency: 16}, nil)
	stop.Store(true)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.ErrorClass != "" {
			t.Fatalf("request %d: %s: %s", r.Index, r.ErrorClass, r.Error)
		}
	}
	b := s.ClientBound()
	if b == nil || !b.Bound() || len(b.Why) == 0 {
		t.Fatalf("a starved client: %+v, want client_bound with its reasons", b)
	}
	if b.Cores != 1 || b.Reads < int64(len(recs)) {
		t.Errorf("cores %d (want 1, GOMAXPROCS), %d reads for %d streams", b.Cores, b.Reads, len(recs))
	}
	line := Line(b)
	if !strings.HasPrefix(line, "client_bound: ") || !strings.Contains(line, "split it over more clients") {
		t.Errorf("run line %q", line)
	}
	t.Logf("starved: CPU %.0f %% of %d, read lag p50 %.3g p99 %.3g max %.3g ms over %d reads: %s", b.CPUPct, b.Cores, b.ReadLagP50Ms, b.ReadLagP99Ms, b.ReadLagMaxMs, b.Reads, line)
}

// TestClientBoundOf: each sign past its bound, and only such a sign, makes a point
// client_bound and is named; a window within every bound is ok and has no run line.
func TestClientBoundOf(t *testing.T) {
	lag := func(p99 float64) openai.LagSummary {
		return openai.LagSummary{Reads: 100, P50Ms: 0.05, P99Ms: p99, MaxMs: p99}
	}
	cases := []struct {
		name       string
		cpu        float64
		late, sent int
		lag        openai.LagSummary
		gap        float64
		why        []string
	}{
		{"all within", 89.9, 1, 100, lag(9.9), 2, nil},
		{"cpu", 90, 0, 0, lag(1), 2, []string{"CPU 90 % of 2 cores"}},
		{"late sends", 10, 2, 100, lag(1), 2, []string{"2 of 100 sends more than 5 ms late"}},
		{"read lag", 10, 0, 0, lag(10.5), 2, []string{"reads 10.5 ms behind their kernel stamps (p99, bound 10 ms)"}},
		{"read lag within a token's time", 10, 0, 0, lag(30), 50, nil},
		{"read lag past a token's time", 10, 0, 0, lag(60), 50, []string{"reads 60 ms behind their kernel stamps (p99, bound 50 ms)"}},
		{"no stamps, unknown cpu", -1, 0, 0, openai.LagSummary{}, 0, nil},
		{"all", 99, 50, 100, lag(40), 0, []string{"CPU 99 % of 2 cores", "50 of 100 sends more than 5 ms late", "reads 40 ms behind their kernel stamps (p99, bound 10 ms)"}},
	}
	for _, c := range cases {
		b := ClientBoundOf(c.cpu, 2, c.late, c.sent, c.lag, c.gap)
		want := schema.VerdictClientOK
		if len(c.why) > 0 {
			want = schema.VerdictClientBound
		}
		if b.Verdict != want || strings.Join(b.Why, "|") != strings.Join(c.why, "|") {
			t.Errorf("%s: %s %q, want %s %q", c.name, b.Verdict, b.Why, want, c.why)
		}
		if (Line(b) == "") != (want == schema.VerdictClientOK) {
			t.Errorf("%s: run line %q", c.name, Line(b))
		}
	}
}

// TestTokenGap: a window's time between tokens is the median of its valid answers' mean gaps;
// failed answers and one-chunk answers say nothing of it.
func TestTokenGap(t *testing.T) {
	rec := func(gapMs int64, n int, class string) schema.RequestRecord {
		r := schema.RequestRecord{ErrorClass: class}
		for i := range n {
			r.ChunkNs = append(r.ChunkNs, int64(i)*gapMs*1e6)
		}
		return r
	}
	recs := []schema.RequestRecord{rec(10, 5, ""), rec(30, 3, ""), rec(50, 2, ""), rec(1, 9, schema.ErrorDropped), rec(7, 1, "")}
	if g := tokenGapMs(recs); g != 30 {
		t.Errorf("token gap %v ms, want 30", g)
	}
	if g := tokenGapMs(recs[3:]); g != 0 {
		t.Errorf("token gap %v ms with no valid answer of two chunks, want 0", g)
	}
}

// A send held by the cap or by an adaptive point's look went out late for the server's
// sake, not the client's: only a late send with neither counts against the client.
func TestLateSendsBlameOnlyTheClient(t *testing.T) {
	late := func(capDelayed, lookHeld bool) schema.RequestRecord {
		return schema.RequestRecord{ScheduledNs: 1e9, StartNs: 1e9 + int64(10*schema.LateSendMs*1e6), CapDelayed: capDelayed, LookHeld: lookHeld}
	}
	recs := []schema.RequestRecord{late(false, false), late(true, false), late(false, true), {ScheduledNs: 2e9, StartNs: 2e9}, {StartNs: 3e9}}
	if l, s := lateSends(recs); l != 1 || s != 4 {
		t.Errorf("late %d of %d sends, want 1 of 4 (the cap's and the look's are the server's; a closed-loop record is no send)", l, s)
	}
}
