package interval

import (
	"math"
	"slices"

	"github.com/perfdag/perfdag/schema"
)

// Estimate is a statistic of a series with the spread of its k batch statistics: what an
// interval (Interval, two-sided at Level) or a one-sided bound at any confidence (Lower,
// Upper) is made from, centre ∓ t_{k−1} · SE.
type Estimate struct {
	Centre float64
	SE     float64 // sd of the batch statistics / √K
	K      int     // batches; 0 for no estimate
	ESS    float64 // effective sample size: values / their autocorrelation time
	Method string
	// Skew is the skewness of the estimate itself (the values' skewness over √ESS), from
	// which the one-sided bounds are corrected (Cornish–Fisher, Hall 1992): a right-skewed
	// mean's low estimates come with low spreads, so its upper bound at a high confidence
	// would be too low, its lower one too cautious. 0 for a quantile.
	Skew float64
}

// Interval is the two-sided Level interval (the zero Interval for the zero Estimate).
func (e Estimate) Interval() schema.Interval {
	if e.K == 0 {
		return schema.Interval{}
	}
	hw := e.margin(1 - (1-Level)/2)
	return schema.Interval{Lo: e.Centre - hw, Hi: e.Centre + hw, Method: e.Method, N: e.K, ESS: math.Round(e.ESS*10) / 10}
}

// Lower is the one-sided lower bound at confidence conf (0.5 < conf < 1), skew-corrected.
func (e Estimate) Lower(conf float64) float64 {
	return e.Centre - e.SE*math.Max(tQuantile(conf, e.K-1)-e.cornishFisher(conf), 0)
}

// Upper is the one-sided upper bound at confidence conf (0.5 < conf < 1), skew-corrected;
// like Lower, never on the far side of the centre (a correction past the t quantile is the
// expansion outside where it holds).
func (e Estimate) Upper(conf float64) float64 {
	return e.Centre + e.SE*math.Max(tQuantile(conf, e.K-1)+e.cornishFisher(conf), 0)
}

// cornishFisher is the second-order term of a studentized estimate's quantile at conf,
// γ (2z² + 1) / 6 with z the normal quantile: a right-skewed estimate (γ > 0) has the heavier
// tail below, so its upper bound moves up and its lower one up as well.
func (e Estimate) cornishFisher(conf float64) float64 {
	if e.SE == 0 {
		return 0
	}
	z := normalQuantile(conf)
	return e.Skew * (2*z*z + 1) / 6
}

func (e Estimate) margin(conf float64) float64 {
	if e.SE == 0 {
		return 0
	}
	return tQuantile(conf, e.K-1) * e.SE
}

// estimate builds the Estimate of centre over the k batch statistics; ok is false when their
// spread is not a finite number.
func estimate(centre float64, batch []float64, method string, ess float64) (Estimate, bool) {
	k := len(batch)
	if k < 2 {
		return Estimate{}, false
	}
	m := mean(batch)
	ss := 0.0
	for _, b := range batch {
		ss += (b - m) * (b - m)
	}
	se := math.Sqrt(ss/float64(k-1)) / math.Sqrt(float64(k))
	if math.IsNaN(se) || math.IsInf(se, 0) || math.IsNaN(centre) || math.IsInf(centre, 0) {
		return Estimate{}, false
	}
	return Estimate{Centre: centre, SE: se, K: k, ESS: ess, Method: method}, true
}

// exact is a decision's estimate of a series without spread: its value, exactly, from two
// values on (every batching of it has zero spread). ok is false for any other batching or series.
func (b Batching) exact(xs []float64, centre float64, method string) (Estimate, bool) {
	if !b.decide || len(xs) < DecideMinBatches || slices.Min(xs) != slices.Max(xs) {
		return Estimate{}, false
	}
	return Estimate{Centre: centre, K: min(len(xs), MaxBatches), ESS: float64(len(xs)), Method: method}, true
}

// Mean returns the 95 % batch-means interval of the mean of xs (in measurement order): the
// values are cut into k contiguous batches (Batches, fewer when the series' autocorrelation
// time asks for longer ones), and the interval is the overall mean ± t_{k−1} · sd(batch
// means)/√k. ok is false below MinSamples, on too few batches, or on a non-finite value.
func Mean(xs []float64) (schema.Interval, bool) { return Batching{}.Mean(xs) }

// Mean is the package's Mean on b's batches.
func (b Batching) Mean(xs []float64) (schema.Interval, bool) {
	e, ok := b.MeanEstimate(xs)
	return e.Interval(), ok
}

// MeanEstimate is the mean of xs with the spread of its batch means on b's batches.
func (b Batching) MeanEstimate(xs []float64) (Estimate, bool) {
	n := len(xs)
	if n == 0 || !finite(xs) {
		return Estimate{}, false
	}
	if e, ok := b.exact(xs, mean(xs), MethodBatchMeans); ok {
		return e, true
	}
	tau := Tau(xs)
	k := b.count(n, tau)
	if k == 0 {
		return Estimate{}, false
	}
	means := make([]float64, k)
	for j := range k {
		lo, hi := bounds(n, k, j)
		means[j] = mean(xs[lo:hi])
	}
	e, ok := estimate(mean(xs), means, MethodBatchMeans, float64(n)/tau)
	e.Skew = skewness(xs) / math.Sqrt(e.ESS)
	return e, ok
}

