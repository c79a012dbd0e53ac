package baseline

import (
	"fmt"
	"math"

	"github.com/perfdag/perfdag/schema"
)

// WithinNoise is the verdict of a row whose change is beyond the tolerance but whose 95 %
// change interval reaches back inside it: worth a look, not a regression (docs/schedule.md).
const WithinNoise = "NOTE"

// Notes a row carries when its interval decided, or could not decide, the verdict.
const (
	NoteNoInterval = "no interval: tolerance only"
	// NoteTooFew marks a tolerance breach on a metric whose interval both points could carry
	// but did not, for too few requests (a p95 under 2,000): noise cannot be ruled out, so it
	// is a NOTE, never RED (docs/schedule.md).
	NoteTooFew   = "too few requests for this metric's interval: cannot tell from noise"
	noteZeroBase = "baseline is 0: tolerance only"
)

// MethodQuadrature names the change interval's construction: current − baseline ± the two
// half-widths combined in quadrature.
const MethodQuadrature = "difference, half-widths in quadrature"

// intervalMetric says whether a metric can carry a 95 % interval on a perfbench point: the
// per-concurrency measurements; errors is a count judged on its tolerance by design.
func intervalMetric(metric string) bool {
	for _, r := range rules[:pointRules] {
		if r.Metric == metric {
			return metric != "errors"
		}
	}
	return false
}

// usable returns the named interval of a point when it is present and well formed.
func usable(ivs schema.Intervals, metric string) *schema.Interval {
	iv, ok := ivs[metric]
	if !ok || !finite(iv.Lo) || !finite(iv.Hi) || iv.Hi < iv.Lo {
		return nil
	}
	return &iv
}

// noiseCheck is a compared row waiting for its interval judgement, with both sides' values.
type noiseCheck struct {
	row    int
	b, c   float64
	bi, ci *schema.Interval
	// aware: both points carry intervals (of other metrics): a missing one here means too few
	// requests for this metric, not a snapshot made before perfdag kept intervals.
	aware bool
}

// judgeAll judges the pending rows of a diff together: the m rows with intervals on both sides
// share one 95 % budget (Bonferroni), so a diff of a server against itself is falsely RED in
// at most 5 % of diffs, not in 5 % of its rows.
func judgeAll(rows []schema.DiffRow, pending []noiseCheck) {
	m := 0
	for _, p := range pending {
		if p.bi != nil && p.ci != nil {
			m++
		}
	}
	scale := familyScale(m)
	for _, p := range pending {
		judgeNoise(&rows[p.row], p.b, p.c, p.bi, p.ci, scale, m, p.aware)
	}
}

// z975 is the standard normal's 0.975 quantile, the z of a two-sided 95 % interval.
const z975 = 1.959963984540054

// familyScale widens 95 % half-widths into simultaneous ones over m intervals: the ratio of
// the normal quantile at 1 − 0.025/m to the one at 0.975 (1 for m ≤ 1; 1.43 for m = 10).
func familyScale(m int) float64 {
	if m <= 1 {
		return 1
	}
	return math.Sqrt2 * math.Erfinv(1-0.05/float64(m)) / z975
}

// changeInterval is the interval of c − b from both sides' 95 % intervals: the change
// ± scale × √(hb² + hc²). With scale 1 it is the 95 % interval, exact for independent, normal
// estimates with symmetric intervals of the same confidence (the half-widths are z × standard
// error, and variances add); scale widens it to a simultaneous interval over m rows.
func changeInterval(b, c float64, bi, ci schema.Interval, scale float64, m int) schema.Interval {
	d, h := c-b, scale*math.Hypot(bi.HalfWidth(), ci.HalfWidth())
	method := MethodQuadrature
	if m > 1 {
		method += fmt.Sprintf(", simultaneous 95 %% over %d rows (Bonferroni)", m)
	}
	return schema.Interval{Lo: d - h, Hi: d + h, Method: method, N: min(bi.N, ci.N)}
}

// judgeNoise refines a row compare judged on tolerance alone: with an interval on both sides
// the row keeps RED only when its whole change interval (widened by scale, judgeAll) lies
// beyond the tolerance in the
// regression direction; a RED whose interval reaches back inside becomes WithinNoise. Without
// both intervals a RED says it rests on the tolerance alone — unless both points carry
// intervals of other metrics (aware): then this metric had too few requests for one, the
// breach cannot be told from noise, and it is WithinNoise too.
func judgeNoise(row *schema.DiffRow, b, c float64, bi, ci *schema.Interval, scale float64, m int, aware bool) {
	if bi == nil || ci == nil {
		switch {
		case row.Verdict == Red && aware:
			row.Verdict, row.Note = WithinNoise, NoteTooFew
		case row.Verdict == Red:
			row.Note = NoteNoInterval
		}
		return
	}
	ch := changeInterval(b, c, *bi, *ci, scale, m)
	row.Change = &ch
	lo, hi := ch.Lo, ch.Hi
	if row.Unit == UnitPercent {
		if b == 0 {
			if row.Verdict == Red {
				row.Note = noteZeroBase
			}
			return
		}
		lo, hi = 100*ch.Lo/b, 100*ch.Hi/b
		if b < 0 {
			lo, hi = hi, lo
		}
		row.ChangePct = &schema.Interval{Lo: lo, Hi: hi, Method: ch.Method, N: ch.N}
	}
	if row.Verdict != Red {
		return
	}
	t := row.Tolerance + 1e-9*math.Max(1, row.Tolerance)
	beyond := hi < -t
	if row.Direction == HigherIsWorse {
		beyond = lo > t
	}
	if beyond {
		row.Note = "beyond noise: change " + span(lo, hi, row.Unit)
		return
	}
	row.Verdict = WithinNoise
	row.Note = fmt.Sprintf("within noise: ±%s", magnitude((hi-lo)/2, row.Unit))
}

// span prints a change interval in the row's unit: [+1.2, +3.4]%.
func span(lo, hi float64, unit string) string {
	switch unit {
	case UnitPercent:
		return fmt.Sprintf("[%+.2f, %+.2f]%%", lo, hi)
	case UnitPoints:
		return fmt.Sprintf("[%+.2f, %+.2f] pts", lo, hi)
	}
	return "[" + signed(lo) + ", " + signed(hi) + "]"
}

// magnitude prints a half-width in the row's unit.
func magnitude(v float64, unit string) string {
	switch unit {
	case UnitPercent:
		return fmt.Sprintf("%.2f%%", v)
	case UnitPoints:
		return format(v) + " pts"
	}
	return format(v)
}

// intervalCoverage counts the compared rows that could have carried an interval and, of them,
// those judged on tolerance alone for want of one, with the side that lacked it.
type intervalCoverage struct{ possible, tolOnly, noBase, noCur int }

func (ic *intervalCoverage) add(bi, ci *schema.Interval) {
	ic.possible++
	if bi == nil || ci == nil {
		ic.tolOnly++
	}
	if bi == nil {
		ic.noBase++
	}
	if ci == nil {
		ic.noCur++
	}
}

func (ic *intervalCoverage) note() string {
	if ic.tolOnly == 0 {
		return ""
	}
	return fmt.Sprintf("%d of %d per-concurrency rows judged on tolerance only: no 95 %% interval in the baseline for %d, in the current run for %d (a point has one only with enough requests — 200 for a p50, 2,000 for a p95 — and a snapshot recorded before perfdag kept intervals has none)",
		ic.tolOnly, ic.possible, ic.noBase, ic.noCur)
}
