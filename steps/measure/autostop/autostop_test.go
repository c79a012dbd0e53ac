package autostop

import (
	"context"
	"math"
	"os"
	"slices"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/loadgen"
	"github.com/perfdag/perfdag/steps/measure/stats"
	"github.com/perfdag/perfdag/steps/sim"
)

// Every metric the schema offers has an implementation here, and nothing more.
func TestMetricsMatchSchema(t *testing.T) {
	var have []string
	for m := range metrics {
		have = append(have, m)
	}
	want := slices.Clone(schema.AutoMetrics)
	slices.Sort(have)
	slices.Sort(want)
	if !slices.Equal(have, want) {
		t.Errorf("autostop metrics %v, schema.AutoMetrics %v", have, want)
	}
}

// The simulated point: ttft 40 ms + prefill 8 ms per 1k × 1000 prompt tokens, so a nominal
// (median) TTFT of 48 ms, lognormal with spread sigma; the simulator's deterministic mode
// answers at once, so a run of thousands of requests takes milliseconds.
const (
	nominalMs   = 48.0
	inputTokens = 1000
	concurrency = 4
)

// point runs one auto point against the deterministic simulator with seed and sigma and
// returns what its rule recorded.
func point(t testing.TB, seed int64, sigma float64, spec schema.AutoCount) (schema.AutoStop, schema.Interval, bool) {
	t.Helper()
	v, err := sim.NewVirtual(schema.SimConfig{Seed: seed, TTFTMs: 40, PrefillMsPer1K: 8, TPOTMs: 2, TTFTSigma: sigma})
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(spec, concurrency)
	if err != nil {
		t.Fatal(err)
	}
	send := func(_ context.Context, i int) schema.RequestRecord {
		return v.Record("c", phaseProfiling, concurrency, i, inputTokens, 16)
	}
	a := r.Adaptive(concurrency)
	a.Ahead = -1 // stop at the look's prefix exactly: the simulator answers at once, so what runs ahead is a race
	recs, err := loadgen.Run(context.Background(), loadgen.Config{Requests: r.Max, Concurrency: concurrency, Adaptive: a}, send, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r.Stop(recs)
}

// Coverage end to end, stopping rule included: 100 seeded auto points whose TTFT is lognormal
// with a known median and mean; the interval each point records covers the truth in at least
// 93 of them, every point stopping because the precision was reached. PERFDAG_LONG=1 runs
// 2,000 points per metric and asks for at least 93.5 %.
func TestAutoCoverage(t *testing.T) {
	const sigma = 0.5
	runs, want := 100, 93
	if os.Getenv("PERFDAG_LONG") != "" {
		runs, want = 2000, 1870
	}
	for _, tc := range []struct {
		metric string
		truth  float64
	}{
		{"ttft_p50_ms", nominalMs},
		{"ttft_avg_ms", nominalMs * math.Exp(sigma*sigma/2)},
	} {
		t.Run(tc.metric, func(t *testing.T) {
			covered, requests, over, worst := 0, 0, 0, 0.0
			for seed := range int64(runs) {
				st, iv, ok := point(t, seed+1, sigma, schema.AutoCount{Metric: tc.metric, RelCI: 0.03, Max: 50000})
				if !ok || st.Reason != ReasonPrecision {
					t.Fatalf("seed %d: %+v (interval %v), want precision reached", seed+1, st, ok)
				}
				if iv.Contains(tc.truth) {
					covered++
				}
				if st.Achieved > st.RelCI {
					over++
				}
				worst = max(worst, st.Achieved)
				requests += st.Requests
			}
			t.Logf("%s: %d/%d intervals cover the true %.3f ms; %d requests a point on average; %d reported wider than ±3 %% (widest ±%.2f %%)",
				tc.metric, covered, runs, tc.truth, requests/runs, over, 100*worst)
			if covered < want {
				t.Errorf("%s: %d/%d intervals cover the truth, want at least %d", tc.metric, covered, runs, want)
			}
		})
	}
}

// A noisier point takes more requests to the same precision: TTFT spread 0.6 against 0.2,
// same seeds; at a third of the spread the quiet point needs far fewer (about a ninth).
func TestNoisierPointTakesMore(t *testing.T) {
	spec := schema.AutoCount{Metric: "ttft_p50_ms", RelCI: 0.02, Max: 50000}
	for seed := int64(1); seed <= 5; seed++ {
		quiet, _, _ := point(t, seed, 0.2, spec)
		noisy, _, _ := point(t, seed, 0.6, spec)
		t.Logf("seed %d: quiet (sigma 0.2) %d requests ±%.2f %%, noisy (sigma 0.6) %d requests ±%.2f %%", seed, quiet.Requests, 100*quiet.Achieved, noisy.Requests, 100*noisy.Achieved)
		if quiet.Reason != ReasonPrecision || noisy.Reason != ReasonPrecision {
			t.Fatalf("seed %d: quiet %+v, noisy %+v: want both to reach the precision", seed, quiet, noisy)
		}
		if noisy.Requests < 3*quiet.Requests {
			t.Errorf("seed %d: noisy point took %d requests, quiet %d: want at least 3× as many", seed, noisy.Requests, quiet.Requests)
		}
	}
}

// A point capped below what its precision needs stops at max and says so, with the interval
// it reached; a point without enough valid requests for any interval says that.
func TestStopsAtMax(t *testing.T) {
	st, iv, ok := point(t, 1, 0.8, schema.AutoCount{Metric: "ttft_p50_ms", RelCI: 0.01, Max: 400})
	if !ok || st.Reason != ReasonMax || st.Requests != 400 || st.Achieved <= 0.01 || iv.N == 0 {
		t.Errorf("capped point: %+v %+v %v, want max requests at 400 with the interval reached", st, iv, ok)
	}
	st, _, ok = point(t, 1, 0.8, schema.AutoCount{Metric: "ttft_p90_ms", RelCI: 0.01, Max: 300})
	if ok || st.Reason != ReasonNoValues || st.Achieved != 0 {
		t.Errorf("point below the p90 minimum: %+v %v, want %q", st, ok, ReasonNoValues)
	}
	if got := Line(schema.AutoStop{Requests: 640, Achieved: 0.018, Reason: ReasonPrecision}); got != "auto: stopped at 640 requests, ±1.8 % (precision reached)" {
		t.Errorf("Line = %q", got)
	}
}

// Looks are at batch boundaries, the first past min and the metric's minimum, later ones
// at least 25 % apart.
func TestLookSchedule(t *testing.T) {
	r, err := New(schema.AutoCount{Metric: "ttft_p50_ms", RelCI: 0.02}, 16)
	if err != nil {
		t.Fatal(err)
	}
	var looks []int
	for n := r.Next(0); n < 5000; n = r.Next(n) {
		looks = append(looks, n)
	}
	// at c16 a batch holds 8 × 16 requests: the first look waits for 10 of them
	want := []int{1280, 1600, 2000, 2512, 3152, 3952, 4944}
	if !slices.Equal(looks, want) {
		t.Errorf("looks %v, want %v", looks, want)
	}
	for _, c := range []struct {
		metric string
		conc   int
		want   int
	}{{"ttft_p50_ms", 0, 200}, {"ttft_avg_ms", 0, 100}, {"ttft_p50_ms", 1, 200}, {"ttft_avg_ms", 4, 320}, {"ttft_p50_ms", 16, 1280}, {"nope", 1, 0}} {
		if got := Need(c.metric, c.conc); got != c.want {
			t.Errorf("Need(%s, c%d) = %d, want %d", c.metric, c.conc, got, c.want)
		}
	}
}

// The interval an auto point records is the point's own: the rule's equals the one stats
// makes for the point from the same records (same series, order and method).
func TestRuleIntervalIsThePointsOwn(t *testing.T) {
	v, err := sim.NewVirtual(schema.SimConfig{Seed: 9, TTFTMs: 40, PrefillMsPer1K: 8, TPOTMs: 2, TTFTSigma: 0.4})
	if err != nil {
		t.Fatal(err)
	}
	recs := make([]schema.RequestRecord, 1500)
	for i := range recs {
		recs[i] = v.Record("c", phaseProfiling, concurrency, i, inputTokens, 16)
	}
	own := stats.Compute(recs, stats.Options{Cell: "c", Concurrency: concurrency}).Intervals
	for _, name := range []string{"ttft_p50_ms", "ttft_p90_ms", "ttft_avg_ms", "request_latency_p50_ms", "itl_avg_ms", "tok_s_per_user", "output_tok_s", "request_throughput"} {
		r, err := New(schema.AutoCount{Metric: name, RelCI: 0.05}, concurrency)
		if err != nil {
			t.Fatal(err)
		}
		_, iv, ok := r.Stop(recs)
		if want, has := own[name]; !ok || !has || math.Abs(iv.Lo-want.Lo) > 1e-9*math.Abs(want.Lo) || math.Abs(iv.Hi-want.Hi) > 1e-9*math.Abs(want.Hi) || iv.Method != want.Method {
			t.Errorf("%s: rule %+v (%v), point %+v (%v)", name, iv, ok, want, has)
		}
	}
}

// The deciding interval's batches: ⌊√n⌋, fewer when a batch would hold under 8 × the
// requests in flight or under ten values past a percentile, none below ten.
func TestConsistentBatches(t *testing.T) {
	for _, c := range []struct {
		n     int
		q, in float64
		want  int
	}{
		{100, 0, 0, 10}, {99, 0, 0, 0}, {2500, 0, 4, 50}, {2500, 0, 8, 39}, {5119, 0, 64, 0}, {5120, 0, 64, 10},
		{400, 0.5, 0, 20}, {199, 0.5, 0, 0}, {2500, 0.9, 1, 25}, {999, 0.9, 0, 0},
	} {
		if got := consistentBatches(c.n, c.q, c.in); got != c.want {
			t.Errorf("n %d q %v in flight %v: %d batches, want %d", c.n, c.q, c.in, got, c.want)
		}
	}
}
