package interval

import (
	"math"

	"github.com/perfdag/perfdag/schema"
)

// MethodProportion is the Method of Proportion's intervals.
const MethodProportion = "batch-means+wilson"

// Proportion returns the 95 % interval of the fraction of ones in xs (0/1 values in
// measurement order: whether each request met an SLO): the batch-means interval of their mean
// on b's batches, widened to hold the Wilson score interval of the same fraction at one
// observation per turn of the slots (n / inflight, at least 1), and kept inside [0, 1].
// Batch means alone collapse to a point when every batch holds the same fraction (all requests
// good: the sd of the batch means is 0), and are too narrow near 0 and 1, where batch
// fractions are far from normal; the Wilson interval stays honest there, and counting a turn
// of the slots as one observation keeps it from trusting requests in flight together as
// independent. ok is false where Mean refuses (fewer than MinSamples, or batches shorter than
// InflightFactor turns) or on a value other than 0 or 1.
func (b Batching) Proportion(xs []float64) (schema.Interval, bool) {
	for _, x := range xs {
		if x != 0 && x != 1 {
			return schema.Interval{}, false
		}
	}
	iv, ok := b.Mean(xs)
	if !ok {
		return schema.Interval{}, false
	}
	p := mean(xs)
	lo, hi := wilson(p, float64(len(xs))/max(b.inflight, 1))
	iv.Lo, iv.Hi = max(0, min(iv.Lo, lo)), min(1, max(iv.Hi, hi))
	iv.Method = MethodProportion
	return iv, true
}

// Proportion is Batching{}.Proportion: for requests with at most one in flight at a time.
func Proportion(xs []float64) (schema.Interval, bool) { return Batching{}.Proportion(xs) }

// wilson is the 95 % Wilson score interval of a fraction p observed over n trials.
func wilson(p, n float64) (float64, float64) {
	z := 1.959963984540054 // the normal's 97.5 % quantile
	z2 := z * z
	centre := (p + z2/(2*n)) / (1 + z2/n)
	hw := z / (1 + z2/n) * math.Sqrt(p*(1-p)/n+z2/(4*n*n))
	return centre - hw, centre + hw
}
