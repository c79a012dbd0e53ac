package svgchart

import (
	"fmt"
	"html/template"
	"image/color"
	"math"
	"strings"
)

// Trend is a metric over a campaign's runs, oldest first: each run's value with its interval as
// an error bar and its marker coloured by the run's verdict, the value the baseline held for
// each run as a dashed reference, and change points as vertical seams. Every mark may link to a
// page (Href: a server path, nothing else is linked).
type Trend struct {
	Title, YLabel string
	// Runs label the x axis, one per run in order (a point's X indexes them).
	Runs     []string
	Points   []TrendPoint
	Baseline []TrendRef
	Marks    []TrendMark
	Color    color.Color // the line joining the points
	// Width and Height are the drawing's size (defaults 600x260).
	Width, Height int
	// Empty is the text drawn when no point can be placed.
	Empty string
}

// TrendPoint is one run's value: X indexes Trend.Runs; Lo and Hi bound its interval when known.
type TrendPoint struct {
	X         int
	Y         float64
	Lo, Hi    *float64
	Color     color.Color // the marker's fill (the run's verdict)
	Highlight bool        // drawn larger, ringed: the run a page is about
	Href      string
	Tip       string
	// Data are data-* attributes the mark carries (name without "data-", value), read back by
	// a test or a script.
	Data [][2]string
}

// TrendRef is the reference value (the baseline's) at run X.
type TrendRef struct {
	X    int
	Y    float64
	Href string
	Tip  string
}

// TrendMark is a change point: the new level starts at run X. Worse draws it as a regression.
type TrendMark struct {
	X     int
	Worse bool
	Href  string
	Tip   string
	Data  [][2]string
}

// Colours of a trend's change points and baseline.
var (
	trendWorse    = color.RGBA{0xC0, 0x1C, 0x28, 0xff}
	trendBetter   = color.RGBA{0x00, 0x9E, 0x73, 0xff}
	trendBaseline = color.RGBA{0x55, 0x55, 0x55, 0xff}
)

// link opens an <a> around a mark when href is a path on the same server.
func (c *canvas) link(href string) bool {
	if !strings.HasPrefix(href, "/") || strings.HasPrefix(href, "//") || strings.HasPrefix(href, "/\\") {
		return false
	}
	c.printf(`<a href="%s">`, esc(href))
	return true
}

