package interval

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// goodSeries is a simulated 0/1 series (whether each request met an SLO) with a known
// attainment: a latent stationary Gaussian AR(1) (coefficient a; 0 is iid) thresholded at the
// quantile that leaves a fraction p of requests good, repeated c times in a row so c requests
// in flight together share one state (a closed loop at concurrency c).
func goodSeries(r *rand.Rand, n int, p, a float64, c int) []float64 {
	cut := math.Sqrt2 * math.Erfinv(2*p-1) // Φ⁻¹(p)
	xs := make([]float64, n)
	y := r.NormFloat64()
	for i := range xs {
		if i%c == 0 && i > 0 {
			y = a*y + math.Sqrt(1-a*a)*r.NormFloat64()
		}
		if y+0.3*r.NormFloat64() <= cut*math.Sqrt(1+0.09) {
			xs[i] = 1
		}
	}
	return xs
}

// TestProportionCoverage runs 1,000 seeded replications per case and asserts that the 95 %
// interval of the attainment covers the known truth in at least 93 % of them (at most 99.9 %:
// the Wilson part is conservative, never vacuous) and never leaves [0, 1]; batch means alone
// are shown to under-cover near 1, which is why the Wilson interval is kept beside them.
func TestProportionCoverage(t *testing.T) {
	cases := []struct {
		p       float64
		a       float64
		c, n    int
		bmBelow float64 // batch means alone cover less than this (0: not asserted)
	}{
		{0.95, 0, 1, 2000, 0}, {0.99, 0, 1, 2000, 0}, {0.999, 0, 1, 4000, 0.93},
		{0.95, 0.7, 1, 4000, 0}, {0.99, 0.7, 1, 4000, 0},
		{0.9, 0.5, 8, 4000, 0}, {0.99, 0.5, 8, 8000, 0.93}, {0.5, 0.5, 8, 2000, 0},
	}
	for _, cs := range cases {
		t.Run(fmt.Sprintf("p=%g/a=%g/c=%d/n=%d", cs.p, cs.a, cs.c, cs.n), func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(uint64(cs.n), uint64(cs.c)))
			b := For(float64(cs.c))
			covered, bm, made := 0, 0, 0
			for range reps {
				xs := goodSeries(r, cs.n, cs.p, cs.a, cs.c)
				iv, ok := b.Proportion(xs)
				if !ok {
					continue
				}
				made++
				if iv.Lo < 0 || iv.Hi > 1 || iv.Lo > mean(xs) || iv.Hi < mean(xs) {
					t.Fatalf("interval %+v outside [0, 1] or not around the fraction %.4f", iv, mean(xs))
				}
				if iv.Contains(cs.p) {
					covered++
				}
				// batch means alone, the symmetric t interval: the skew correction (which
				// Proportion's batch means get) is what the Wilson part also stands in for
				if e, ok := b.MeanEstimate(xs); ok {
					e.Skew = 0
					if e.Interval().Contains(cs.p) {
						bm++
					}
				}
			}
			if made != reps {
				t.Fatalf("%d of %d intervals made", made, reps)
			}
			cov, bmc := float64(covered)/reps, float64(bm)/reps
			t.Logf("coverage %.1f %% (batch means alone %.1f %%)", 100*cov, 100*bmc)
			if cov < 0.93 || cov > 0.999 {
				t.Errorf("coverage %.3f outside [0.93, 0.999]", cov)
			}
			if cs.bmBelow > 0 && bmc >= cs.bmBelow {
				t.Errorf("batch means alone covered %.3f: the case no longer shows why Wilson is kept", bmc)
			}
		})
	}
}

