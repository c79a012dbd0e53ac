package report

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/johnfercher/maroto/v2/pkg/consts/align"
	"github.com/johnfercher/maroto/v2/pkg/consts/fontstyle"
	"gonum.org/v1/plot/vg"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/report/charts"
)

const specChartH = 70.0

// specPoint is one point's speculative-decoding acceptance.
type specPoint struct {
	load   schema.Load
	al, ar *float64
}

// specCell is one cell's acceptance across its points.
type specCell struct {
	cell    string
	variant *variant // nil when the cell has no atlas rows
	points  []specPoint
}

// specCells gathers acceptance per cell and point from the atlas, filling points the atlas
// lacks from the spec_metrics windows; cells without any drafts are left out.
func specCells(in Input, v *view) []specCell {
	by := map[string]map[schema.Load]*specPoint{}
	vars := map[string]*variant{}
	put := func(cell string, l schema.Load, al, ar *float64) {
		if al == nil && ar == nil {
			return
		}
		if by[cell] == nil {
			by[cell] = map[schema.Load]*specPoint{}
		}
		if by[cell][l] == nil {
			by[cell][l] = &specPoint{load: l, al: al, ar: ar}
		}
	}
	for i := range v.rows {
		r := &v.rows[i]
		put(r.CellID, r.PointLoad(), r.AcceptanceLength, r.SpecAcceptRate)
		if vars[r.CellID] == nil {
			vars[r.CellID] = v.variantOf(r)
		}
	}
	for _, w := range in.Spec {
		put(w.Cell, schema.LoadOf(w.Load, w.Concurrency, 0), w.AcceptanceLength, w.SpecAcceptRate)
	}
	var out []specCell
	for cell, pts := range by {
		sc := specCell{cell: cell, variant: vars[cell]}
		for _, p := range pts {
			sc.points = append(sc.points, *p)
		}
		slices.SortFunc(sc.points, func(a, b specPoint) int { return a.load.Compare(b.load) })
		out = append(out, sc)
	}
	slices.SortFunc(out, func(a, b specCell) int {
		switch {
		case a.variant != nil && b.variant != nil && a.variant != b.variant:
			return compareVariant(a.variant.key, b.variant.key)
		case (a.variant == nil) != (b.variant == nil):
			return cmp.Compare(boolInt(a.variant == nil), boolInt(b.variant == nil))
		}
		return cmp.Compare(a.cell, b.cell)
	})
	return out
}

func specCharts(v *view, art *artwork) []job {
	cells := specCells(v.in, v)
	if len(cells) == 0 {
		return nil
	}
	var kinds []bool // concurrency points, then rate points: one chart each, never one axis
	for _, rate := range []bool{false, true} {
		if slices.ContainsFunc(cells, func(sc specCell) bool {
			return slices.ContainsFunc(sc.points, func(p specPoint) bool { return p.al != nil && p.load.IsRate() == rate })
		}) {
			kinds = append(kinds, rate)
		}
	}
	if len(kinds) == 0 {
		kinds = []bool{false} // the chart says nothing was measured
	}
	art.spec = make([]*figure, len(kinds))
	var jobs []job
	for k, rate := range kinds {
		jobs = append(jobs, func() error {
			f, err := art.chartFig(specChart(cells, rate))
			if err != nil {
				return fmt.Errorf("spec chart: %w", err)
			}
			art.mu.Lock()
			art.spec[k] = f
			art.mu.Unlock()
			return nil
		})
	}
	return jobs
}

// specChart draws acceptance length against the concurrency points of the cells, or against
// their request-rate points.
func specChart(cells []specCell, rate bool) charts.Chart {
	var series []charts.Series
	var ticks []float64
	named := map[string]bool{}
	for i, sc := range cells {
		s := charts.Series{Name: sc.cell, Color: charts.Color(i), Marker: charts.Circle, Line: true, Width: 0.6}
		if sc.variant != nil {
			s.Name, s.Color, s.Marker, s.Hollow = sc.variant.label, sc.variant.color, sc.variant.marker, sc.variant.key.MTP
			s.NoLegend = named[s.Name]
			named[s.Name] = true
		}
		for _, p := range sc.points {
			if p.al != nil && p.load.IsRate() == rate {
				x := loadX(p.load)
				s.Points = append(s.Points, charts.Point{X: x, Y: *p.al, Tip: fmt.Sprintf("cell %s, %s", sc.cell, loadTip(p.load))})
				if !slices.Contains(ticks, x) {
					ticks = append(ticks, x)
				}
			}
		}
		series = append(series, s)
	}
	slices.Sort(ticks)
	title, axis := "Acceptance length vs concurrency (one line per cell)", charts.Axis{Label: "concurrency (requests in flight)", Log: true, Ticks: ticks}
	if rate {
		title, axis = "Acceptance length vs request rate (one line per cell)", charts.Axis{Label: loadAxisLabel(true), Log: true, Ticks: ticks}
	}
	return charts.Chart{
		Title: title, X: axis,
		Y:      charts.Axis{Label: "acceptance length (tokens per step)"},
		Series: series, Legend: true,
		Width: vg.Length(contentW) * vg.Millimeter, Height: vg.Length(specChartH) * vg.Millimeter, FontSize: 7,
		Empty: "no acceptance length measured",
	}
}

// specPage shows speculative-decoding acceptance where it was measured.
func specPage(d sink, v *view, art *artwork) {
	d.newPage(TitleSpec)
	cells := specCells(v.in, v)
	if len(cells) == 0 {
		d.missing("No speculative-decoding data in this campaign.")
		return
	}
	d.para("Acceptance length = 1 + accepted / drafts (tokens emitted per verification step); accept rate = accepted / draft tokens, from the server's spec-decode counters scraped before and after each point.",
		7.5, fontstyle.Normal, &colorMuted)
	for _, f := range art.spec {
		d.images(specChartH, f)
	}
	cols := []tcol{
		{head: "Cell", w: 12}, {head: "Variant", w: 10}, {head: "Points", w: 3, align: align.Right},
		{head: "Acceptance length (mean)", w: 5, align: align.Right}, {head: "Acceptance length (min-max)", w: 5, align: align.Right},
		{head: "Accept rate (mean)", w: 5, align: align.Right},
	}
	var rows [][]tcell
	for _, sc := range cells {
		var als, ars []*float64
		var vals []float64
		for _, p := range sc.points {
			als, ars = append(als, p.al), append(ars, p.ar)
			if p.al != nil {
				vals = append(vals, *p.al)
			}
		}
		label := "-"
		if sc.variant != nil {
			label = sc.variant.label
		}
		rng := "n/a"
		if len(vals) > 0 {
			rng = fnum(slices.Min(vals)) + " - " + fnum(slices.Max(vals))
		}
		rows = append(rows, []tcell{plain(sc.cell), plain(label), plain(fmt.Sprint(len(sc.points))),
			plain(num(mean(als))), plain(rng), plain(pct(mean(ars)))})
	}
	d.table(cols, nil, rows)
}
