package interval

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Hall's transformation: no shift without skew, the Cornish–Fisher term −γ(2z² + 1)/6 to
// first order in γ, a monotone quantile z + shift, and for a right-skewed estimate a longer
// reach on the long (z < 0) side than a shift of both ends would give; the interval's ends are
// the one-sided bounds at 0.975, mirrored for a mirrored skew.
func TestSkewShift(t *testing.T) {
	if got := (Estimate{SE: 1, Skew: 0}).skewShift(1.96); got != 0 {
		t.Errorf("no skew: %v, want 0", got)
	}
	for _, z := range []float64{-3, -1.96, 0, 1.96, 3} {
		g := 1e-4
		cf := -g * (2*z*z + 1) / 6
		if got := (Estimate{SE: 1, Skew: g}).skewShift(z); math.Abs(got-cf) > 10*g*g*(1+z*z*z*z) {
			t.Errorf("γ %g, z %g: %v, want Cornish–Fisher's %v to first order", g, z, got, cf)
		}
	}
	for _, g := range []float64{-0.6, -0.2, 0.2, 0.6} {
		e := Estimate{SE: 1, Skew: g}
		prev := math.Inf(-1)
		for z := -5.0; z <= 5; z += 0.25 {
			if q := z + e.skewShift(z); !(q > prev) {
				t.Fatalf("γ %g: quantile %v at z %v not above %v: not monotone", g, q, z, prev)
			} else {
				prev = q
			}
		}
	}
	e := Estimate{Centre: 10, SE: 1, K: 10, Skew: 0.3, Method: MethodBatchMeans}
	iv := e.Interval()
	t975, z975 := tQuantile(0.975, 9), normalQuantile(0.975)
	cf := 0.3 * (2*z975*z975 + 1) / 6
	if iv.Lo != e.Lower(0.975) || iv.Hi != e.Upper(0.975) {
		t.Errorf("interval %+v, want the one-sided bounds at 0.975 [%v, %v]", iv, e.Lower(0.975), e.Upper(0.975))
	}
	if below, above := 10-iv.Lo, iv.Hi-10; !(below < t975-cf/2 && above > t975+cf) {
		t.Errorf("skew 0.3: %v below and %v above the centre, want under %v and over %v", below, above, t975-cf/2, t975+cf)
	}
	mirror := Estimate{Centre: 10, SE: 1, K: 10, Skew: -0.3}.Interval()
	if math.Abs((10-mirror.Lo)-(iv.Hi-10)) > 1e-12 || math.Abs((mirror.Hi-10)-(10-iv.Lo)) > 1e-12 {
		t.Errorf("skew −0.3: %+v, want the mirror of %+v", mirror, iv)
	}
	// two batches: the t quantile's width is kept, the shift is the normal quantile's
	two := Estimate{Centre: 10, SE: 1, K: 2, Skew: 0.5}
	if lo := two.Lower(0.99); !(10-lo > tQuantile(0.99, 1)-2) {
		t.Errorf("two batches at 99 %%: lower bound %v, want about t_1 = %v below the centre", lo, tQuantile(0.99, 1))
	}
}

// On strongly skewed independent values (lognormal σ 1.2, 100 per point, ten batches of
// ten) the symmetric t interval of the mean misses the truth, mostly above it; the
// skew-corrected one covers, at a width the oracle's spread bounds. 1,000 seeded points.
func TestSkewedMeanCovers(t *testing.T) {
	const sigma, n = 1.2, 100
	truth := math.Exp(simMu + sigma*sigma/2)
	r := rand.New(rand.NewPCG(12, 0x5eed))
	var corrected, symmetric tally
	for range reps {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = math.Exp(simMu + sigma*r.NormFloat64())
		}
		e, _ := Batching{}.MeanEstimate(xs)
		corrected.add(e, truth)
		e.Skew = 0
		symmetric.add(e, truth)
	}
	t.Logf("lognormal σ %g n=%d: corrected covers %.1f %% (width ratio %.2f), symmetric t %.1f %% (%.2f)", sigma, n,
		100*corrected.coverage(), corrected.widthRatio(), 100*symmetric.coverage(), symmetric.widthRatio())
	if corrected.made != reps || corrected.coverage() < 0.93 || corrected.coverage() > 0.99 {
		t.Errorf("corrected: %d intervals covering %.3f, want %d in [0.93, 0.99]", corrected.made, corrected.coverage(), reps)
	}
	if symmetric.coverage() >= 0.925 {
		t.Errorf("symmetric t covered %.3f: the case no longer shows the skew error", symmetric.coverage())
	}
	if wr := corrected.widthRatio(); wr > 1.7 {
		t.Errorf("corrected half-width %.2f × the oracle's", wr)
	}
}
