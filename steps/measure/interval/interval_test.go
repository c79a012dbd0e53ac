package interval

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestBatches(t *testing.T) {
	for _, c := range []struct{ n, want int }{
		{0, 0}, {99, 0}, {100, 10}, {1000, 10}, {4399, 10}, {4400, 11}, {8000, 20}, {1e6, 20},
	} {
		if got := Batches(c.n); got != c.want {
			t.Errorf("Batches(%d) = %d, want %d", c.n, got, c.want)
		}
	}
	for _, c := range []struct {
		n    int
		q    float64
		want int
	}{
		{100, 0.5, 0}, {200, 0.5, 10}, {199, 0.1, 0}, {200, 0.9, 0}, {1999, 0.95, 0}, {2000, 0.95, 10},
		{2000, 0.05, 10}, {8000, 0.95, 20}, {8000, 0.99, 0}, {10000, 0.99, 10}, {1000, 0, 0}, {1000, 1, 0},
	} {
		if got := QuantileBatches(c.n, c.q); got != c.want {
			t.Errorf("QuantileBatches(%d, %v) = %d, want %d", c.n, c.q, got, c.want)
		}
	}
}

// TestBatchingFor: batches hold InflightFactor × the requests in flight, k lowered to keep
// them so (never below MinBatches), and a quantile's tail rule still applies.
func TestBatchingFor(t *testing.T) {
	for _, c := range []struct {
		n        int
		inflight float64
		want     int
	}{
		{99, 0.1, 0}, {100, 1.25, 10}, {100, 1.3, 0}, {1000, 12.5, 10}, {1000, 13, 0},
		{5120, 64, 10}, {5119, 64, 0}, {6000, 64, 11}, {8000, 1, 20}, {20000, 64, 20}, {100000, 0, 20},
	} {
		if got := For(c.inflight).Batches(c.n); got != c.want {
			t.Errorf("For(%v).Batches(%d) = %d, want %d", c.inflight, c.n, got, c.want)
		}
	}
	for _, c := range []struct {
		n        int
		inflight float64
		want     bool
	}{{99, 0.1, false}, {320, 4, true}, {319, 4, false}, {5120, 64, true}, {5119, 64, false}} {
		if got := LongEnough(c.n, c.inflight); got != c.want {
			t.Errorf("LongEnough(%d, %v) = %v, want %v", c.n, c.inflight, got, c.want)
		}
	}
	if iv, ok := For(4).Quantile(make([]float64, 2000), 0.95); !ok || iv.N != 10 {
		t.Errorf("For(4).Quantile of 2,000 values = %+v, %v; want 10 batches", iv, ok)
	}
	if got := For(4).QuantileBatches(2000, 0.95); got != 10 {
		t.Errorf("For(4).QuantileBatches(2000, 0.95) = %d, want 10", got)
	}
	if got := For(64).QuantileBatches(6000, 0.99); got != 0 {
		t.Errorf("For(64).QuantileBatches(6000, 0.99) = %d, want 0 (6 beyond p99 per batch)", got)
	}
	// a series too short to trust its autocorrelation time (AR(1) 0.95: τ = 39, 1,000 values
	// < 50 τ) keeps the in-flight floor
	xs := ar1(rand.New(rand.NewPCG(1, 2)), 0.95, 1000)
	if tau := Tau(xs); Trusted(len(xs), tau) {
		t.Fatalf("Tau = %.1f is trusted on %d values", tau, len(xs))
	}
	if _, ok := For(13).Mean(xs); ok {
		t.Error("For(13).Mean made an interval from batches of 100 < 8 × 13")
	}
	if iv, ok := For(12).Mean(xs); !ok || iv.N != 10 {
		t.Errorf("For(12).Mean = %+v, %v; want 10 batches", iv, ok)
	}
	// independent values long enough to trust their τ ≈ 1 need no floor: 1,000 requests at
	// 64 in flight get an interval (the floor alone would ask for 5,120)
	iid := ar1(rand.New(rand.NewPCG(3, 4)), 0, 1000)
	if iv, ok := For(64).Mean(iid); !ok || iv.N != 10 || iv.ESS < 800 || iv.ESS > 1000 {
		t.Errorf("For(64).Mean of 1,000 independent values = %+v, %v; want 10 batches, ESS near 1,000", iv, ok)
	}
	if ivs := For(64).Quantiles(iid, 0.5); ivs[0].N != 10 || ivs[0].ESS < 800 {
		t.Errorf("For(64).Quantiles p50 of 1,000 independent values = %+v; want 10 batches, ESS near 1,000", ivs[0])
	}
}

