package report

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot/vg"

	"github.com/perfdag/perfdag/engine/gate"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/report/charts"
)

// sloProbe is one probe of a search as a clause panel draws it: the value the clause read and
// its 95 % interval when the point has one.
type sloProbe struct {
	at    schema.Load // the probe's point: a concurrency, or a request rate
	value float64
	iv    *schema.Interval
	holds bool // the clause held at this probe
	met   bool // the whole SLO held (what the search decided on)
	// undecided: the probe measured to its max without a verdict on the SLO
	undecided bool
}

// sloCell is one searched cell's probes under one clause.
type sloCell struct {
	cell     string
	series   int         // the search's index: its colour, as on the throughput chart
	rate     bool        // the search is over request rate: its panel's x axis is req/s
	knee     schema.Load // zero: no knee
	lo, hi   int         // the knee's band when probes were undecided (0, 0: exact); lo from `from` when it is "none"
	band     string
	miss     schema.Load // the probe whose miss bounds the knee from above (zero: none)
	probes   []sloProbe
	unstated []schema.Load // probes without a value of the clause's variable (a failed point)
}

// sloPanel is one clause of the searches' SLOs: the variable against load for every search
// whose SLO has the clause, with the threshold — against concurrency, or for searches over
// request rate a panel of their own against the rate (never both on one axis).
type sloPanel struct {
	clause gate.Threshold
	rate   bool
	cells  []sloCell
}

// firstMiss is the lowest probe decided to miss the SLO: the search's bracket top, so the knee
// is the highest pass below it (zero when no probe missed). A probe without a valid request is
// no evidence either way, not a miss; nor is an undecided one.
func firstMiss(s schema.SweepResult) schema.Load {
	var lo schema.Load
	for _, p := range s.Probes {
		if l := p.PointLoad(); !p.Met && !p.NoEvidence && p.Verdict != schema.VerdictUndecided && (lo.IsZero() || l.Compare(lo) < 0) {
			lo = l
		}
	}
	return lo
}

// sloPanels reads every search's SLO into its clauses and gives each clause that compares a
// point field with a number one panel (searches whose SLOs share the comparison, however
// written, share it), in the order the clauses first appear. notDrawn names the clauses that
// are not such a comparison.
func sloPanels(v *view) (panels []sloPanel, notDrawn []string) {
	at := map[string]int{}
	for i, s := range searches(v.in) {
		ts, rest, err := gate.Thresholds(s.SLO)
		if err != nil {
			notDrawn = append(notDrawn, fmt.Sprintf("%s: %q (%v)", s.Cell, s.SLO, err))
			continue
		}
		for _, r := range rest {
			notDrawn = append(notDrawn, s.Cell+": "+r)
		}
		for _, t := range ts {
			rate := isRateSearch(s)
			key := fmt.Sprintf("%s %s %v %v", t.Name, t.Op, t.Limit, rate)
			j, ok := at[key]
			if !ok {
				j = len(panels)
				at[key] = j
				panels = append(panels, sloPanel{clause: t, rate: rate})
			}
			panels[j].cells = append(panels[j].cells, sloCellOf(v, s, i, t))
		}
	}
	return panels, notDrawn
}

func sloCellOf(v *view, s schema.SweepResult, series int, t gate.Threshold) sloCell {
	c := sloCell{cell: s.Cell, series: series, rate: isRateSearch(s), knee: kneeLoad(s), miss: firstMiss(s)}
	if lo, hi := s.KneeBand(); s.KneeUnknown == "" && lo != hi && !c.rate {
		c.lo, c.hi, c.band = max(lo, s.From), hi, bandRange(&s)
	}
	for _, p := range s.Probes {
		val, ok := probeValue(frontierRow(v, s.Cell, p.PointLoad()), p, t.Name)
		if !ok || p.NoEvidence {
			c.unstated = append(c.unstated, p.PointLoad())
			continue
		}
		sp := sloProbe{at: p.PointLoad(), value: val, holds: t.Holds(val), met: p.Met, undecided: p.Verdict == schema.VerdictUndecided}
		if r := frontierRow(v, s.Cell, p.PointLoad()); r != nil {
			if iv, ok := r.Intervals[t.Name]; ok {
				sp.iv = &iv
			}
		}
		c.probes = append(c.probes, sp)
	}
	slices.SortFunc(c.probes, func(a, b sloProbe) int { return a.at.Compare(b.at) })
	return c
}

