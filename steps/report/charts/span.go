package charts

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Span is a named, shaded vertical band of the pane from X0 to X1.
type Span struct {
	Name   string
	X0, X1 float64
	Color  color.Color // drawn translucent
}

// spanAlpha is how opaque a span's shade is: the grid and the series stay legible through it.
const spanAlpha = 0x38

// translucent is c at the spans' opacity.
func translucent(c color.Color) color.Color {
	r, g, b, _ := c.RGBA()
	return color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: spanAlpha}
}

// spanSeries are spans as the legend names them: a thick translucent swatch.
func spanSeries(spans []Span) []Series {
	out := make([]Series, 0, len(spans))
	for _, s := range spans {
		out = append(out, Series{Name: s.Name, Color: translucent(s.Color), Marker: None, Line: true, Width: 7})
	}
	return out
}

// span shades X0..X1 over the data area's whole height.
type span struct{ Span }

// Plot implements plot.Plotter.
func (s span) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	x0, x1 := max(trX(s.X0), c.Min.X), min(trX(s.X1), c.Max.X)
	if x1 <= x0 {
		return
	}
	c.FillPolygon(translucent(s.Color), []vg.Point{{X: x0, Y: c.Min.Y}, {X: x1, Y: c.Min.Y}, {X: x1, Y: c.Max.Y}, {X: x0, Y: c.Max.Y}})
}

// DataRange implements plot.DataRanger so the span's ends are always inside the axis range.
func (s span) DataRange() (xmin, xmax, ymin, ymax float64) {
	return s.X0, s.X1, math.Inf(1), math.Inf(-1)
}
