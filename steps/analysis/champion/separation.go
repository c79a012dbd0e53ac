package champion

import (
	"fmt"
	"math"

	"github.com/perfdag/perfdag/engine/plural"
	"github.com/perfdag/perfdag/schema"
)

// focusInterval is how a focus metric's 95 % interval is read off an atlas row: the keys that
// bound the metric itself (the atlas field name first, then the point record's name for the
// same quantity), and, for a per-GPU metric, the keys of the whole-endpoint metric to divide by
// the row's GPUs (an exact scaling: the GPU count is a constant, not an estimate). A metric
// without an entry (tokens_per_watt: power's own uncertainty is not measured) has no interval.
var focusIntervals = map[string]struct{ direct, perGPU []string }{
	"output_tok_s":          {direct: []string{"output_tok_s", "output_token_throughput"}},
	"output_tok_s_per_gpu":  {direct: []string{"output_tok_s_per_gpu"}, perGPU: []string{"output_tok_s", "output_token_throughput"}},
	"total_tok_s_per_gpu":   {direct: []string{"total_tok_s_per_gpu"}, perGPU: []string{"total_tok_s", "total_token_throughput"}},
	"request_throughput":    {direct: []string{"request_throughput"}},
	"tok_s_per_user":        {direct: []string{"tok_s_per_user", "tps_per_user"}},
	"aa_output_speed":       {direct: []string{"aa_output_speed"}},
	"goodput_req_s":         {direct: []string{"goodput_req_s"}},
	"goodput_req_s_per_gpu": {perGPU: []string{"goodput_req_s"}},
}

// FocusInterval returns the 95 % interval of a focus metric at an atlas row, nil when the row
// carries none the metric can be read from (FocusIntervalKeys names them).
func FocusInterval(metric string, r *schema.AtlasRow) *schema.Interval {
	m, ok := focusIntervals[metric]
	if !ok || len(r.Intervals) == 0 {
		return nil
	}
	for _, k := range m.direct {
		if iv, ok := wellFormed(r.Intervals, k); ok {
			return &iv
		}
	}
	if r.GPUs <= 0 {
		return nil
	}
	for _, k := range m.perGPU {
		if iv, ok := wellFormed(r.Intervals, k); ok {
			g := float64(r.GPUs)
			return &schema.Interval{Lo: iv.Lo / g, Hi: iv.Hi / g, Method: iv.Method + " (" + k + " ÷ " + plural.N(r.GPUs, "GPU") + ")", N: iv.N}
		}
	}
	return nil
}

// FocusIntervalKeys lists, for the docs and errors, the interval keys a focus metric is read
// from: its own, then per-GPU sources; empty for a metric that never has one.
func FocusIntervalKeys(metric string) (direct, perGPU []string) {
	m := focusIntervals[metric]
	return m.direct, m.perGPU
}

func wellFormed(ivs schema.Intervals, key string) (schema.Interval, bool) {
	iv, ok := ivs[key]
	if !ok || math.IsNaN(iv.Lo) || math.IsNaN(iv.Hi) || math.IsInf(iv.Lo, 0) || math.IsInf(iv.Hi, 0) || iv.Hi < iv.Lo {
		return schema.Interval{}, false
	}
	return iv, true
}

// separation judges whether the top two ranked arms differ beyond noise: the 95 % interval of
// the difference of their focus values, ± both half-widths in quadrature (independent
// measurements, each interval 95 %), must exclude 0. Unknown (nil) when either has no interval.
func separation(metric string, first, second *schema.ChampionArm) (*bool, string) {
	if first == nil || first.FocusValue == nil {
		return nil, ""
	}
	if second == nil || second.FocusValue == nil {
		return nil, fmt.Sprintf("separation not judged: %s is the only arm with a point meeting the SLO", first.Arm)
	}
	for _, a := range []*schema.ChampionArm{first, second} {
		if a.FocusInterval == nil {
			return nil, fmt.Sprintf("separation unknown: arm %s's best point has no 95 %% interval of %s (fewer requests than an interval needs, 100 for a throughput; a point measured before intervals; or a metric that has none): the ranking of %s over %s is not tested against noise",
				a.Arm, metric, first.Arm, second.Arm)
		}
	}
	d := *first.FocusValue - *second.FocusValue
	h := math.Hypot(first.FocusInterval.HalfWidth(), second.FocusInterval.HalfWidth())
	sep := d-h > 0
	what := fmt.Sprintf("%s %s ±%s vs %s %s ±%s: difference %s ±%s",
		first.Arm, num(*first.FocusValue), num(first.FocusInterval.HalfWidth()),
		second.Arm, num(*second.FocusValue), num(second.FocusInterval.HalfWidth()), signed(d), num(h))
	if sep {
		return &sep, "top two separated: " + what + " (95 % interval excludes 0)"
	}
	return &sep, "top two not separated: " + what + " includes 0 — the ranking may be noise; measure more requests (requests_per_point) before choosing between them"
}

// SeparatedWord is Champion.Separated in one word for step results and tables: yes, no, unknown.
func SeparatedWord(sep *bool) string {
	switch {
	case sep == nil:
		return "unknown"
	case *sep:
		return "yes"
	}
	return "no"
}