// probeValue is the value of a point field the SLO read at a probe: the atlas row's exact
// value, else (a field the atlas does not carry, or carries only when nonzero) the value the
// search recorded beside its verdict. A failed point has neither.
func probeValue(r *schema.AtlasRow, p schema.SweepProbe, name string) (float64, bool) {
	if r != nil && p.Status != schema.CellFailed {
		if f, ok := number(gate.Fields(r)[name]); ok {
			return f, true
		}
	}
	for _, part := range strings.Split(p.Values, ", ") {
		k, val, ok := strings.Cut(part, " = ")
		if !ok || k != name {
			continue
		}
		if f, err := strconv.ParseFloat(val, 64); err == nil {
			return f, true
		}
	}
	return 0, false
}

func number(x any) (float64, bool) {
	switch n := x.(type) {
	case float64:
		return n, true
	case int:
		return float64(n), true
	}
	return 0, false
}

// colorThreshold draws an SLO's limit (the roofline page's target red).
var colorThreshold = color.RGBA{0xB0, 0x1C, 0x1C, 0xFF}

// chart draws the panel: each cell's probes filled where the clause held and hollow where it
// did not, each with its 95 % interval as a bar, its knee as a vertical dashed line in its
// colour, the threshold as a dashed red line across.
func (p sloPanel) chart(w, h float64) charts.Chart {
	y := p.yAxis()
	var series []charts.Series
	var spans []charts.Span
	for _, c := range p.cells {
		col := charts.Color(c.series)
		if c.hi > c.lo {
			spans = append(spans, charts.Span{Name: c.cell + ": knee band " + c.band, X0: float64(c.lo), X1: float64(c.hi), Color: col})
		}
		meets := charts.Series{Name: c.cell + ": meets", Color: col, Marker: charts.Circle}
		misses := charts.Series{Name: c.cell + ": misses", Color: col, Marker: charts.Circle, Hollow: true}
		undecided := charts.Series{Name: c.cell + ": SLO undecided", Color: col, Marker: charts.Triangle, Hollow: true}
		for _, pr := range c.probes {
			x := loadX(pr.at)
			pt := charts.Point{X: x, Y: pr.value, Tip: fmt.Sprintf("cell %s, %s: %s", c.cell, loadTip(pr.at), verdictText(pr))}
			if pr.iv != nil {
				pt.Tip += fmt.Sprintf("; 95 %% interval %s to %s", strconv.FormatFloat(pr.iv.Lo, 'g', -1, 64), strconv.FormatFloat(pr.iv.Hi, 'g', -1, 64))
				series = append(series, charts.Series{Color: col, Marker: charts.None, Line: true, NoLegend: true,
					Points: []charts.Point{{X: x, Y: pr.iv.Lo}, {X: x, Y: pr.iv.Hi}}})
			}
			switch {
			case pr.undecided:
				undecided.Points = append(undecided.Points, pt)
			case pr.holds:
				meets.Points = append(meets.Points, pt)
			default:
				misses.Points = append(misses.Points, pt)
			}
		}
		series = append(series, meets, misses)
		if len(undecided.Points) > 0 {
			series = append(series, undecided)
		}
		if !c.knee.IsZero() {
			series = append(series, charts.Series{Name: fmt.Sprintf("%s: knee %s", c.cell, c.knee.Key()), Color: col, Marker: charts.None,
				Line: true, Dashed: true, Width: 0.7, Points: []charts.Point{{X: loadX(c.knee), Y: y.Min}, {X: loadX(c.knee), Y: y.Max}}})
		}
	}
	return charts.Chart{
		Title:  p.clause.Clause,
		X:      charts.Axis{Label: loadAxisLabel(p.rate)},
		Y:      y,
		Series: series, Spans: spans, Legend: true,
		Refs:  []charts.RefLine{{Name: "SLO limit " + p.clause.Op + " " + stated(p.clause.Limit), Y: p.clause.Limit, Color: colorThreshold}},
		Width: vg.Length(w) * vg.Millimeter, Height: vg.Length(h) * vg.Millimeter, FontSize: 7,
		Empty: "no probe has a value of " + p.clause.Name,
	}
}

