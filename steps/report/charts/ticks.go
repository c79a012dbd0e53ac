package charts

import (
	"math"
	"strconv"

	"gonum.org/v1/plot"
)

// minRelSpan is the narrowest linear axis span relative to the largest magnitude shown: a flat
// series (3.100 … 3.101) is drawn flat on a ±5 % axis instead of zoomed into a steep drop.
const minRelSpan = 0.1

// NiceRange returns the linear axis range [lo, hi] for data spanning [dmin, dmax]: widened when
// the data are (nearly) flat or a single point, and extended outward to whole tick steps so no
// datum is ever clipped. It also returns the tick step. Non-finite inputs give [0, 1].
func NiceRange(dmin, dmax float64) (lo, hi, step float64) {
	if math.IsNaN(dmin) || math.IsNaN(dmax) || math.IsInf(dmin, 0) || math.IsInf(dmax, 0) {
		dmin, dmax = 0, 1
	}
	if dmin > dmax {
		dmin, dmax = dmax, dmin
	}
	mag := math.Max(math.Abs(dmin), math.Abs(dmax))
	if span := dmax - dmin; span < minRelSpan*mag || span == 0 {
		want := math.Max(minRelSpan*mag, 1e-9)
		if mag == 0 {
			want = 1
		}
		nonNeg := dmin >= 0
		mid := (dmin + dmax) / 2
		dmin, dmax = mid-want/2, mid+want/2
		if nonNeg && dmin < 0 { // a non-negative series never gets a negative axis
			dmin, dmax = 0, want
		}
	}
	step = NiceStep((dmax - dmin) / 4)
	lo = math.Floor(dmin/step) * step
	hi = math.Ceil(dmax/step) * step
	if hi <= lo {
		hi = lo + step
	}
	return lo, hi, step
}

// NiceStep rounds a raw step up to 1, 2, 2.5 or 5 × a power of ten, so both renderers' axes
// (PNG here, SVG in svgchart) tick at the same round values.
func NiceStep(raw float64) float64 {
	if raw <= 0 || math.IsNaN(raw) || math.IsInf(raw, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= raw*(1-1e-12) {
			return m * p
		}
	}
	return 10 * p
}

// linearTicks labels every step from lo to hi with just enough decimals to tell ticks apart,
// large values in compact form (250k, 1.5M).
type linearTicks struct{ step float64 }

// Ticks implements plot.Ticker.
func (t linearTicks) Ticks(lo, hi float64) []plot.Tick {
	step := t.step
	if step <= 0 || (hi-lo)/step > 40 {
		_, _, step = NiceRange(lo, hi)
	}
	var out []plot.Tick
	first := math.Ceil(lo/step-1e-9) * step
	for i := 0; ; i++ {
		v := first + float64(i)*step
		if v > hi+step*1e-9 || i > 60 {
			break
		}
		if math.Abs(v) < step*1e-9 {
			v = 0
		}
		out = append(out, plot.Tick{Value: v, Label: TickLabel(v, step)})
	}
	return out
}

// TickLabel formats v for an axis whose ticks are step apart: compact (k, M, G) when the step
// is large (the unit follows the step, so one axis uses one unit), otherwise with the decimals the step needs, so neighbouring labels always differ.
func TickLabel(v, step float64) string {
	if v == 0 {
		return "0"
	}
	for _, u := range []struct {
		div float64
		sfx string
		min float64 // the smallest step that uses this unit (one unit per axis)
	}{{1e9, "G", 1e8}, {1e6, "M", 1e5}, {1e3, "k", 1e3}} {
		if step >= u.min {
			return strconv.FormatFloat(v/u.div, 'f', decimals(step/u.div), 64) + u.sfx
		}
	}
	return strconv.FormatFloat(v, 'f', decimals(step), 64)
}

// decimals is how many decimals a multiple of step needs to be written exactly (up to 9).
func decimals(step float64) int {
	for d := 0; d < 9; d++ {
		s := step * math.Pow(10, float64(d))
		if math.Abs(s-math.Round(s)) < 1e-6*s {
			return d
		}
	}
	return 9
}
