package baseline

import (
	"fmt"
	"slices"

	"github.com/perfdag/perfdag/schema"
)

// KneeMetric names the diff row of a searched cell's knee.
const KneeMetric = "slo_knee_concurrency"

// probedOnlyByBase reports whether concurrency c is missing from the current run only because
// its search, unlike the baseline's, did not need it: two searches of one cell probe different
// points when the answer moved, and that is not a point that failed to run.
func probedOnlyByBase(base, cur *schema.PerfBench, l schema.Load) bool {
	if base.Search == nil || cur.Search == nil {
		return false
	}
	if l.IsRate() {
		return slices.Contains(base.Search.ProbeLoads, l.Key())
	}
	return slices.Contains(base.Search.Probes, l.Concurrency)
}

// kneeRow compares two searches' knees as bands (a knee whose probes were all decided is a band
// of width zero): RED only when the current band lies wholly below the baseline's by more than
// the tolerance and by more than one step (bisection finds the exact knee, but one step on a
// real server is noise), or when no concurrency meets the SLO any more. A knee that fell beyond
// the tolerance while the bands still overlap (or lie within it) is NOTE: the searches could
// not tell it from their uncertainty. Knees of different SLOs are not compared.
func kneeRow(d *schema.BaselineDiff, base, cur *schema.PerfBenchSearch, tol Tolerances) {
	switch {
	case base == nil && cur == nil:
		return
	case base == nil || cur == nil:
		d.Notes = append(d.Notes, "one run searched for its SLO knee and the other swept a list: knees not compared")
		return
	case base.SLO != cur.SLO:
		d.Notes = append(d.Notes, fmt.Sprintf("the SLO changed (%q, was %q): knees not compared", cur.SLO, base.SLO))
		return
	case base.Over != cur.Over:
		d.Notes = append(d.Notes, "one run searched over concurrency and the other over request rate: knees not compared")
		return
	case cur.Over == schema.SearchOverRate:
		kneeRateRow(d, base, cur, tol)
		return
	}
	b, c := float64(base.Knee), float64(cur.Knee)
	row := compare(KneeMetric, &b, &c, tol)
	bLo, bHi := base.Band()
	cLo, cHi := cur.Band()
	banded := bLo != bHi || cLo != cHi
	if banded {
		// the knee moved by at least cLo − bHi and at most cHi − bLo
		row.Change = &schema.Interval{Lo: float64(cLo - bHi), Hi: float64(cHi - bLo), Method: "knee bands"}
		if base.Knee > 0 {
			row.ChangePct = &schema.Interval{Lo: 100 * row.Change.Lo / b, Hi: 100 * row.Change.Hi / b, Method: "knee bands"}
		}
	}
	gap := bLo - cHi // how far the current band lies below the baseline's
	beyond := gap > 1 && bLo > 0 && 100*float64(gap)/float64(bLo) > row.Tolerance+1e-9*max(1, row.Tolerance)
	switch {
	case bLo > 0 && cLo == 0 && cHi == 0:
		row.Verdict, row.Note = Red, fmt.Sprintf("no concurrency from %d meets the SLO now", cur.From)
	case beyond:
		row.Verdict, row.Note = Red, fmt.Sprintf("knee fell from %s to %s under %s", bandOf(base), bandOf(cur), cur.SLO)
	case row.Verdict == Red && !banded && base.Knee-cur.Knee <= 1:
		row.Verdict, row.Note = Green, "within one step"
	case row.Verdict == Red:
		row.Verdict, row.Note = WithinNoise, fmt.Sprintf("knee fell from %s to %s, but the bands overlap or lie within the tolerance: not told from the searches' uncertainty", bandOf(base), bandOf(cur))
	}
	if cur.AtTop || base.AtTop {
		d.Notes = append(d.Notes, fmt.Sprintf("a search's upper bound met the SLO (knee at c%d or c%d is a lower bound)", base.Knee, cur.Knee))
	}
	d.Rows = append(d.Rows, row)
}

// bandOf writes a search's knee with its band: "c31", or "c31 (c30–c32)".
func bandOf(s *schema.PerfBenchSearch) string {
	end := func(c int) string {
		if c == 0 {
			return "none"
		}
		return fmt.Sprintf("c%d", c)
	}
	lo, hi := s.Band()
	if lo == hi {
		return end(s.Knee)
	}
	return fmt.Sprintf("%s (%s–%s)", end(s.Knee), end(lo), end(hi))
}

// KneeRateMetric names the diff row of a knee searched over request rate.
const KneeRateMetric = "slo_knee_rate"

// kneeRateRow is kneeRow for two searches over request rate: RED when the current band lies
// wholly below the baseline's by more than the tolerance and by more than one step of the grid
// (its resolution), or when no rate meets the SLO any more; NOTE when the knee fell beyond the
// tolerance but the bands overlap or lie within it.
func kneeRateRow(d *schema.BaselineDiff, base, cur *schema.PerfBenchSearch, tol Tolerances) {
	b, c := base.KneeRate, cur.KneeRate
	row := compare(KneeRateMetric, &b, &c, tol)
	bLo, bHi := base.RateBand()
	cLo, cHi := cur.RateBand()
	banded := bLo != bHi || cLo != cHi
	if banded {
		row.Change = &schema.Interval{Lo: cLo - bHi, Hi: cHi - bLo, Method: "knee bands"}
		if b > 0 {
			row.ChangePct = &schema.Interval{Lo: 100 * row.Change.Lo / b, Hi: 100 * row.Change.Hi / b, Method: "knee bands"}
		}
	}
	step := max(base.ResolutionPct, cur.ResolutionPct)
	gapPct := 0.0
	if bLo > 0 {
		gapPct = 100 * (bLo - cHi) / bLo
	}
	beyond := bLo > 0 && gapPct > row.Tolerance+1e-9*max(1, row.Tolerance) && gapPct > step+1e-9
	switch {
	case bLo > 0 && cLo == 0 && cHi == 0:
		row.Verdict, row.Note = Red, fmt.Sprintf("no rate from %s/s meets the SLO now", schema.FormatRate(cur.FromRate))
	case beyond:
		row.Verdict, row.Note = Red, fmt.Sprintf("knee fell from %s to %s under %s", rateBandOf(base), rateBandOf(cur), cur.SLO)
	case row.Verdict == Red && !banded && 100*(b-c)/b <= step+1e-9:
		row.Verdict, row.Note = Green, "within one step of the grid"
	case row.Verdict == Red:
		row.Verdict, row.Note = WithinNoise, fmt.Sprintf("knee fell from %s to %s, but the bands overlap or lie within the tolerance: not told from the searches' uncertainty", rateBandOf(base), rateBandOf(cur))
	}
	if cur.AtTop || base.AtTop {
		d.Notes = append(d.Notes, fmt.Sprintf("a search's upper bound met the SLO (knee at %s or %s is a lower bound)", rateBandOf(base), rateBandOf(cur)))
	}
	d.Rows = append(d.Rows, row)
}

// rateBandOf writes a rate search's knee with its band: "r29.9", or "r29.9 (r28.4–r31.5)".
func rateBandOf(s *schema.PerfBenchSearch) string {
	end := func(r float64) string {
		if r == 0 {
			return "none"
		}
		return "r" + schema.FormatRate(r)
	}
	lo, hi := s.RateBand()
	if lo == hi {
		return end(s.KneeRate)
	}
	return fmt.Sprintf("%s (%s–%s)", end(s.KneeRate), end(lo), end(hi))
}
