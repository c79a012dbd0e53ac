package stats

import (
	"container/heap"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/interval"
)

// startHeap holds the closed loop's clients by the time they next send.
type startHeap []int64

func (h startHeap) Len() int           { return len(h) }
func (h startHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h startHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *startHeap) Push(x any)        { *h = append(*h, x.(int64)) }
func (h *startHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// prefillQueue simulates c closed-loop clients against a server with one FIFO prefill queue
// (lognormal prefill, median 20 ms, σ 0.8) and parallel decode (20–80 tokens at 5 ms): at
// c = 16 the queue is saturated and a request's TTFT is the prefill of those just before it,
// the correlation between requests in flight together that For(inflight) guards against.
// The first warm requests are dropped; the rest come back in start order.
func prefillQueue(r *rand.Rand, c, warm, n int) []schema.RequestRecord {
	h := make(startHeap, c)
	for i := range h {
		h[i] = base
	}
	free := base
	recs := make([]schema.RequestRecord, 0, n)
	for i := range warm + n {
		st := heap.Pop(&h).(int64)
		first := max(st, free) + int64(20e6*math.Exp(0.8*r.NormFloat64()))
		free = first
		tok := 20 + r.IntN(61)
		end := first + int64(tok-1)*5e6
		heap.Push(&h, end)
		if i >= warm {
			recs = append(recs, schema.RequestRecord{Index: i, Phase: PhaseProfiling, StartNs: st, FirstTokenNs: first,
				FirstOutputNs: first, LastContentNs: end, EndNs: end, Status: 200, OutputTokens: tok})
		}
	}
	return recs
}

// queueIntervals is pointIntervals on simulated records (all valid, tokens as given).
func queueIntervals(recs []schema.RequestRecord) schema.Intervals {
	counts := make([]tokenCount, len(recs))
	var end int64
	for i, r := range recs {
		counts[i] = tokenCount{output: r.OutputTokens}
		end = max(end, r.LastContentNs)
	}
	return pointIntervals(recs, counts, end, false)
}

// TestIntervalsCoverClosedLoop: on the prefill-queue closed loop, points of 80 × the requests
// in flight (batches of 8 × in flight) get intervals that cover the long-run truth (from
// 400,000 requests) in 93–99.5 % of 1,000 seeded points; points of 20 × get none.
func TestIntervalsCoverClosedLoop(t *testing.T) {
	for _, c := range []int{4, 16} {
		t.Run(fmt.Sprintf("c=%d", c), func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(uint64(c), 0x9ee))
			long := prefillQueue(r, c, 1000, 400000)
			var ttft, lat []float64
			tokens, lastEnd := 0.0, int64(0)
			for _, x := range long {
				ttft, lat = append(ttft, ms(x.FirstTokenNs-x.StartNs)), append(lat, ms(x.LastContentNs-x.StartNs))
				tokens, lastEnd = tokens+float64(x.OutputTokens), max(lastEnd, x.LastContentNs)
			}
			window := float64(lastEnd-long[0].StartNs) / 1e9
			inflight := sumOf(lat) / 1e3 / window
			slices.Sort(ttft)
			slices.Sort(lat)
			truth := map[string]float64{
				"ttft_avg_ms": sumOf(ttft) / float64(len(ttft)), "ttft_p50_ms": Percentile(ttft, 50),
				"request_latency_avg_ms": sumOf(lat) / float64(len(lat)), "request_latency_p50_ms": Percentile(lat, 50),
				"output_tok_s": tokens / window,
			}
			n := int(math.Ceil(10 * interval.InflightFactor * inflight))
			if got := queueIntervals(prefillQueue(r, c, 20*c, n/4)); got != nil {
				t.Errorf("%d requests at %.1f in flight: intervals %v, want none", n/4, inflight, got)
			}
			covered := map[string]int{}
			for range reps {
				ivs := queueIntervals(prefillQueue(r, c, 20*c, n))
				for k, v := range truth {
					iv, ok := ivs[k]
					if !ok {
						t.Fatalf("%d requests at %.1f in flight: no %s interval", n, inflight, k)
					}
					if iv.Contains(v) {
						covered[k]++
					}
				}
			}
			for k := range truth {
				cov := float64(covered[k]) / reps
				t.Logf("c=%d in flight %.1f n=%d %-22s coverage %.1f %%", c, inflight, n, k, 100*cov)
				if cov < 0.93 || cov > 0.995 {
					t.Errorf("%s: coverage %.3f outside [0.93, 0.995]", k, cov)
				}
			}
		})
	}
}

const reps = 1000

func sumOf(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s
}