// Every request good: batch means collapse to [1, 1]; the interval still says how sure the
// sample can make one (Wilson at one observation per turn of the slots), and refuses values
// other than 0 and 1 and too few requests.
func TestProportionEdges(t *testing.T) {
	ones := make([]float64, 1000)
	for i := range ones {
		ones[i] = 1
	}
	iv, ok := For(1).Proportion(ones)
	if !ok || iv.Hi != 1 || !(iv.Lo > 0.99 && iv.Lo < 0.997) || iv.Method != MethodProportion {
		t.Errorf("all good at c1: %+v %v, want [~0.996, 1] by %s", iv, ok, MethodProportion)
	}
	iv8, _ := For(8).Proportion(ones)
	if !(iv8.Lo < iv.Lo) || iv8.Hi != 1 {
		t.Errorf("all good at c8: %+v, want a lower bound below c1's %.4f (125 turns, not 1,000 requests)", iv8, iv.Lo)
	}
	zeros := make([]float64, 1000)
	if iv, ok := Proportion(zeros); !ok || iv.Lo != 0 || !(iv.Hi > 0.002) {
		t.Errorf("none good: %+v %v, want [0, ~0.004]", iv, ok)
	}
	if _, ok := Proportion(append(ones[:200:200], 0.5)); ok {
		t.Error("a value of 0.5 made an interval")
	}
	if _, ok := Proportion(ones[:MinSamples-1]); ok {
		t.Errorf("%d values made an interval", MinSamples-1)
	}
}

// The Wilson bound counts a series' effective observations: n / τ̂ where the series has spread
// and is long enough to trust τ̂ (a correlated series at one in flight counted as n independent
// requests made the interval too narrow), one per turn of the slots otherwise (all good: no
// spread to estimate τ̂ from).
func TestWilsonCountIsTheESS(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	xs := goodSeries(r, 4000, 0.9, 0.7, 1)
	tau := Tau(xs)
	if got := For(1).WilsonCount(xs); !(tau > 2) || math.Abs(got-4000/tau) > 1e-9 {
		t.Errorf("AR(1) 0.7 at c1: Wilson count %.1f, want n / τ̂ = %.1f (τ̂ %.2f)", got, 4000/tau, tau)
	}
	ones := make([]float64, 800)
	for i := range ones {
		ones[i] = 1
	}
	if got := For(8).WilsonCount(ones); got != 100 {
		t.Errorf("all good at c8: Wilson count %v, want one per turn (100)", got)
	}
	if got := For(8).WilsonCount(xs[:100]); got != 12.5 {
		t.Errorf("100 values (too short to trust τ̂) at c8: %v, want 12.5", got)
	}
}

// One-sided bounds of a proportion are the more cautious of batch means and Wilson at the
// asked confidence, inside [0, 1], around the fraction and wider at a higher confidence.
func TestProportionEstimateBounds(t *testing.T) {
	xs := goodSeries(rand.New(rand.NewPCG(9, 9)), 2000, 0.95, 0, 1)
	e, ok := Decide(1).ProportionEstimate(xs)
	if !ok {
		t.Fatal("no estimate")
	}
	p := mean(xs)
	for _, conf := range []float64{0.9, 0.99, 0.999} {
		lo, hi := e.Lower(conf), e.Upper(conf)
		wlo, whi := wilson(p, e.Count, normalQuantile(conf))
		if !(lo >= 0 && lo < p && hi > p && hi <= 1) || lo > wlo || lo > e.Mean.Lower(conf) || hi < math.Min(whi, 1) || hi < math.Min(e.Mean.Upper(conf), 1) {
			t.Errorf("conf %v: [%v, %v] around %v, want the wider of Wilson [%v, %v] and batch means [%v, %v]", conf, lo, hi, p, wlo, whi, e.Mean.Lower(conf), e.Mean.Upper(conf))
		}
	}
	if !(e.Lower(0.999) < e.Lower(0.9)) {
		t.Error("the lower bound did not fall with the confidence")
	}
	ones := make([]float64, 64)
	for i := range ones {
		ones[i] = 1
	}
	if e, ok := Decide(4).ProportionEstimate(ones); !ok || e.Lower(0.99) > 0.9 || e.Upper(0.99) != 1 {
		t.Errorf("64 good at c4: %+v %v, lower %v: want Wilson over 16 turns, not the exact 1", e, ok, e.Lower(0.99))
	}
}
