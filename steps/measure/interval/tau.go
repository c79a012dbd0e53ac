package interval

import (
	"math"

	"gonum.org/v1/gonum/dsp/fourier"
)

// Tau is the integrated autocorrelation time τ = 1 + 2 Σ_{k≥1} ρ_k of a stationary series
// by Geyer's initial monotone sequence estimator (Geyer, Statistical Science 1992): the
// autocovariances are summed in pairs Γ_m = γ_2m + γ_2m+1 while the pairs stay positive,
// each pair clipped to the one before (the true sequence is positive and decreasing for a
// reversible chain, and the clipping keeps noise in the far lags out). n / τ is what the
// correlated values are worth as independent ones (the effective sample size). It is at
// least 1 (negatively correlated values get no credit) and 1 for a series without spread or
// shorter than two values.
func Tau(xs []float64) float64 {
	n := len(xs)
	if n < 2 {
		return 1
	}
	g := newLags(xs)
	g0 := g.at(0)
	if !(g0 > 0) || math.IsInf(g0, 0) {
		return 1
	}
	sum, prev := -g0, math.Inf(1)
	for m := 0; 2*m+1 < n; m++ {
		pair := g.at(2*m) + g.at(2*m+1)
		if pair <= 0 {
			break
		}
		pair = min(pair, prev)
		sum += 2 * pair
		prev = pair
	}
	return max(sum/g0, 1)
}

// directLags is how many autocovariances are summed directly, O(n) each, before all of them
// are computed at once by FFT: Geyer's sequence stops within a few lags on weakly
// correlated data, where one FFT would cost more.
const directLags = 64

// lags yields a series' autocovariances lag by lag.
type lags struct {
	xs  []float64 // centred
	fft []float64 // all lags, once computed
}

func newLags(xs []float64) *lags {
	m := mean(xs)
	c := make([]float64, len(xs))
	for i, x := range xs {
		c[i] = x - m
	}
	return &lags{xs: c}
}

// at is γ_k = (1/n) Σ_{i<n−k} (x_i − x̄)(x_{i+k} − x̄).
func (l *lags) at(k int) float64 {
	n := len(l.xs)
	if k >= directLags && l.fft == nil {
		l.fft = autocovariance(l.xs)
	}
	if l.fft != nil {
		return l.fft[k]
	}
	s := 0.0
	for i := 0; i+k < n; i++ {
		s += l.xs[i] * l.xs[i+k]
	}
	return s / float64(n)
}

// autocovariance returns γ_k for k = 0 … n−1 of centred values by FFT (zero-padded to at
// least 2n, so the product is the linear, not circular, correlation).
func autocovariance(xs []float64) []float64 {
	n := len(xs)
	size := 1
	for size < 2*n {
		size <<= 1
	}
	buf := make([]float64, size)
	copy(buf, xs)
	fft := fourier.NewFFT(size)
	coef := fft.Coefficients(nil, buf)
	for i, c := range coef {
		coef[i] = complex(real(c)*real(c)+imag(c)*imag(c), 0)
	}
	seq := fft.Sequence(buf, coef)
	out := make([]float64, n)
	for k := range out {
		out[k] = seq[k] / float64(size) / float64(n)
	}
	return out
}

// ESS is the effective sample size of a series: its length over Tau.
func ESS(xs []float64) float64 { return float64(len(xs)) / Tau(xs) }
