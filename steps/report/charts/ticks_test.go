package charts

import (
	"math"
	"testing"
)

func TestTicksDistinctAndCoverDegenerateData(t *testing.T) {
	tests := []struct {
		name string
		data []float64
	}{
		{"one point", []float64{189}},
		{"flat series", []float64{3.1, 3.1005, 3.101, 3.1}},
		{"huge values", []float64{1.2e9, 2.5e9}},
		{"tpm bars", []float64{0, 250000}},
		{"zeros", []float64{0, 0, 0}},
		{"one zero", []float64{0}},
		{"tiny", []float64{1e-6, 3e-6}},
		{"negative", []float64{-5, -4.99}},
		{"wide", []float64{0.5, 987654}},
		{"right axis", []float64{750, 1000}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dmin, dmax := math.Inf(1), math.Inf(-1)
			for _, v := range tc.data {
				dmin, dmax = math.Min(dmin, v), math.Max(dmax, v)
			}
			lo, hi, step := NiceRange(dmin, dmax)
			if lo > dmin || hi < dmax {
				t.Fatalf("range [%g, %g] clips data [%g, %g]", lo, hi, dmin, dmax)
			}
			if dmin >= 0 && lo < 0 {
				t.Errorf("non-negative data got a negative axis: %g", lo)
			}
			if span := hi - lo; span < 0.09*math.Max(math.Abs(dmin), math.Abs(dmax)) {
				t.Errorf("span %g zooms flat data into a slope", span)
			}
			ticks := linearTicks{step: step}.Ticks(lo, hi)
			if len(ticks) < 2 || len(ticks) > 12 {
				t.Fatalf("%d ticks: %v", len(ticks), ticks)
			}
			if ticks[0].Value > dmin || ticks[len(ticks)-1].Value < dmax {
				t.Errorf("ticks %v to %v do not cover data [%g, %g]", ticks[0].Value, ticks[len(ticks)-1].Value, dmin, dmax)
			}
			seen := map[string]bool{}
			for _, tk := range ticks {
				if tk.Label == "" || seen[tk.Label] {
					t.Errorf("tick labels not distinct: %+v", ticks)
				}
				seen[tk.Label] = true
			}
		})
	}
}

func TestTickLabel(t *testing.T) {
	for _, tc := range []struct {
		v, step float64
		want    string
	}{
		{250000, 50000, "250k"},
		{1000, 250, "1000"},
		{750, 250, "750"},
		{3.1, 0.1, "3.1"},
		{3.15, 0.05, "3.15"},
		{0, 0.1, "0"},
		{1.5e6, 5e5, "1.5M"},
		{2e9, 1e9, "2G"},
	} {
		if got := TickLabel(tc.v, tc.step); got != tc.want {
			t.Errorf("TickLabel(%g, %g) = %q, want %q", tc.v, tc.step, got, tc.want)
		}
	}
}