// yAxis spans every value, interval and the limit with a margin, so the limit line never
// lies on the frame; a metric that is never negative does not get a negative axis.
func (p sloPanel) yAxis() charts.Axis {
	lo, hi := p.clause.Limit, p.clause.Limit
	label := p.clause.Name
	for _, c := range p.cells {
		for _, pr := range c.probes {
			lo, hi = min(lo, pr.value), max(hi, pr.value)
			if pr.iv != nil {
				lo, hi = min(lo, pr.iv.Lo), max(hi, pr.iv.Hi)
				label = p.clause.Name + " (bars: 95 % interval)"
			}
		}
	}
	pad := (hi - lo) * 0.08
	if pad == 0 {
		pad = max(math.Abs(hi)*0.1, 1)
	}
	bottom := lo - pad
	if lo >= 0 && bottom < 0 {
		bottom = 0
	}
	a := charts.Axis{Label: label}
	a.Min, a.Max, _ = charts.NiceRange(bottom, hi+pad)
	return a
}

func verdictText(p sloProbe) string {
	s := "meets this clause"
	if !p.holds {
		s = "misses this clause"
	}
	switch {
	case p.undecided:
		return s + "; the SLO undecided at the probe's max requests"
	case p.met:
		return s + "; meets the SLO"
	}
	return s + "; misses the SLO"
}

// kneeReasons says per search why its knee is where it is: which clauses the probe above the
// knee missed, with the values read there (or that every probe met the SLO, that the lower
// bound missed it, or why the knee is unknown).
func kneeReasons(v *view, panels []sloPanel) []string {
	var out []string
	for _, s := range searches(v.in) {
		miss, upper := firstMiss(s), upperBound(s)
		switch {
		case s.KneeUnknown != "":
			out = append(out, fmt.Sprintf("%s: knee unknown: %s", s.Cell, strings.TrimSuffix(s.KneeUnknown, ".")+"."))
			continue
		case miss.IsZero() && len(undecidedLoads(s)) > 0:
			out = append(out, fmt.Sprintf("%s: no probe up to %s is decided to miss the SLO (%s undecided): knee %s; it may lie beyond the search's upper bound.",
				s.Cell, upper, fmtLoads(undecidedLoads(s)), bandText(&s)))
			continue
		case miss.IsZero():
			out = append(out, fmt.Sprintf("%s: every probe up to %s meets the SLO; the knee may lie beyond the search's upper bound.", s.Cell, upper))
			continue
		}
		var why []string
		for _, p := range panels {
			for _, c := range p.cells {
				if c.cell != s.Cell {
					continue
				}
				for _, pr := range c.probes {
					if pr.at == miss && !pr.holds {
						why = append(why, fmt.Sprintf("%s (%s = %s)", p.clause.Clause, p.clause.Name, fnum(pr.value)))
					}
				}
			}
		}
		reason := "misses " + strings.Join(why, " and ")
		switch {
		case probeFailed(s, miss):
			reason = "failed (no valid request)"
		case len(why) == 0:
			reason = "misses the SLO on a clause not drawn"
		}
		knee := kneeLoad(s)
		if knee.IsZero() {
			out = append(out, fmt.Sprintf("%s: no knee: %s, the lower bound, %s.", s.Cell, miss, reason))
			continue
		}
		kt := "knee " + knee.Key()
		if lo, hi := s.KneeBand(); lo != hi {
			kt = fmt.Sprintf("knee %s", bandText(&s))
			if u := undecidedLoads(s); len(u) > 0 {
				reason += "; " + fmtLoads(u) + " undecided"
			}
		}
		out = append(out, fmt.Sprintf("%s: %s because %s %s.", s.Cell, kt, miss, reason))
	}
	return out
}

func probeFailed(s schema.SweepResult, l schema.Load) bool {
	for _, p := range s.Probes {
		if p.PointLoad() == l {
			return p.Status == schema.CellFailed
		}
	}
	return false
}
