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

// kneeRow compares two searches' knees: RED when the knee fell beyond the tolerance and by more
// than one step (bisection finds the exact knee, but one step on a real server is noise), or when
// no concurrency meets the SLO any more. Knees of different SLOs are not compared.
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
	switch {
	case base.Knee > 0 && cur.Knee == 0:
		row.Verdict, row.Note = Red, fmt.Sprintf("no concurrency from %d meets the SLO now", cur.From)
	case row.Verdict == Red && base.Knee-cur.Knee <= 1:
		row.Verdict, row.Note = Green, "within one step"
	case row.Verdict == Red:
		row.Note = fmt.Sprintf("knee fell from c%d to c%d under %s", base.Knee, cur.Knee, cur.SLO)
	}
	if cur.AtTop || base.AtTop {
		d.Notes = append(d.Notes, fmt.Sprintf("a search's upper bound met the SLO (knee at c%d or c%d is a lower bound)", base.Knee, cur.Knee))
	}
	d.Rows = append(d.Rows, row)
}
