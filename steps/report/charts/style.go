// Package charts draws the report's charts (scatter panes, roofline panels, bar panels and
// legend strips) with gonum/plot onto an in-memory PNG canvas, so the PDF writer can embed them.
package charts

import (
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Marker is a series' glyph shape; the report encodes the parallel strategy with it.
type Marker int

// Markers. None draws no glyph (reference curves such as roofline ceilings).
const (
	Circle Marker = iota
	Cross
	Square
	Triangle
	None
)

// palette holds distinguishable colours (Okabe–Ito order, then Tableau extras) for series keys.
var palette = []color.RGBA{
	{0x00, 0x72, 0xB2, 0xFF}, // blue
	{0xD5, 0x5E, 0x00, 0xFF}, // vermillion
	{0x00, 0x9E, 0x73, 0xFF}, // bluish green
	{0xCC, 0x79, 0xA7, 0xFF}, // reddish purple
	{0xE6, 0x9F, 0x00, 0xFF}, // orange
	{0x56, 0xB4, 0xE9, 0xFF}, // sky blue
	{0x8C, 0x56, 0x4B, 0xFF}, // brown
	{0x33, 0x33, 0x33, 0xFF}, // near black
	{0xBC, 0xBD, 0x22, 0xFF}, // olive
	{0x7F, 0x3C, 0x8D, 0xFF}, // purple
}

// Color returns the i-th palette colour, cycling when i exceeds the palette.
func Color(i int) color.RGBA {
	if i < 0 {
		i = -i
	}
	return palette[i%len(palette)]
}

// glyph returns the drawer for a marker; hollow markers are outlined instead of filled.
func glyph(m Marker, hollow bool) draw.GlyphDrawer {
	switch m {
	case None:
		return nil
	case Cross:
		return xGlyph{hollow: hollow}
	case Square:
		if hollow {
			return draw.SquareGlyph{}
		}
		return draw.BoxGlyph{}
	case Triangle:
		if hollow {
			return draw.TriangleGlyph{}
		}
		return draw.PyramidGlyph{}
	}
	if hollow {
		return ringGlyph{}
	}
	return draw.CircleGlyph{}
}

// ringGlyph is a circle outline with a visible stroke (gonum's RingGlyph is 0.5 pt, too faint at 150 dpi).
type ringGlyph struct{}

// DrawGlyph implements draw.GlyphDrawer.
func (ringGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: vg.Points(0.9)})
	var p vg.Path
	p.Move(vg.Point{X: pt.X + sty.Radius, Y: pt.Y})
	p.Arc(pt, sty.Radius, 0, 2*math.Pi)
	p.Close()
	c.Stroke(p)
}

// xGlyph is an X made of two bars; filled, or outlined when hollow (an MTP variant of a TP series).
type xGlyph struct{ hollow bool }

// DrawGlyph implements draw.GlyphDrawer.
func (g xGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	r := sty.Radius * 1.15
	w := sty.Radius * 0.32
	// A plus sign with arm half-width w and arm length r, rotated by 45°.
	plus := [][2]vg.Length{
		{r, w}, {r, -w}, {w, -w}, {w, -r}, {-w, -r}, {-w, -w},
		{-r, -w}, {-r, w}, {-w, w}, {-w, r}, {w, r}, {w, w},
	}
	var p vg.Path
	for i, v := range plus {
		q := vg.Point{X: pt.X + (v[0]-v[1])*math.Sqrt2/2, Y: pt.Y + (v[0]+v[1])*math.Sqrt2/2}
		if i == 0 {
			p.Move(q)
		} else {
			p.Line(q)
		}
	}
	p.Close()
	if g.hollow {
		c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: vg.Points(0.7)})
		c.Stroke(p)
		return
	}
	c.Fill(p)
}

// textStyle returns a plain text style in the default plot font.
func textStyle(size vg.Length, clr color.Color) text.Style {
	return text.Style{
		Color:   clr,
		Font:    font.From(sansFont, size),
		XAlign:  draw.XLeft,
		YAlign:  draw.YBottom,
		Handler: plot.DefaultTextHandler,
	}
}

// sansFont is Liberation Sans: plots default to the serif face, which reads poorly at 6 pt.
var sansFont = font.Font{Typeface: "Liberation", Variant: "Sans"}

// newPlot returns a plot whose every text uses the sans face.
func newPlot() *plot.Plot {
	p := plot.New()
	for _, f := range []*font.Font{&p.Title.TextStyle.Font, &p.X.Label.TextStyle.Font, &p.Y.Label.TextStyle.Font,
		&p.X.Tick.Label.Font, &p.Y.Tick.Label.Font, &p.Legend.TextStyle.Font} {
		f.Typeface, f.Variant = sansFont.Typeface, sansFont.Variant
	}
	return p
}
