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
func probedOnlyByBase(base, cur *schema.PerfBench, c int) bool {
	return base.Search != nil && cur.Search != nil && slices.Contains(base.Search.Probes, c)
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
