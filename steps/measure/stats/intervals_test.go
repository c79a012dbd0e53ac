package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/perfdag/perfdag/schema"
)

// closedLoop simulates n requests from c slots, each sending its next request when the last
// one ends: lognormal TTFT (median 50 ms) and ITL (median 10 ms), 20–80 output tokens. Every
// 50th request fails; the records come back shuffled, as completions would.
func closedLoop(seed uint64, c, n int) []schema.RequestRecord {
	r := rand.New(rand.NewPCG(seed, 1))
	next := make([]int64, c)
	for s := range next {
		next[s] = base
	}
	recs := make([]schema.RequestRecord, 0, n)
	for i := range n {
		s := i % c
		st := next[s]
		if i%50 == 49 {
			recs = append(recs, schema.RequestRecord{Index: i, Phase: PhaseProfiling, StartNs: st, EndNs: st + 1e6, Status: 500, ErrorClass: schema.ErrorHTTP})
			next[s] = st + 1e6
			continue
		}
		ttft := int64(50e6 * math.Exp(0.3*r.NormFloat64()))
		itl := int64(10e6 * math.Exp(0.2*r.NormFloat64()))
		tok := 20 + r.IntN(61)
		end := st + ttft + int64(tok-1)*itl
		recs = append(recs, schema.RequestRecord{Index: i, Phase: PhaseProfiling, StartNs: st, FirstTokenNs: st + ttft,
			FirstOutputNs: st + ttft, LastContentNs: end, EndNs: end, Status: 200, InputTokens: 100, OutputTokens: tok})
		next[s] = end
	}
	r.Shuffle(len(recs), func(i, j int) { recs[i], recs[j] = recs[j], recs[i] })
	return recs
}

func TestPointIntervals(t *testing.T) {
	p := Compute(closedLoop(1, 4, 2100), Options{Concurrency: 4, TokenBasis: "o200k_base"})
	want := []string{"itl_avg_ms", "itl_p50_ms", "output_tok_s", "request_latency_avg_ms", "request_latency_p50_ms",
		"request_throughput", "tok_s_per_user", "ttft_avg_ms", "ttft_p50_ms", "ttft_p90_ms", "ttft_p95_ms"}
	var keys []string
	for k := range p.Intervals {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if !slices.Equal(keys, want) {
		t.Fatalf("interval keys %v, want %v (2,058 valid: p99s need 10,000)", keys, want)
	}
	// Each interval holds the point's own figure: quantiles and throughputs centred on it, means
	// of these right-skewed (lognormal) values reaching further above it than below (the skew
	// correction).
	for _, c := range []struct {
		key    string
		value  float64
		skewed bool
	}{
		{"ttft_avg_ms", p.TTFT.Avg, true}, {"ttft_p50_ms", p.TTFT.P50, false}, {"ttft_p90_ms", p.TTFT.P90, false},
		{"ttft_p95_ms", p.TTFT.P95, false}, {"itl_avg_ms", p.ITL.Avg, true}, {"itl_p50_ms", p.ITL.P50, false},
		{"request_latency_avg_ms", p.RequestLatency.Avg, true}, {"request_latency_p50_ms", p.RequestLatency.P50, false},
		{"tok_s_per_user", p.TPSUser.Avg, true}, {"output_tok_s", p.OutputTokenThroughput, false},
		{"request_throughput", p.RequestThroughput, false},
	} {
		iv := p.Intervals[c.key]
		below, above := c.value-iv.Lo, iv.Hi-c.value
		placed := near(below, above)
		if c.skewed {
			placed = below > 0 && above > below
		}
		if !placed || iv.HalfWidth() <= 0 || iv.HalfWidth() > 0.1*c.value || iv.N != 10 {
			t.Errorf("%s: %+v, want 10 batches around %v (skewed %v) with a half-width under 10 %%", c.key, iv, c.value, c.skewed)
		}
	}
	golden(t, "intervals.golden.json", p.Intervals)
}

func TestPointIntervalsRefused(t *testing.T) {
	for _, c := range []struct {
		name         string
		p            schema.Point
		want, absent []string // keys that must be present, and keys that must not
	}{
		{"the five-record point", Compute(pointRecords(), Options{Concurrency: 2}), nil, nil},
		{"2,000 independent requests at 300 in flight: their own correlation sizes the batches (the floor alone asks 24,000)",
			Compute(closedLoop(2, 300, 2000), Options{Concurrency: 300, TokenBasis: "o200k_base"}),
			[]string{"ttft_avg_ms", "ttft_p50_ms", "itl_avg_ms", "request_latency_p50_ms"}, nil},
		{"a saturated queue at 64 in flight, 20 × that: correlation not yet trusted, batches under 8 × in flight",
			queuePoint(rand.New(rand.NewPCG(64, 1)), 64, 1280), nil, []string{"ttft_avg_ms", "ttft_p50_ms", "request_latency_avg_ms"}},
		{"a window the file states has no throughput interval",
			Compute(closedLoop(3, 4, 2000), Options{Concurrency: 4, TokenBasis: "o200k_base", WindowS: 100}),
			[]string{"ttft_p50_ms", "itl_avg_ms"}, []string{"output_tok_s", "request_throughput"}},
		{"400 requests: means and p50s, no p90",
			Compute(closedLoop(4, 4, 400), Options{Concurrency: 4, TokenBasis: "o200k_base"}),
			[]string{"ttft_avg_ms", "ttft_p50_ms", "output_tok_s", "request_throughput"}, []string{"ttft_p90_ms", "ttft_p95_ms"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.want == nil && c.absent == nil && c.p.Intervals != nil {
				t.Fatalf("intervals %v, want none", c.p.Intervals)
			}
			for _, k := range c.want {
				if _, ok := c.p.Intervals[k]; !ok {
					t.Errorf("no %s interval in %v", k, c.p.Intervals)
				}
			}
			for _, k := range c.absent {
				if _, ok := c.p.Intervals[k]; ok {
					t.Errorf("unexpected %s interval", k)
				}
			}
		})
	}
}

// queuePoint is n requests of the prefill-queue closed loop at concurrency c as a point.
func queuePoint(r *rand.Rand, c, n int) schema.Point {
	return schema.Point{Intervals: queueIntervals(prefillQueue(r, c, 20*c, n))}
}
