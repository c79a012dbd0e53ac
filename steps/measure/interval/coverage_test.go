package interval

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// Log-space parameters of the simulated latencies: median 100 ms, σ 0.5 (skewed).
const (
	simMu    = 4.605170185988092 // ln 100
	simSigma = 0.5
	reps     = 1000
)

// series is a simulated stationary latency process with a known marginal distribution.
type series struct {
	name string
	gen  func(r *rand.Rand, n int) []float64
	cdf  func(x float64) float64 // marginal distribution function
	mean float64                 // marginal mean
}

func phi(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

func lognormCDF(mu float64) func(float64) float64 {
	return func(x float64) float64 {
		if x <= 0 {
			return 0
		}
		return phi((math.Log(x) - mu) / simSigma)
	}
}

// iidLognormal: independent lognormal latencies.
func iidLognormal() series {
	return series{"iid-lognormal", func(r *rand.Rand, n int) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = math.Exp(simMu + simSigma*r.NormFloat64())
		}
		return xs
	}, lognormCDF(simMu), math.Exp(simMu + simSigma*simSigma/2)}
}

// ar1Lognormal: lognormal latencies whose logs follow a stationary AR(1) with coefficient
// a (a queue that stays slow for a while), started from the stationary distribution.
func ar1Lognormal(a float64) series {
	return series{fmt.Sprintf("ar1-%.1f", a), func(r *rand.Rand, n int) []float64 {
		xs := make([]float64, n)
		y := r.NormFloat64()
		for i := range xs {
			xs[i] = math.Exp(simMu + simSigma*y)
			y = a*y + math.Sqrt(1-a*a)*r.NormFloat64()
		}
		return xs
	}, lognormCDF(simMu), math.Exp(simMu + simSigma*simSigma/2)}
}

// burstMu is the log median of latencies in a burst: 300 ms, three times the calm median.
const burstMu = simMu + 1.0986122886681098 // ln 300

// bursty switches between calm (median 100 ms) and bursts (median 300 ms): a burst starts
// with probability in per calm request and ends with probability out per burst request,
// so a fraction in/(in+out) of requests fall in bursts, started from that fraction.
func bursty(in, out float64) series {
	wb := in / (in + out)
	calm, burst := lognormCDF(simMu), lognormCDF(burstMu)
	return series{fmt.Sprintf("bursty-%g/%g", in, out), func(r *rand.Rand, n int) []float64 {
		xs := make([]float64, n)
		inBurst := r.Float64() < wb
		for i := range xs {
			mu := simMu
			if inBurst {
				mu = burstMu
			}
			xs[i] = math.Exp(mu + simSigma*r.NormFloat64())
			if inBurst {
				inBurst = r.Float64() >= out
			} else {
				inBurst = r.Float64() < in
			}
		}
		return xs
	}, func(x float64) float64 { return (1-wb)*calm(x) + wb*burst(x) },
		(1-wb)*math.Exp(simMu+simSigma*simSigma/2) + wb*math.Exp(burstMu+simSigma*simSigma/2)}
}