// ar1 is n values of a stationary Gaussian AR(1) with coefficient a (τ = (1+a)/(1−a)).
func ar1(r *rand.Rand, a float64, n int) []float64 {
	xs := make([]float64, n)
	y := r.NormFloat64()
	for i := range xs {
		xs[i] = y
		y = a*y + math.Sqrt(1-a*a)*r.NormFloat64()
	}
	return xs
}

// TestTau: Geyer's estimate finds the integrated autocorrelation time (1 + a)/(1 − a) of long
// AR(1) series within 10 %, 1 for independent values, a constant or an alternating series
// (no credit for negative correlation), and runs low on a series only a few τ long — why
// batches keep the in-flight floor below TrustTaus × τ.
func TestTau(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, a := range []float64{0, 0.5, 0.7, 0.9} {
		want := (1 + a) / (1 - a)
		got := Tau(ar1(r, a, 100000))
		t.Logf("AR(1) %.1f: τ = %.2f, estimated %.2f from 100,000 values", a, want, got)
		if math.Abs(got-want) > 0.1*want {
			t.Errorf("AR(1) %.1f: Tau = %.2f, want %.2f ± 10 %%", a, got, want)
		}
	}
	alt := make([]float64, 1000)
	for i := range alt {
		alt[i] = float64(i % 2)
	}
	for name, xs := range map[string][]float64{"constant": make([]float64, 50), "alternating": alt, "one value": {3}} {
		if got := Tau(xs); got != 1 {
			t.Errorf("%s: Tau = %v, want 1", name, got)
		}
	}
	short := 0.0
	for range 200 {
		short += Tau(ar1(r, 0.9, 100))
	}
	if short /= 200; short > 15 {
		t.Errorf("AR(1) 0.9 over 100 values: mean Tau %.1f; expected the documented low bias (about 12 against 19)", short)
	}
	// the FFT path (lags past directLags) agrees with the direct sums
	xs := ar1(r, 0.99, 5000)
	l, f := newLags(xs), autocovariance(newLags(xs).xs)
	for _, k := range []int{0, 1, 17, 63} {
		if d := l.at(k) - f[k]; math.Abs(d) > 1e-9*math.Abs(f[0]) {
			t.Errorf("lag %d: direct %v, FFT %v", k, l.at(k), f[k])
		}
	}
}

// TestMeanExact checks the interval on a series whose batch means are known by hand: 100
// values, batch j (10 values) all equal to j, so the batch means are 0..9 (mean 4.5,
// sd √(55/6)) and the half-width is t_{0.975,9} · sd/√10.
func TestMeanExact(t *testing.T) {
	xs := make([]float64, 100)
	for i := range xs {
		xs[i] = float64(i / 10)
	}
	iv, ok := Mean(xs)
	if !ok {
		t.Fatal("Mean refused 100 values")
	}
	hw := 2.262157162740991 * math.Sqrt(55.0/6) / math.Sqrt(10)
	if math.Abs(iv.Lo-(4.5-hw)) > 1e-9 || math.Abs(iv.Hi-(4.5+hw)) > 1e-9 || iv.N != 10 || iv.Method != MethodBatchMeans {
		t.Errorf("Mean = %+v, want 4.5 ± %.9f over 10 batches", iv, hw)
	}
	// Shuffling the same values within the order changes the interval: order matters.
	for i := range xs {
		xs[i] = float64(i % 10)
	}
	if iv, _ := Mean(xs); iv.HalfWidth() != 0 {
		t.Errorf("interleaved batches all have mean 4.5, got half-width %v", iv.HalfWidth())
	}
}

