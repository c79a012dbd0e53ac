package interval

import (
	"math"
	"testing"
)

// TestTQuantile checks the t quantiles against exact closed forms (df 1 and 2) and published
// two-sided 95 % critical values (R's qt(0.975, df) to 6 decimals).
func TestTQuantile(t *testing.T) {
	for _, c := range []struct {
		p    float64
		df   int
		want float64
		tol  float64
	}{
		{0.975, 1, math.Tan(math.Pi * 0.475), 1e-8},       // Cauchy: tan(π(p − ½))
		{0.975, 2, 0.95 / math.Sqrt(2*0.975*0.025), 1e-8}, // (2p−1)/√(2p(1−p))
		{0.995, 2, 0.99 / math.Sqrt(2*0.995*0.005), 1e-8}, //
		{0.975, 9, 2.262157, 1e-6},
		{0.975, 10, 2.228139, 1e-6},
		{0.975, 14, 2.144787, 1e-6},
		{0.975, 19, 2.093024, 1e-6},
		{0.975, 29, 2.045230, 1e-6},
		{0.975, 1000, 1.962339, 1e-6},
		{0.95, 9, 1.833113, 1e-6},
		{0.9, 4, 1.533206, 1e-6},
	} {
		if got := tQuantile(c.p, c.df); math.Abs(got-c.want) > c.tol {
			t.Errorf("tQuantile(%v, %d) = %.9f, want %.9f", c.p, c.df, got, c.want)
		}
	}
	for _, bad := range []struct {
		p  float64
		df int
	}{{0.975, 0}, {0.5, 5}, {1, 5}} {
		if got := tQuantile(bad.p, bad.df); !math.IsNaN(got) {
			t.Errorf("tQuantile(%v, %d) = %v, want NaN", bad.p, bad.df, got)
		}
	}
}