// SVG renders the trend.
func (ch Trend) SVG() template.HTML {
	w, h := ch.Width, ch.Height
	if w <= 0 {
		w = 600
	}
	if h <= 0 {
		h = 260
	}
	f := frame{padLeft, float64(w) - padRight, padTop, float64(h) - padBottom - legendRow}
	var ys []float64
	for _, p := range ch.Points {
		if finite(p.Y, false) {
			ys = append(ys, p.Y)
			for _, b := range []*float64{p.Lo, p.Hi} {
				if b != nil && finite(*b, false) {
					ys = append(ys, *b)
				}
			}
		}
	}
	drawable := len(ys)
	for _, r := range ch.Baseline {
		ys = append(ys, r.Y)
	}
	n := max(len(ch.Runs), 1)
	ylo, yhi := rangeOf(Axis{}, ys)
	sx := scale{lo: -0.5, hi: float64(n) - 0.5, p0: f.x0, p1: f.x1}
	sy := scale{lo: ylo, hi: yhi, p0: f.y1, p1: f.y0}
	c := newCanvas("trend", ch.Title, w, h)
	c.axes(f, sx, sy, nil, ticks(Axis{}, ylo, yhi), "run (start, UTC)", ch.YLabel)
	step := max(1, int(math.Ceil(float64(len(ch.Runs))/6)))
	for i := len(ch.Runs) - 1; i >= 0; i -= step { // the newest run is always labelled
		c.text(sx.at(float64(i)), f.y1+13, "middle", "tick", ch.Runs[i])
	}
	if drawable == 0 {
		c.text((f.x0+f.x1)/2, (f.y0+f.y1)/2, "middle", "empty", ch.Empty)
	}
	for _, m := range ch.Marks {
		x := sx.at(float64(m.X) - 0.5)
		col := hex(trendBetter)
		if m.Worse {
			col = hex(trendWorse)
		}
		linked := c.link(m.Href)
		vals := append([][2]string{{"x", fmt.Sprint(m.X)}}, m.Data...)
		c.printf(`<g %s data-kind="change"><title>%s</title>`, tipAttrs(m.Tip, vals...), esc(m.Tip))
		c.printf(`<line class="cp" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="1.6" stroke-dasharray="6 3"/>`, x, f.y0, x, f.y1, col)
		c.printf(`<rect class="hit" x="%.1f" y="%.1f" width="8" height="%.1f"/>`, x-4, f.y0, f.y1-f.y0)
		c.printf(`<path class="mk" d="M%.1f %.1fl5 -8h-10z" fill="%s"/>`, x, f.y0+9, col)
		c.b.WriteString(`</g>`)
		if linked {
			c.b.WriteString(`</a>`)
		}
	}
	for _, r := range ch.Baseline {
		if !finite(r.Y, false) {
			continue
		}
		y := sy.at(r.Y)
		linked := c.link(r.Href)
		c.printf(`<g %s data-kind="baseline"><title>%s</title>`, tipAttrs(r.Tip, [2]string{"x", fmt.Sprint(r.X)}, [2]string{"baseline", Exact(r.Y)}), esc(r.Tip))
		c.printf(`<line class="baseline" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="1.4" stroke-dasharray="5 3"/>`,
			sx.at(float64(r.X)-0.5), y, sx.at(float64(r.X)+0.5), y, hex(trendBaseline))
		c.printf(`<rect class="hit" x="%.1f" y="%.1f" width="%.1f" height="6"/>`, sx.at(float64(r.X)-0.5), y-3, sx.at(float64(r.X)+0.5)-sx.at(float64(r.X)-0.5))
		c.b.WriteString(`</g>`)
		if linked {
			c.b.WriteString(`</a>`)
		}
	}
	var line []string
	for _, p := range ch.Points {
		if finite(p.Y, false) {
			line = append(line, fmt.Sprintf("%.1f,%.1f", sx.at(float64(p.X)), sy.at(p.Y)))
		}
	}
	if len(line) > 1 {
		c.printf(`<polyline class="line" points="%s" stroke="%s"/>`, strings.Join(line, " "), hex(ch.Color))
	}
	for _, p := range ch.Points {
		if !finite(p.Y, false) {
			continue
		}
		x, y := sx.at(float64(p.X)), sy.at(p.Y)
		linked := c.link(p.Href)
		vals := [][2]string{{"x", fmt.Sprint(p.X)}, {"value", Exact(p.Y)}}
		if p.Lo != nil && p.Hi != nil {
			vals = append(vals, [2]string{"lo", Exact(*p.Lo)}, [2]string{"hi", Exact(*p.Hi)})
		}
		vals = append(vals, p.Data...)
		c.printf(`<g %s data-kind="run"><title>%s</title>`, tipAttrs(p.Tip, vals...), esc(p.Tip))
		if p.Lo != nil && p.Hi != nil && finite(*p.Lo, false) && finite(*p.Hi, false) {
			y0, y1 := sy.at(*p.Lo), sy.at(*p.Hi)
			c.printf(`<path class="err" d="M%.1f %.1fV%.1fM%.1f %.1fh8M%.1f %.1fh8" stroke="%s" stroke-width="1.2" fill="none"/>`,
				x, y0, y1, x-4, y0, x-4, y1, hex(ch.Color))
		}
		if p.Highlight {
			c.printf(`<circle class="now" cx="%.1f" cy="%.1f" r="8" fill="none" stroke="#1f3a5f" stroke-width="2"/>`, x, y)
		}
		c.printf(`<circle class="hit" cx="%.1f" cy="%.1f" r="8"/>`, x, y)
		c.printf(`<circle class="mk" cx="%.1f" cy="%.1f" r="4.5" fill="%s" stroke="#333"/>`, x, y, hex(p.Color))
		c.b.WriteString(`</g>`)
		if linked {
			c.b.WriteString(`</a>`)
		}
	}
	items := []legendItem{{name: "baseline", color: trendBaseline, marker: None, line: true, dash: true},
		{name: "change point (regression)", color: trendWorse, marker: None, line: true, dash: true},
		{name: "change point (improvement)", color: trendBetter, marker: None, line: true, dash: true}}
	c.legend(legendRows(items, float64(w)-20), float64(h)-legendRow-4)
	return c.done()
}
