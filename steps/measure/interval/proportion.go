package interval

import (
	"math"
	"slices"

	"github.com/perfdag/perfdag/schema"
)

// MethodProportion is the Method of Proportion's intervals.
const MethodProportion = "batch-means+wilson"

// Proportion returns the 95 % interval of the fraction of ones in xs (0/1 values in
// measurement order: whether each request met an SLO): the batch-means interval of their mean
// on b's batches, widened to hold the Wilson score interval of the same fraction over the
// series' effective number of observations (WilsonCount), and kept inside [0, 1]. Batch means
// alone collapse to a point when every batch holds the same fraction (all requests good: the
// sd of the batch means is 0), and are too narrow near 0 and 1, where batch fractions are far
// from normal; the Wilson interval stays honest there. ok is false where Mean refuses (fewer
// than MinSamples, or batches shorter than InflightFactor turns) or on a value other than 0
// or 1.
func (b Batching) Proportion(xs []float64) (schema.Interval, bool) {
	e, ok := b.ProportionEstimate(xs)
	if !ok {
		return schema.Interval{}, false
	}
	iv := e.Mean.Interval()
	lo, hi := wilson(e.P, e.Count, normalQuantile(1-(1-Level)/2))
	iv.Lo, iv.Hi = max(0, min(iv.Lo, lo)), min(1, max(iv.Hi, hi))
	iv.Method = MethodProportion
	return iv, true
}

// Proportion is Batching{}.Proportion: for requests with at most one in flight at a time.
func Proportion(xs []float64) (schema.Interval, bool) { return Batching{}.Proportion(xs) }

// ProportionEstimate is a fraction of 0/1 values with what its bounds are made from: the
// batch means of the values (Mean, on the batching it was made with) and the Wilson score
// bound over Count effective observations. Its one-sided bounds are the more cautious of the
// two at the asked confidence, kept inside [0, 1].
type ProportionEstimate struct {
	Mean  Estimate
	P     float64 // the fraction of ones
	Count float64 // the observations the Wilson bound counts (WilsonCount)
}

// ProportionEstimate is xs's fraction of ones on b's batches; ok is false where MeanEstimate
// refuses or on a value other than 0 or 1. A series without spread gets the batch means'
// estimate without spread (a decision's exact one included), which bounds nothing: the
// Wilson bound does, as all requests good is an ordinary sample of a fraction just below 1.
func (b Batching) ProportionEstimate(xs []float64) (ProportionEstimate, bool) {
	for _, x := range xs {
		if x != 0 && x != 1 {
			return ProportionEstimate{}, false
		}
	}
	e, ok := b.MeanEstimate(xs)
	if !ok {
		return ProportionEstimate{}, false
	}
	e.Method = MethodProportion
	return ProportionEstimate{Mean: e, P: mean(xs), Count: b.WilsonCount(xs)}, true
}

// Lower is the one-sided lower bound at confidence conf (0.5 < conf < 1).
func (e ProportionEstimate) Lower(conf float64) float64 {
	lo, _ := wilson(e.P, e.Count, normalQuantile(conf))
	return max(0, min(e.Mean.Lower(conf), lo))
}

// Upper is the one-sided upper bound at confidence conf (0.5 < conf < 1).
func (e ProportionEstimate) Upper(conf float64) float64 {
	_, hi := wilson(e.P, e.Count, normalQuantile(conf))
	return min(1, max(e.Mean.Upper(conf), hi))
}

// WilsonCount is how many independent observations a 0/1 series is worth for the Wilson
// bound: its effective sample size n / τ̂ (Tau) where the series is long enough to trust the
// estimate (Trusted) and has spread to estimate it from; otherwise one observation per turn of
// the slots (n / inflight, at least 1), as requests in flight together share the server's
// state. A series without spread (every request good) says nothing of its correlation, so it
// keeps the per-turn count.
func (b Batching) WilsonCount(xs []float64) float64 {
	n := float64(len(xs))
	perTurn := n / max(b.inflight, 1)
	if len(xs) < 2 || slices.Min(xs) == slices.Max(xs) {
		return perTurn
	}
	if tau := Tau(xs); Trusted(len(xs), tau) {
		return n / tau
	}
	return perTurn
}

// wilson is the Wilson score interval of a fraction p observed over n trials at normal
// quantile z (1.96 for the two-sided 95 % interval; a one-sided bound at confidence c is the
// matching end at z = Φ⁻¹(c)).
func wilson(p, n, z float64) (float64, float64) {
	n = max(n, 1)
	z2 := z * z
	centre := (p + z2/(2*n)) / (1 + z2/n)
	hw := z / (1 + z2/n) * math.Sqrt(p*(1-p)/n+z2/(4*n*n))
	return centre - hw, centre + hw
}
