package report

import (
	"html/template"

	"gonum.org/v1/plot/vg"

	"github.com/perfdag/perfdag/steps/report/charts"
	"github.com/perfdag/perfdag/steps/report/svgchart"
)

// mmLength is one millimetre as a gonum length (the PDF's figure sizes are in millimetres).
const mmLength = vg.Millimeter

// pxPerMM scales the PDF's figure sizes to the HTML page: the 190 mm text width becomes
// about 1060 CSS pixels, and every chart keeps the aspect ratio it has in the PDF.
const pxPerMM = 5.6

func px(mm float64) int { return int(mm*pxPerMM + 0.5) }

// svg draws a figure's spec as an interactive SVG; every text passes the secret redactor
// (svgchart escapes it).
func (d *htmlDoc) svg(f *figure) template.HTML {
	switch {
	case f.chart != nil:
		ch := f.chart
		return svgchart.XY{
			Title:  d.redact(ch.Title),
			X:      d.axis(ch.X),
			Y:      d.axis(ch.Y),
			Series: d.svgSeries(ch.Series),
			Refs:   d.svgRefs(ch.Refs),
			Spans:  d.svgSpans(ch.Spans),
			Legend: ch.Legend,
			Width:  px(float64(ch.Width / mmLength)), Height: px(float64(ch.Height / mmLength)),
			Empty: d.redact(ch.Empty),
		}.SVG()
	case f.bars != nil:
		bc := f.bars
		out := svgchart.Bars{
			Title: d.redact(bc.Title), XLabel: d.redact(bc.XLabel), YLabel: d.redact(bc.YLabel),
			YMax:  bc.YMax,
			Width: px(float64(bc.Width / mmLength)), Height: px(float64(bc.Height / mmLength)),
		}
		for _, c := range bc.Categories {
			out.Categories = append(out.Categories, d.redact(c))
		}
		for _, g := range bc.Groups {
			out.Groups = append(out.Groups, svgchart.BarGroup{Name: d.redact(g.Name), Color: g.Color, Values: g.Values})
		}
		out.Refs = d.svgRefs(bc.Refs)
		return out.SVG()
	}
	return ""
}

func (d *htmlDoc) svgRefs(in []charts.RefLine) []svgchart.RefLine {
	var out []svgchart.RefLine
	for _, r := range in {
		out = append(out, svgchart.RefLine{Name: d.redact(r.Name), Y: r.Y, Color: r.Color})
	}
	return out
}

func (d *htmlDoc) svgSpans(in []charts.Span) []svgchart.XSpan {
	var out []svgchart.XSpan
	for _, s := range in {
		out = append(out, svgchart.XSpan{Name: d.redact(s.Name), X0: s.X0, X1: s.X1, Color: s.Color})
	}
	return out
}

func (d *htmlDoc) axis(a charts.Axis) svgchart.Axis {
	return svgchart.Axis{Label: d.redact(a.Label), Log: a.Log, Min: a.Min, Max: a.Max, Ticks: a.Ticks}
}

// svgSeries converts series (markers share their order: circle, cross, square, triangle, none).
func (d *htmlDoc) svgSeries(in []charts.Series) []svgchart.Series {
	out := make([]svgchart.Series, 0, len(in))
	for _, s := range in {
		pts := make([]svgchart.Point, len(s.Points))
		for i, p := range s.Points {
			pts[i] = svgchart.Point{X: p.X, Y: p.Y, Label: d.redact(p.Label), Tip: d.redact(p.Tip), Lo: p.Lo, Hi: p.Hi}
		}
		out = append(out, svgchart.Series{Name: d.redact(s.Name), Color: s.Color, Marker: svgchart.Marker(s.Marker),
			Hollow: s.Hollow, Line: s.Line, Dashed: s.Dashed, NoLegend: s.NoLegend, Points: pts})
	}
	return out
}