func TestCentres(t *testing.T) {
	xs := make([]float64, 2000)
	den := make([]float64, len(xs))
	for i := range xs {
		xs[i] = float64((i * 7919) % 2003)
		den[i] = 0.5 + float64(i%3)
	}
	iv, ok := Quantile(xs, 0.95)
	if !ok || iv.Method != MethodSectioning || iv.N != 10 {
		t.Fatalf("Quantile = %+v, %v", iv, ok)
	}
	if c := (iv.Lo + iv.Hi) / 2; math.Abs(c-SortedQuantile(sorted(xs), 0.95)) > 1e-9 {
		t.Errorf("Quantile centre %v, want the overall p95 %v", c, SortedQuantile(sorted(xs), 0.95))
	}
	iv, ok = Ratio(xs, den)
	if !ok {
		t.Fatal("Ratio refused")
	}
	if c, want := (iv.Lo+iv.Hi)/2, sum(xs)/sum(den); math.Abs(c-want) > 1e-9*want {
		t.Errorf("Ratio centre %v, want Σnum/Σden %v", c, want)
	}
}

func TestQuantileInterpolation(t *testing.T) {
	for _, c := range []struct {
		xs   []float64
		q    float64
		want float64
	}{
		{[]float64{1, 2, 3}, 0.5, 2}, {[]float64{1, 2, 3, 4}, 0.5, 2.5}, {[]float64{1, 2, 3, 4}, 0.95, 3.85},
		{[]float64{5}, 0.9, 5},
	} {
		if got := SortedQuantile(c.xs, c.q); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("SortedQuantile(%v, %v) = %v, want %v", c.xs, c.q, got, c.want)
		}
	}
}

func TestRefusals(t *testing.T) {
	ok100 := make([]float64, 100)
	for i := range ok100 {
		ok100[i] = float64(i)
	}
	nan := append(append([]float64{}, ok100...), math.NaN())
	short := ok100[:99]
	zero := make([]float64, 100)
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"mean 99", second(Mean(short))},
		{"mean NaN", second(Mean(nan))},
		{"mean 100", second(Mean(ok100))},
		{"quantile p95 of 100", second(Quantile(ok100, 0.95))},
		{"quantile p50 NaN", second(Quantile(nan, 0.5))},
		{"quantile q>1", second(Quantile(ok100, 1.5))},
		{"ratio lengths", second(Ratio(ok100, short))},
		{"ratio zero den", second(Ratio(ok100, zero))},
		{"ratio 99", second(Ratio(short, short))},
		{"ratio Inf", second(Ratio(ok100, append(append([]float64{}, ok100[:99]...), math.Inf(1))))},
	} {
		if want := c.name == "mean 100"; c.ok != want {
			t.Errorf("%s: ok = %v, want %v", c.name, c.ok, want)
		}
	}
}

func second[T any](_ T, ok bool) bool { return ok }

// A rate's one-sided bounds lie on either side of it: on evenly spaced starts whose last span
// (to the window's end) is longer, the ratio's linearised series has one outlier and a large
// skew; a skew correction of it, once multiplied by requests per second, put the upper bound
// below the estimate (a rate of 24/s bounded above by 10). Ratios now take none.
func TestRatioBoundsAroundTheRate(t *testing.T) {
	n := 500
	num, den := make([]float64, n), make([]float64, n)
	for i := range n {
		num[i], den[i] = 1, 0.0408
	}
	den[n-1] = 0.163
	e, ok := Decide(4).RatioEstimate(num, den)
	if !ok {
		t.Fatal("no estimate")
	}
	for _, conf := range []float64{0.9, 0.99, 0.999} {
		if lo, hi := e.Lower(conf), e.Upper(conf); !(lo <= e.Centre && hi >= e.Centre) {
			t.Errorf("conf %v: [%v, %v] does not hold the rate %v", conf, lo, hi, e.Centre)
		}
	}
}
