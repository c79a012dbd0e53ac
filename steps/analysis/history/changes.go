package history

import (
	"fmt"
	"math"
	"slices"

	"github.com/perfdag/perfdag/steps/analysis/changepoint"
)

// KindChangePoint marks where a series' level shifts (ChangePoints).
const KindChangePoint = "change_point"

// higherIsWorse are the history metrics that regress upwards; the rest (throughput, goodput,
// attainment, the knee) regress downwards.
var higherIsWorse = []string{"ttft_p50_ms", "ttft_p95_ms", "itl_p50_ms"}

// Worse reports whether a move of size in metric is a regression.
func Worse(metric string, size float64) bool {
	if slices.Contains(higherIsWorse, metric) {
		return size > 0
	}
	return size < 0
}

// ChangePoints is the Annotator that marks where each series shifts (changepoint.Detect: E-
// divisive means with a permutation test, docs/schedule.md#change-points): a mark on the series
// and on the run where the new level starts, with its size, its interval and the p-value. A
// value's interval, when the run stated one, is its measurement error (a 95 % interval is ±1.96
// standard errors). Each series' shuffles are seeded by its position, so a history reads the
// same every time.
func ChangePoints(o changepoint.Options) Annotator {
	return func(h *History) error {
		runAt := map[string]int{}
		for i, r := range h.Runs {
			runAt[r.ID] = i
		}
		for si := range h.Series {
			s := &h.Series[si]
			pts := make([]changepoint.Point, 0, len(s.Points))
			idx := make([]int, 0, len(s.Points)) // series point of each detector point
			for i, p := range s.Points {
				if math.IsNaN(p.Value) || math.IsInf(p.Value, 0) {
					continue
				}
				var se float64
				if p.Lo != nil && p.Hi != nil && *p.Hi >= *p.Lo {
					se = (*p.Hi - *p.Lo) / (2 * 1.959964)
				}
				pts = append(pts, changepoint.Point{Value: p.Value, SE: se})
				idx = append(idx, i)
			}
			so := o
			so.Seed = o.Seed + uint64(si)
			for _, c := range changepoint.Detect(pts, so) {
				at := s.Points[idx[c.Index]]
				m := Mark{Kind: KindChangePoint, Run: at.Run, Cell: s.Cell, Load: s.Load, Metric: s.Metric,
					Worse: Worse(s.Metric, c.Size), Change: &c}
				m.Detail = describe(s, c, at)
				s.Marks = append(s.Marks, m)
				if ri, ok := runAt[at.Run]; ok {
					h.Runs[ri].Marks = append(h.Runs[ri].Marks, m)
				}
			}
		}
		return nil
	}
}

// describe says a change in words: "ttft_p50_ms of aa-1k c16 rose 6.2 % (95 %: +4.1 … +8.3 %)
// from 12.1 to 12.9 at run R, a regression".
func describe(s *Series, c changepoint.Change, at SeriesPoint) string {
	where := s.Cell
	if s.Load != "" {
		where += " " + s.Load
	}
	verb := "rose"
	if c.Size < 0 {
		verb = "fell"
	}
	size := fmt.Sprintf("by %.4g (95 %%: %+.4g … %+.4g)", math.Abs(c.Size), c.Lo, c.Hi)
	if !math.IsNaN(c.Pct) && c.Before != 0 {
		size = fmt.Sprintf("%.1f %% (95 %%: %+.1f … %+.1f %%)", math.Abs(c.Pct), 100*c.Lo/math.Abs(c.Before), 100*c.Hi/math.Abs(c.Before))
	}
	kind := "an improvement"
	if Worse(s.Metric, c.Size) {
		kind = "a regression"
	}
	return fmt.Sprintf("%s of %s %s %s from %.4g to %.4g at run %s (%s), %s; p = %.3f",
		s.Metric, where, verb, size, c.Before, c.After, at.Run, at.Time, kind, c.P)
}
