// Package svgchart draws charts as inline SVG on the server: scatter/line panes, grouped bars,
// histograms, heatmaps and request timelines. Every mark carries its exact value (a <title> for the browser's
// native tooltip, data-* attributes, and data-tip for the small Script that shows it on hover),
// so a page needs no charting library, no network and no build step. All text is escaped.
package svgchart

import (
	"fmt"
	"html"
	"html/template"
	"image/color"
	"math"
	"strconv"
	"strings"
)

// Marker is a series' glyph shape (the report encodes the parallel strategy with it).
type Marker int

// Markers. None draws no glyph (reference curves such as roofline ceilings).
const (
	Circle Marker = iota
	Cross
	Square
	Triangle
	None
)

// Point is one datum; Label is drawn next to it (e.g. "c8"), Tip adds lines to its tooltip.
type Point struct {
	X, Y  float64
	Label string
	Tip   string
	// Lo and Hi, when both set, bound Y's interval: drawn as an error bar.
	Lo, Hi *float64
}

// Series is one named set of points drawn in one colour and marker.
type Series struct {
	Name   string
	Color  color.Color
	Marker Marker
	Hollow bool // outlined marker
	Line   bool // connect the points in the order given
	Dashed bool
	Points []Point
	// NoLegend keeps the series out of the legend (a second segment of a named curve).
	NoLegend bool
}

// Axis names an axis and chooses linear or log scale; Min/Max fix the range when Max > Min;
// Ticks, when set, are the only labelled ticks.
type Axis struct {
	Label    string
	Log      bool
	Min, Max float64
	Ticks    []float64
}

// RefLine is a named horizontal reference line (a target or a ceiling).
type RefLine struct {
	Name  string
	Y     float64
	Color color.Color
}

// XSpan is a named, shaded vertical band of an XY pane from X0 to X1.
type XSpan struct {
	Name   string
	X0, X1 float64
	Color  color.Color // drawn translucent
}

// XY is a scatter/line pane: series over two axes with optional reference lines and legend.
type XY struct {
	Title  string
	X, Y   Axis
	Series []Series
	Refs   []RefLine
	// Spans are shaded vertical bands from X0 to X1 (a range a value is known to lie in),
	// drawn under the series and named in the legend.
	Spans  []XSpan
	Legend bool
	// Width and Height are the drawing's size in CSS pixels (defaults 600x340); it scales down
	// to fit its container.
	Width, Height int
	// Empty is the text drawn instead of data when no series has a drawable point.
	Empty string
}

// Exact formats a value the way its tooltip and data attributes carry it: the shortest text
// that parses back to the same float64.
func Exact(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// esc escapes text for SVG/HTML text and quoted attribute values.
func esc(s string) string { return html.EscapeString(s) }

// hex writes a colour as #rrggbb (never caller text, so nothing can break out of an attribute).
func hex(c color.Color) string {
	if c == nil {
		return "#0072b2"
	}
	r, g, b, _ := c.RGBA()
	return fmt.Sprintf("#%02x%02x%02x", r>>8, g>>8, b>>8)
}

// canvas accumulates one SVG element.
type canvas struct {
	b      strings.Builder
	w, h   int
	labels [][4]float64 // boxes of the inline labels drawn so far (x, y, w, h)
}

// place reserves a label's box, or reports false when it would overlap one already drawn
// (colliding labels are skipped; the tooltip still names every point).
func (c *canvas) place(x, y, w, h float64) bool {
	for _, b := range c.labels {
		if x < b[0]+b[2] && b[0] < x+w && y < b[1]+b[3] && b[1] < y+h {
			return false
		}
	}
	c.labels = append(c.labels, [4]float64{x, y, w, h})
	return true
}

func newCanvas(kind, title string, w, h int) *canvas {
	c := &canvas{w: w, h: h}
	fmt.Fprintf(&c.b, `<svg xmlns="http://www.w3.org/2000/svg" class="svgchart %s" role="img" viewBox="0 0 %d %d" width="%d" height="%d" data-title="%s">`,
		kind, w, h, w, h, esc(title))
	fmt.Fprintf(&c.b, `<title>%s</title>`, esc(title))
	if title != "" {
		c.text(float64(w)/2, 16, "middle", "title", title)
	}
	return c
}

func (c *canvas) printf(format string, a ...any) { fmt.Fprintf(&c.b, format, a...) }

func (c *canvas) text(x, y float64, anchor, class, s string) {
	c.printf(`<text x="%.1f" y="%.1f" text-anchor="%s" class="%s">%s</text>`, x, y, anchor, class, esc(s))
}

func (c *canvas) done() template.HTML {
	c.b.WriteString(`</svg>`)
	return template.HTML(c.b.String()) // #nosec: every caller string went through esc
}

// tipAttrs are the attributes of a mark that shows tip on hover; vals are its exact values.
func tipAttrs(tip string, vals ...[2]string) string {
	var b strings.Builder
	b.WriteString(`class="pt" tabindex="0" data-tip="`)
	b.WriteString(esc(tip))
	b.WriteString(`"`)
	for _, kv := range vals {
		fmt.Fprintf(&b, ` data-%s="%s"`, kv[0], esc(kv[1]))
	}
	return b.String()
}

// finite reports whether v can be placed on an axis (positive when the axis is log-scaled).
func finite(v float64, log bool) bool {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return false
	}
	return !log || v > 0
}
