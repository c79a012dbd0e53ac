package svgchart

import (
	"github.com/perfdag/perfdag/steps/report/charts"

	"math"
	"slices"
	"strconv"
	"strings"
)

// scale maps data values onto pixels along one axis.
type scale struct {
	lo, hi float64
	log    bool
	p0, p1 float64 // pixel positions of lo and hi
}

func (s scale) at(v float64) float64 {
	var t float64
	if s.log {
		t = (math.Log10(v) - math.Log10(s.lo)) / (math.Log10(s.hi) - math.Log10(s.lo))
	} else {
		t = (v - s.lo) / (s.hi - s.lo)
	}
	return s.p0 + t*(s.p1-s.p0)
}

// rangeOf fixes an axis' range: the caller's when Max > Min, else the data's with padding
// (5 % linear, ×1.25 on a log axis); a flat or empty range is widened so it can be drawn.
func rangeOf(a Axis, vals []float64) (lo, hi float64) {
	if a.Max > a.Min && (!a.Log || a.Min > 0) {
		return a.Min, a.Max
	}
	var vs []float64
	for _, v := range vals {
		if finite(v, a.Log) {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		if a.Log {
			return 1, 10
		}
		return 0, 1
	}
	lo, hi = slices.Min(vs), slices.Max(vs)
	if a.Log {
		if hi == lo {
			return lo / 2, hi * 2
		}
		return lo / 1.25, hi * 1.25
	}
	if hi-lo <= 1e-9*math.Max(math.Abs(hi), 1) { // flat, or apart by rounding only (a step of 1e-15 is no tick step)
		d := math.Max(math.Abs(hi)*0.1, 1)
		lo, hi = lo-d, hi+d
		if vs[0] >= 0 && lo < 0 {
			lo = 0
		}
		return lo, hi
	}
	pad := (hi - lo) * 0.05
	if lo >= 0 && lo-pad < 0 {
		return 0, hi + pad
	}
	return lo - pad, hi + pad
}

// ticks are the labelled positions of an axis: the caller's, or about five round numbers
// (1, 2, 2.5, 5 × 10^k) on a linear axis and the decades (with 2 and 5 when few) on a log one.
func ticks(a Axis, lo, hi float64) []float64 {
	in := func(v float64) bool { return v >= lo-1e-9*math.Abs(hi-lo) && v <= hi+1e-9*math.Abs(hi-lo) }
	var out []float64
	if len(a.Ticks) > 0 {
		for _, t := range a.Ticks {
			if in(t) && finite(t, a.Log) {
				out = append(out, t)
			}
		}
		return out
	}
	if a.Log {
		for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
			for _, m := range []float64{1, 2, 5} {
				if v := m * math.Pow(10, e); in(v) {
					out = append(out, v)
				}
			}
		}
		if decades := math.Log10(hi) - math.Log10(lo); decades > 2.5 {
			out = slices.DeleteFunc(out, func(v float64) bool {
				m := v / math.Pow(10, math.Floor(math.Log10(v)+1e-9))
				return math.Abs(m-1) > 1e-6
			})
		}
		return out
	}
	step := charts.NiceStep((hi - lo) / 5)
	for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9; v += step {
		if math.Abs(v) < step*1e-9 {
			v = 0
		}
		out = append(out, v)
	}
	return out
}

// Short formats a tick label compactly: 1.5k, 2M, 0.25 (the tooltip carries the exact value).
func Short(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1e9:
		return trim(v/1e9) + "G"
	case a >= 1e6:
		return trim(v/1e6) + "M"
	case a >= 1e4:
		return trim(v/1e3) + "k"
	case a == 0:
		return "0"
	case a < 0.001:
		return strconv.FormatFloat(v, 'g', 2, 64)
	}
	return trim(v)
}

// tickLabels labels an axis' ticks with Short, or, when that prints two ticks alike (ticks
// closer than its three decimals: 3.0999, 3.1, 3.1001 all read 3.1), with as many decimals as
// tell every tick apart.
func tickLabels(ts []float64) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = Short(t)
	}
	if !repeats(out) {
		return out
	}
	for d := 4; d <= 12; d++ {
		for i, t := range ts {
			out[i] = strconv.FormatFloat(t, 'f', d, 64)
		}
		if !repeats(out) {
			break
		}
	}
	return out
}

// repeats reports whether two neighbouring labels are the same text.
func repeats(labels []string) bool {
	for i := 1; i < len(labels); i++ {
		if labels[i] == labels[i-1] {
			return true
		}
	}
	return false
}

// trim prints up to three significant decimals without trailing zeros.
func trim(v float64) string {
	s := strconv.FormatFloat(v, 'f', 3, 64)
	if a := math.Abs(v); a >= 100 {
		s = strconv.FormatFloat(v, 'f', 1, 64)
	}
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}
