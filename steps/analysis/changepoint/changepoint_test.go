package changepoint

import (
	"math"
	"math/rand/v2"
	"testing"
)

// series is n runs whose level is level(night) (nights from 1) times a normal noise of
// relative sd sigma; each run states a standard error se × its level.
func series(seed uint64, n int, sigma, se float64, level func(night int) float64) []Point {
	r := rand.New(rand.NewPCG(seed, 7))
	out := make([]Point, n)
	for i := range out {
		l := level(i + 1)
		out[i] = Point{Value: l * (1 + sigma*r.NormFloat64()), SE: se * l}
	}
	return out
}

// driftFrom is 100 until night start−1, then 1.5 % more each night.
func driftFrom(start int) func(int) float64 {
	return func(night int) float64 { return 100 * math.Pow(1.015, float64(max(0, night-start+1))) }
}

func flat(int) float64 { return 100 }

// TestDriftFoundNearItsStart is the case: 30 nights, a 1.5 %-per-night drift from night
// 15, at three levels of run-to-run noise (each run stating half of it as its standard error):
// in 100 seeded series per level the first change found starts within 3 nights of 15. At 0.5 %
// noise no night moves more than 5 % from the one before (a 5 % tolerance against the previous
// run never trips); at 1 % a few nights do.
func TestDriftFoundNearItsStart(t *testing.T) {
	for _, c := range []struct {
		sigma     float64
		want      int // of 100 series, the first change within 3 nights of 15
		wantJumps bool
	}{{0.005, 95, false}, {0.01, 95, true}, {0.02, 85, true}} {
		within, jumps := 0, 0
		for s := range uint64(100) {
			x := series(s, 30, c.sigma, c.sigma/2, driftFrom(15))
			for i := 1; i < len(x); i++ {
				if math.Abs(x[i].Value/x[i-1].Value-1) > 0.05 {
					jumps++
				}
			}
			cs := Detect(x, Options{Seed: s})
			if len(cs) > 0 && cs[0].Index+1 >= 12 && cs[0].Index+1 <= 18 && cs[0].Size > 0 {
				within++
			}
		}
		if within < c.want {
			t.Errorf("noise %.1f %%: drift found within 3 nights of its start in %d of 100 series, want ≥ %d", 100*c.sigma, within, c.want)
		}
		if jumps > 0 && !c.wantJumps {
			t.Errorf("noise %.1f %%: %d night-over-night moves beyond 5 %%", 100*c.sigma, jumps)
		}
		t.Logf("noise %.1f %%: found within 3 nights in %d/100; %d night-over-night moves beyond 5 %%", 100*c.sigma, within, jumps)
	}
}

// TestNoiseFalseChangeRate: 100 seeded 30-night series of pure noise of three shapes (normal,
// skewed, heavy-tailed): a change is reported in at most 5 % of them (the permutation test's
// level is 1 %; it assumes only that the runs are exchangeable).
func TestNoiseFalseChangeRate(t *testing.T) {
	shapes := map[string]func(r *rand.Rand) float64{
		"normal":    func(r *rand.Rand) float64 { return 100 * (1 + 0.01*r.NormFloat64()) },
		"lognormal": func(r *rand.Rand) float64 { return 100 * math.Exp(0.5*r.NormFloat64()) },
		"student-t3": func(r *rand.Rand) float64 {
			z, c := r.NormFloat64(), 0.0
			for range 3 {
				g := r.NormFloat64()
				c += g * g
			}
			return 100 + z/math.Sqrt(c/3)
		},
	}
	for name, draw := range shapes {
		false_ := 0
		for s := range uint64(100) {
			r := rand.New(rand.NewPCG(s+1000, uint64(len(name))))
			x := make([]Point, 30)
			for i := range x {
				x[i] = Point{Value: draw(r)}
			}
			if cs := Detect(x, Options{Seed: s}); len(cs) > 0 {
				false_++
			}
		}
		if false_ > 5 {
			t.Errorf("%s noise: a false change in %d of 100 series, want ≤ 5", name, false_)
		}
		t.Logf("%s noise: false changes in %d/100", name, false_)
	}
}

// TestStepLocatedAndSized: a 5 % step at night 15 under 0.5 % noise is found at night 15, alone,
// and its size interval holds the true 5 in ≥ 90 % of 200 seeded series.
func TestStepLocatedAndSized(t *testing.T) {
	exact, covered := 0, 0
	const n = 200
	for s := range uint64(n) {
		x := series(s, 30, 0.005, 0, func(night int) float64 {
			if night >= 15 {
				return 105
			}
			return 100
		})
		cs := Detect(x, Options{Seed: s})
		if len(cs) == 1 && cs[0].Index == 14 {
			exact++
			if cs[0].Lo <= 5 && 5 <= cs[0].Hi {
				covered++
			}
		}
	}
	if exact < n*95/100 {
		t.Errorf("step found alone at night 15 in %d of %d series, want ≥ 95 %%", exact, n)
	}
	if covered < exact*90/100 {
		t.Errorf("size interval held the true step in %d of %d, want ≥ 90 %%", covered, exact)
	}
	t.Logf("exact %d/%d, size covered %d/%d", exact, n, covered, exact)
}

func TestDetectEdges(t *testing.T) {
	pts := func(v ...float64) []Point {
		out := make([]Point, len(v))
		for i, x := range v {
			out[i] = Point{Value: x}
		}
		return out
	}
	if cs := Detect(pts(1, 2, 3, 4, 5), Options{}); cs != nil {
		t.Errorf("5 runs (fewer than two sides of 3): %v, want none", cs)
	}
	if cs := Detect(pts(7, 7, 7, 7, 7, 7, 7, 7, 7, 7), Options{}); len(cs) != 0 {
		t.Errorf("a constant series: %v, want none", cs)
	}
	// no noise: the step is exact, its interval a point
	cs := Detect(pts(10, 10, 10, 10, 10, 10, 12, 12, 12, 12, 12, 12), Options{})
	if len(cs) != 1 || cs[0].Index != 6 || cs[0].Size != 2 || cs[0].Lo != 2 || cs[0].Hi != 2 || cs[0].Pct != 20 {
		t.Fatalf("noiseless step: %+v, want one change at index 6 of size 2 (20 %%)", cs)
	}
	if cs[0].P >= DefaultAlpha || cs[0].Runs != [2]int{0, 12} {
		t.Errorf("p %v runs %v", cs[0].P, cs[0].Runs)
	}
	// the same shift, but each run states an error far larger: not a change
	x := pts(10, 10.1, 9.9, 10, 10.1, 9.9, 10.5, 10.4, 10.6, 10.5, 10.4, 10.6)
	if len(Detect(x, Options{})) != 1 {
		t.Fatalf("a 5 %% shift with 1 %% noise should be found")
	}
	for i := range x {
		x[i].SE = 2
	}
	if cs := Detect(x, Options{}); len(cs) != 0 {
		t.Errorf("a shift of 0.5 inside runs' own errors of 2: %+v, want none", cs)
	}
}

// TestDeterministic: the same series and seed give the same answer.
func TestDeterministic(t *testing.T) {
	x := series(3, 30, 0.01, 0.005, driftFrom(15))
	a, b := Detect(x, Options{Seed: 9}), Detect(x, Options{Seed: 9})
	if len(a) != len(b) {
		t.Fatalf("%v vs %v", a, b)
	}
	for i := range a {
		if a[i] != b[i] && !(math.IsNaN(a[i].Pct) && math.IsNaN(b[i].Pct)) {
			t.Errorf("%+v vs %+v", a[i], b[i])
		}
	}
}