// Quantile returns the 95 % sectioning interval of the q-quantile (0 < q < 1) of xs (in
// measurement order), Nakayama's sectioning: centred on the quantile of all values (linear
// interpolation, the points' own percentile), half-width t_{k−1} · sd(batch quantiles)/√k.
// The batches follow the autocorrelation time of the indicator series 1{x ≤ the quantile}.
// ok is false when too few batches remain, or on a non-finite value.
func Quantile(xs []float64, q float64) (schema.Interval, bool) {
	iv := Quantiles(xs, q)[0]
	return iv, iv.N > 0
}

// Quantiles returns Quantile's interval for each of qs, sorting xs and its batches once for
// all of them; a refused quantile's interval is the zero Interval (N == 0).
func Quantiles(xs []float64, qs ...float64) []schema.Interval { return Batching{}.Quantiles(xs, qs...) }

// Quantile is the package's Quantile on b's batches.
func (b Batching) Quantile(xs []float64, q float64) (schema.Interval, bool) {
	iv := b.Quantiles(xs, q)[0]
	return iv, iv.N > 0
}

// Quantiles is the package's Quantiles on b's batches.
func (b Batching) Quantiles(xs []float64, qs ...float64) []schema.Interval {
	out := make([]schema.Interval, len(qs))
	for i, e := range b.QuantileEstimates(xs, qs...) {
		out[i] = e.Interval()
	}
	return out
}

// QuantileEstimates is each q-quantile of xs with the spread of its batch quantiles on b's
// batches; a refused quantile's estimate is the zero Estimate (K == 0).
func (b Batching) QuantileEstimates(xs []float64, qs ...float64) []Estimate {
	out := make([]Estimate, len(qs))
	n := len(xs)
	if n == 0 || !finite(xs) {
		return out
	}
	all := sorted(xs)
	batches := map[int][][]float64{} // sorted batches by batch count
	ind := make([]float64, n)
	for i, q := range qs {
		if !(q > 0 && q < 1) {
			continue
		}
		centre := SortedQuantile(all, q)
		if e, ok := b.exact(xs, centre, MethodSectioning); ok {
			out[i] = e
			continue
		}
		for j, x := range xs {
			ind[j] = 0
			if x <= centre {
				ind[j] = 1
			}
		}
		tau := Tau(ind)
		k := b.quantileCount(n, q, tau)
		if k == 0 {
			continue
		}
		if batches[k] == nil {
			for j := range k {
				lo, hi := bounds(n, k, j)
				batches[k] = append(batches[k], sorted(xs[lo:hi]))
			}
		}
		bq := make([]float64, k)
		for j, sb := range batches[k] {
			bq[j] = SortedQuantile(sb, q)
		}
		out[i], _ = estimate(centre, bq, MethodSectioning, float64(n)/tau)
	}
	return out
}

// Ratio returns the 95 % batch-means interval of Σnum/Σden, num and den paired per request
// in measurement order (for output_tok_s: each request's output tokens over the time from
// its start to the next request's start, so Σden is the window). The interval is the
// ratio-estimator form R ± t_{k−1} · sd(z)/√k over batch sums, z_j = (N_j − R·D_j) / (D/k),
// centred on R itself; the batches follow the autocorrelation time of num_i − R·den_i.
// ok is false below MinSamples, on mismatched lengths, a non-finite value or Σden ≤ 0.
func Ratio(num, den []float64) (schema.Interval, bool) { return Batching{}.Ratio(num, den) }

// Ratio is the package's Ratio on b's batches.
func (b Batching) Ratio(num, den []float64) (schema.Interval, bool) {
	e, ok := b.RatioEstimate(num, den)
	return e.Interval(), ok
}

// RatioEstimate is Σnum/Σden with the spread of its linearised batches on b's batches.
func (b Batching) RatioEstimate(num, den []float64) (Estimate, bool) {
	n := len(num)
	if n == 0 || len(den) != n || !finite(num) || !finite(den) {
		return Estimate{}, false
	}
	sn, sd := sum(num), sum(den)
	if sd <= 0 {
		return Estimate{}, false
	}
	r := sn / sd
	z := make([]float64, n)
	for i := range z {
		z[i] = num[i] - r*den[i]
	}
	if e, ok := b.exact(z, r, MethodBatchMeans); ok {
		return e, true
	}
	tau := Tau(z)
	k := b.count(n, tau)
	if k == 0 {
		return Estimate{}, false
	}
	perBatch := sd / float64(k)
	stats := make([]float64, k)
	for j := range k {
		lo, hi := bounds(n, k, j)
		stats[j] = r + sum(z[lo:hi])/perBatch
	}
	e, ok := estimate(r, stats, MethodBatchMeans, float64(n)/tau)
	if ok {
		// R − ρ ≈ Σz / Σden with Σden > 0: the estimate has z's skew (scale-free: no factor of
		// n / Σden, which made a rate's correction tens of times too large)
		e.Skew = skewness(z) / math.Sqrt(e.ESS)
	}
	return e, ok
}

// skewness is the sample skewness m₃ / m₂^1.5 of xs (0 without spread).
func skewness(xs []float64) float64 {
	m := mean(xs)
	m2, m3 := 0.0, 0.0
	for _, x := range xs {
		d := x - m
		m2 += d * d
		m3 += d * d * d
	}
	if m2 == 0 {
		return 0
	}
	n := float64(len(xs))
	return (m3 / n) / math.Pow(m2/n, 1.5)
}

// normalQuantile is Φ⁻¹(p).
func normalQuantile(p float64) float64 { return math.Sqrt2 * math.Erfinv(2*p-1) }
