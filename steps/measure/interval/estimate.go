package interval

import (
	"math"
	"slices"

	"github.com/perfdag/perfdag/schema"
)

// Estimate is a statistic of a series with the spread of its k batch statistics: what an
// interval (Interval, two-sided at Level) or a one-sided bound at any confidence (Lower,
// Upper) is made from, centre ∓ SE times the studentized quantile (t_{k−1}, skew-corrected).
type Estimate struct {
	Centre float64
	SE     float64 // sd of the batch statistics / √K
	K      int     // batches; 0 for no estimate
	ESS    float64 // effective sample size: values / their autocorrelation time
	Method string
	// Skew is the skewness of the estimate itself (the values' skewness over √ESS), from
	// which every bound is corrected (skewShift): a right-skewed mean's low estimates come
	// with low spreads, so its studentized error has a long lower tail and a short upper one;
	// a symmetric t interval misses above the truth too often. 0 for a quantile or a ratio.
	Skew float64
}

// Interval is the two-sided Level interval, its ends the one-sided bounds at 1 − (1 − Level)/2
// (the zero Interval for the zero Estimate): centre ± t_{k−1}·SE for a quantile or a ratio,
// reaching further on the long side for a skewed mean.
func (e Estimate) Interval() schema.Interval {
	if e.K == 0 {
		return schema.Interval{}
	}
	conf := 1 - (1-Level)/2
	return schema.Interval{Lo: e.Lower(conf), Hi: e.Upper(conf), Method: e.Method, N: e.K, ESS: math.Round(e.ESS*10) / 10}
}

// Lower is the one-sided lower bound at confidence conf (0.5 < conf < 1), skew-corrected;
// never above the centre.
func (e Estimate) Lower(conf float64) float64 {
	return e.Centre - e.SE*math.Max(tQuantile(conf, e.K-1)+e.skewShift(normalQuantile(conf)), 0)
}

// Upper is the one-sided upper bound at confidence conf (0.5 < conf < 1), skew-corrected;
// never below the centre.
func (e Estimate) Upper(conf float64) float64 {
	return e.Centre + e.SE*math.Max(tQuantile(conf, e.K-1)-e.skewShift(-normalQuantile(conf)), 0)
}

// skewShift is how far skew moves the studentized error's quantile (centre − truth) / SE
// from where a symmetric distribution has it, at the normal quantile z, by Hall's (1992)
// transformation of the studentized mean: g(T) = T + γT²/3 + γ²T³/27 + γ/6 (γ = Skew) is
// normal to second order, so T's z-quantile is g⁻¹(z) = (3/γ)((1 + γ(z − γ/6))^⅓ − 1), and
// the shift g⁻¹(z) − z is added to the t quantile (whose width pays for few batches). To first
// order in γ it is the Cornish–Fisher term −γ(2z² + 1)/6; unlike that, g⁻¹ is monotone and
// stretches the long tail (z < 0 for γ > 0) instead of moving both ends alike, which on the
// closed-loop queue's skewed mean TTFT is what the two-sided interval lacked
// (docs/statistics.md).
func (e Estimate) skewShift(z float64) float64 {
	g := e.Skew
	if g == 0 || e.SE == 0 {
		return 0
	}
	return 3/g*(math.Cbrt(1+g*(z-g/6))-1) - z
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

// RatioEstimate is Σnum/Σden with the spread of its linearised batches on b's batches, its
// bounds symmetric t ones.
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
	// No skew correction (Skew 0): z's skewness does not describe the ratio's error. Its
	// largest value is structural — the last request's span runs to the window's end, a whole
	// latency — and the ratio's own curvature is left out of it; corrected by it, output_tok_s
	// on the closed-loop queue at concurrency 16 covered 90.3 % from 20 turns and 92.4 % from
	// 40, where the symmetric interval covers 95.1 % and 94.4 % (docs/statistics.md).
	return estimate(r, stats, MethodBatchMeans, float64(n)/tau)
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
