// Package stats turns per-request records into a point's metrics with AIPerf's definitions:
// linear-interpolation percentiles (numpy's default), population standard deviation, errors
// and non-profiling records excluded and counted, adj_ percentiles with failures as +Inf.
package stats

import (
	"math"
	"slices"

	"github.com/perfdag/perfdag/schema"
)

// percentiles reported for every metric, in schema.Stat order.
var percentiles = [...]float64{1, 5, 10, 25, 50, 75, 90, 95, 99}

// Percentile returns the q-th percentile (0–100) of sorted values with linear interpolation
// between closest ranks: rank = q/100 × (n − 1), numpy's default method.
func Percentile(sorted []float64, q float64) float64 {
	n := len(sorted)
	switch {
	case n == 0:
		return math.NaN()
	case n == 1:
		return sorted[0]
	}
	rank := q / 100 * float64(n-1)
	lo := int(math.Floor(rank))
	hi := int(math.Ceil(rank))
	if lo < 0 {
		lo = 0
	}
	if hi > n-1 {
		hi = n - 1
	}
	if lo == hi {
		return sorted[lo]
	}
	return sorted[lo] + (sorted[hi]-sorted[lo])*(rank-float64(lo))
}

// Summarize computes count, avg, min, max, p1…p99 and population std; nil when values is
// empty, so an unmeasured metric is null rather than zero.
func Summarize(values []float64, unit string) *schema.Stat {
	if len(values) == 0 {
		return nil
	}
	s := slices.Clone(values)
	slices.Sort(s)
	n := float64(len(s))
	sum := 0.0
	for _, v := range s {
		sum += v
	}
	mean := sum / n
	ss := 0.0
	for _, v := range s {
		ss += (v - mean) * (v - mean)
	}
	st := &schema.Stat{Unit: unit, Count: len(s), Avg: mean, Min: s[0], Max: s[len(s)-1], Std: math.Sqrt(ss / n)}
	dst := []*float64{&st.P1, &st.P5, &st.P10, &st.P25, &st.P50, &st.P75, &st.P90, &st.P95, &st.P99}
	for i, q := range percentiles {
		*dst[i] = Percentile(s, q)
	}
	return st
}

// Adjusted returns p50/p90/p95/p99 over the valid values plus one +Inf per failed request,
// AIPerf's adj_ metrics: nearest-rank (numpy "nearest": rank q/100 × (n − 1) rounded half to
// even), and null where the rank lands on a failure. Nil when there is nothing to rank.
func Adjusted(values []float64, failed int) *schema.AdjStat {
	n := len(values) + failed
	if n == 0 {
		return nil
	}
	s := slices.Clone(values)
	slices.Sort(s)
	at := func(q float64) *float64 {
		idx := int(math.RoundToEven(q / 100 * float64(n-1)))
		if idx >= len(s) {
			return nil
		}
		v := s[idx]
		return &v
	}
	return &schema.AdjStat{P50: at(50), P90: at(90), P95: at(95), P99: at(99)}
}
