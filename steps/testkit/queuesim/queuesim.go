// Package queuesim is a test double for the statistics: a closed loop of c clients against a
// server with one FIFO prefill queue and parallel decode, whose requests share the server's
// state the way a real server's do, so interval and stopping-rule tests have correlated data
// with a truth they can compute from a long run.
package queuesim

import (
	"container/heap"
	"math"
	"math/rand/v2"

	"github.com/perfdag/perfdag/schema"
)

// Base is the first start time of a simulated run (ns).
const Base = int64(1_700_000_000_000_000_000)

// Run simulates c closed-loop clients against one FIFO prefill queue: each request's prefill
// is lognormal (median 20 ms, spread sigma) and starts when the request arrives and the queue
// is free, then 20–80 tokens decode in parallel at 5 ms each. At c = 16 (sigma 0.8) the queue
// is saturated and a request's TTFT is the prefill of those just before it; near sigma 0 the
// server is nearly deterministic and a saturated queue repeats one staircase of TTFTs every
// turn. The first warm requests are dropped; the rest come back valid, in start order, phase
// profiling.
func Run(r *rand.Rand, c, warm, n int, sigma float64) []schema.RequestRecord {
	h := make(starts, c)
	for i := range h {
		h[i] = Base
	}
	free := Base
	recs := make([]schema.RequestRecord, 0, n)
	for i := range warm + n {
		st := heap.Pop(&h).(int64)
		first := max(st, free) + int64(20e6*math.Exp(sigma*r.NormFloat64()))
		free = first
		tok := 20 + r.IntN(61)
		end := first + int64(tok-1)*5e6
		heap.Push(&h, end)
		if i >= warm {
			recs = append(recs, schema.RequestRecord{Index: i - warm, Phase: "profiling", StartNs: st, FirstTokenNs: first,
				FirstOutputNs: first, LastContentNs: end, EndNs: end, Status: 200, OutputTokens: tok})
		}
	}
	return recs
}

// starts holds the closed loop's clients by the time they next send.
type starts []int64

func (h starts) Len() int           { return len(h) }
func (h starts) Less(i, j int) bool { return h[i] < h[j] }
func (h starts) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *starts) Push(x any)        { *h = append(*h, x.(int64)) }
func (h *starts) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
