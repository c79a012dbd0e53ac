package autostop

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/interval"
)

// MethodConsistent names the stopping rule's intervals: batch means (sectioning for
// percentiles) with ⌊√n⌋ batches of ⌊√n⌋ requests, so the batch count grows with the point
// and the half-width's own noise shrinks as it runs (Jones, Haran, Caffo and Neath, 2006).
const (
	MethodConsistentMeans      = "consistent-batch-means"
	MethodConsistentSectioning = "consistent-sectioning"
)

// consistentBatches is ⌊√n⌋, the batch count (and length) of consistent batch means, capped
// so each batch holds interval.InflightFactor × the requests in flight (as the points'
// intervals ask) and, for a percentile, interval.TailPerBatch values past it; 0 below
// interval.MinBatches batches.
func consistentBatches(n int, q, inflight float64) int {
	k := int(math.Sqrt(float64(n)))
	if inflight > 0 {
		k = min(k, int(float64(n)/(interval.InflightFactor*inflight)+1e-9))
	}
	if q > 0 {
		k = min(k, int(float64(n)*min(q, 1-q)/interval.TailPerBatch+1e-9)) // 1 − 0.9 is 0.0999…
	}
	if k < interval.MinBatches {
		return 0
	}
	return k
}

// consistent bounds a mean (q 0), a q-quantile, or Σnum/Σden (den set) with consistent batches.
func consistent(xs []float64, q float64, den []float64, inflight float64) (schema.Interval, bool) {
	n := len(xs)
	k := consistentBatches(n, q, inflight)
	if k == 0 || !finite(xs) || (den != nil && (len(den) != n || !finite(den))) {
		return schema.Interval{}, false
	}
	stats := make([]float64, k)
	method := MethodConsistentMeans
	var centre float64
	switch {
	case den != nil:
		sn, sd := sum(xs), sum(den)
		if sd <= 0 {
			return schema.Interval{}, false
		}
		centre = sn / sd
		for j := range k {
			lo, hi := j*n/k, (j+1)*n/k
			stats[j] = centre + (sum(xs[lo:hi])-centre*sum(den[lo:hi]))/(sd/float64(k))
		}
	case q > 0:
		method = MethodConsistentSectioning
		centre = quantile(xs, q)
		for j := range k {
			stats[j] = quantile(xs[j*n/k:(j+1)*n/k], q)
		}
	default:
		centre = sum(xs) / float64(n)
		for j := range k {
			lo, hi := j*n/k, (j+1)*n/k
			stats[j] = sum(xs[lo:hi]) / float64(hi-lo)
		}
	}
	m := sum(stats) / float64(k)
	ss := 0.0
	for _, s := range stats {
		ss += (s - m) * (s - m)
	}
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(k - 1)}.Quantile(1 - (1-interval.Level)/2)
	hw := t * math.Sqrt(ss/float64(k-1)/float64(k))
	if math.IsNaN(hw) || math.IsInf(hw, 0) {
		return schema.Interval{}, false
	}
	return schema.Interval{Lo: centre - hw, Hi: centre + hw, Method: method, N: k}, true
}

// quantile interpolates linearly between closest ranks, as the point's percentiles do.
func quantile(xs []float64, q float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return interval.SortedQuantile(s, q)
}

func sum(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s
}

func finite(xs []float64) bool {
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}