// trueQuantile inverts the marginal distribution function by bisection.
func trueQuantile(cdf func(float64) float64, q float64) float64 {
	lo, hi := 0.0, 1e6
	for range 200 {
		mid := (lo + hi) / 2
		if cdf(mid) < q {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// tally accumulates how often intervals covered the truth and how wide they were against
// the estimator's own spread over the replications.
type tally struct {
	covered, made int
	halfWidth     float64
	est, est2     float64
}

// add counts e's two-sided interval (none when e.K is 0) against truth; the estimator's
// spread is that of e.Centre, not of the interval's midpoint (a skewed mean's interval is
// not symmetric about it).
func (t *tally) add(e Estimate, truth float64) {
	if e.K == 0 {
		return
	}
	iv := e.Interval()
	t.made++
	if iv.Contains(truth) {
		t.covered++
	}
	t.halfWidth += iv.HalfWidth()
	t.est += e.Centre
	t.est2 += e.Centre * e.Centre
}

func (t *tally) coverage() float64 { return float64(t.covered) / float64(t.made) }

// widthRatio is the mean half-width over 1.96 × the estimator's standard deviation across
// replications (the half-width an oracle knowing the true spread would give): near 1.1
// for a sound interval with ~10 batches, far above when it is uselessly wide.
func (t *tally) widthRatio() float64 {
	m := t.est / float64(t.made)
	sd := math.Sqrt(t.est2/float64(t.made) - m*m)
	return t.halfWidth / float64(t.made) / (1.96 * sd)
}

// Output tokens per request: lognormal, median 200, σ 0.4, independent of the latency series.
const tokMu, tokSigma = 5.298317366548036, 0.4

// throughputPair turns a latency series into a throughput sample: each request's output
// tokens and the time to the next request's start, tokens × the series' per-token cost
// (1e-4 s per unit), so Σtok/Σspan has the known limit 1e4 / E[series].
func throughputPair(r *rand.Rand, xs []float64) (tok, span []float64) {
	tok, span = make([]float64, len(xs)), make([]float64, len(xs))
	for i, x := range xs {
		tok[i] = math.Exp(tokMu + tokSigma*r.NormFloat64())
		span[i] = tok[i] * x * 1e-4
	}
	return tok, span
}

// coverageCases are the series and sample sizes the intervals are claimed for: batches of
// at least ~4 integrated autocorrelation times (AR(1) a: (1+a)/(1−a) requests; the bursty
// series' regime indicator: (1+0.75)/(1−0.75) = 7) and ~100 or more bursts in the sample
// (bursts of 5 requests every 25: 2,000 requests hold ~80).
var coverageCases = []struct {
	s  series
	ns []int
}{
	{iidLognormal(), []int{200, 1000, 2000, 10000}},
	{ar1Lognormal(0.5), []int{200, 1000}},
	{ar1Lognormal(0.7), []int{500, 2000}},
	{bursty(0.05, 0.2), []int{2000, 4000}},
}

// TestCoverage runs 1,000 seeded replications of each series and asserts that the 95 %
// intervals of the mean, p50, p90, p95, p99 (where made) and throughput cover the known truth in 93–99.5 % of them
// and are not wider than 1.6 × what the estimator's true spread calls for.
func TestCoverage(t *testing.T) {
	for _, c := range coverageCases {
		for _, n := range c.ns {
			t.Run(fmt.Sprintf("%s/n=%d", c.s.name, n), func(t *testing.T) {
				t.Parallel()
				checkCoverage(t, c.s, n)
			})
		}
	}
}

// coverageQuantiles are the quantiles points bound (ttft p50 … p99).
var coverageQuantiles = []struct {
	name string
	q    float64
}{{"p50", 0.5}, {"p90", 0.9}, {"p95", 0.95}, {"p99", 0.99}}

func checkCoverage(t *testing.T, s series, n int) {
	var mt, tp tally
	qt := make([]tally, len(coverageQuantiles))
	truth, qs := make([]float64, len(coverageQuantiles)), make([]float64, len(coverageQuantiles))
	for i, c := range coverageQuantiles {
		truth[i], qs[i] = trueQuantile(s.cdf, c.q), c.q
	}
	r := rand.New(rand.NewPCG(uint64(n), 0x5eed))
	for range reps {
		xs := s.gen(r, n)
		e, _ := Batching{}.MeanEstimate(xs)
		mt.add(e, s.mean)
		for i, e := range (Batching{}).QuantileEstimates(xs, qs...) {
			qt[i].add(e, truth[i])
		}
		e, _ = Batching{}.RatioEstimate(throughputPair(r, xs))
		tp.add(e, 1e4/s.mean)
	}
	stats := []struct {
		stat string
		q    float64
		t    *tally
	}{{"mean", 0, &mt}, {"ratio", 0, &tp}}
	for i, c := range coverageQuantiles {
		stats = append(stats, struct {
			stat string
			q    float64
			t    *tally
		}{c.name, c.q, &qt[i]})
	}
	for _, c := range stats {
		if c.t.made == 0 && c.q > 0 && QuantileBatches(n, c.q) == 0 {
			t.Logf("%-14s n=%-5d %-5s refused (QuantileBatches = 0)", s.name, n, c.stat)
			continue
		}
		if c.t.made != reps {
			t.Errorf("%s: %d of %d intervals made", c.stat, c.t.made, reps)
			continue
		}
		cov, wr := c.t.coverage(), c.t.widthRatio()
		t.Logf("%-14s n=%-5d %-5s coverage %.1f %%, width ratio %.2f", s.name, n, c.stat, 100*cov, wr)
		if cov < 0.93 || cov > 0.995 {
			t.Errorf("%s: coverage %.3f outside [0.93, 0.995]", c.stat, cov)
		}
		if wr > 1.6 {
			t.Errorf("%s: half-width %.2f × the oracle's", c.stat, wr)
		}
	}
}

// TestRareBurstsUndercover shows the limit docs/statistics.md states: a point must hold many
// episodes of whatever slows the server. Bursts that start once per 100 calm requests and
// last 10 appear ~9 times in 1,000 requests; the count is skewed, and the interval of the
// mean, though its batches are long and its skew corrected, covers visibly less than 95 %
// (91.3 % over 10,000 replications; with one burst per 50 calm requests, ~17, the corrected
// interval covers 93.8 %).
func TestRareBurstsUndercover(t *testing.T) {
	s, n := bursty(0.01, 0.1), 1000
	r := rand.New(rand.NewPCG(11, 0x5eed))
	var mt tally
	for range reps {
		e, _ := Batching{}.MeanEstimate(s.gen(r, n))
		mt.add(e, s.mean)
	}
	t.Logf("%-14s n=%d mean coverage %.1f %%", s.name, n, 100*mt.coverage())
	if mt.made != reps || mt.coverage() >= 0.93 {
		t.Errorf("rare bursts: %d intervals, coverage %.3f; the documented limit expects under 0.93", mt.made, mt.coverage())
	}
}

// TestNaiveUndercovers shows why batch means: the textbook interval mean ± 1.96·s/√n, which
// assumes independent requests, covers iid data but misses the mean of AR(1) (a = 0.7)
// latencies far more often than 5 %, where Mean still covers.
func TestNaiveUndercovers(t *testing.T) {
	const n = 1000
	for _, c := range []struct {
		s        series
		min, max float64 // bounds on the naive interval's coverage
	}{
		{iidLognormal(), 0.93, 0.97},
		{ar1Lognormal(0.7), 0, 0.80},
	} {
		r := rand.New(rand.NewPCG(7, 0x5eed))
		naive, batch := 0, 0
		for range reps {
			xs := c.s.gen(r, n)
			m := mean(xs)
			ss := 0.0
			for _, x := range xs {
				ss += (x - m) * (x - m)
			}
			hw := 1.96 * math.Sqrt(ss/float64(n-1)/float64(n))
			if math.Abs(m-c.s.mean) <= hw {
				naive++
			}
			if iv, ok := Mean(xs); ok && iv.Contains(c.s.mean) {
				batch++
			}
		}
		nc, bc := float64(naive)/reps, float64(batch)/reps
		t.Logf("%-14s n=%d naive coverage %.1f %%, batch means %.1f %%", c.s.name, n, 100*nc, 100*bc)
		if nc < c.min || nc > c.max {
			t.Errorf("%s: naive coverage %.3f outside [%.2f, %.2f]", c.s.name, nc, c.min, c.max)
		}
		if bc < 0.93 {
			t.Errorf("%s: batch-means coverage %.3f < 0.93", c.s.name, bc)
		}
	}
}
