package svgchart

import (
	"fmt"
	"html/template"
	"strings"
)

// Plot margins in pixels around an XY or bar pane.
const (
	padLeft   = 62.0
	padRight  = 16.0
	padTop    = 28.0
	padBottom = 42.0
	legendRow = 17.0
)

// frame is a pane's plot area after the title, axis labels and legend are placed.
type frame struct {
	x0, x1, y0, y1 float64 // left, right, top, bottom
}

// SVG renders the pane. Points that cannot be placed (NaN, or ≤ 0 on a log axis) are left out;
// they are not an error.
func (ch XY) SVG() template.HTML {
	w, h := size(ch.Width, ch.Height)
	var items []legendItem
	if ch.Legend {
		for _, sp := range ch.Spans {
			items = append(items, legendItem{name: sp.Name, color: sp.Color, marker: None, span: true})
		}
		for _, s := range ch.Series {
			if s.NoLegend {
				continue
			}
			items = append(items, legendItem{s.Name, s.Color, s.Marker, s.Hollow, s.Line, s.Dashed, false})
		}
		for _, r := range ch.Refs {
			items = append(items, legendItem{name: r.Name, color: r.Color, marker: None, line: true, dash: true})
		}
	}
	rows := legendRows(items, float64(w)-20)
	f := frame{padLeft, float64(w) - padRight, padTop, float64(h) - padBottom - float64(len(rows))*legendRow}
	var xs, ys []float64
	drawable := 0
	for _, s := range ch.Series {
		for _, p := range s.Points {
			if finite(p.X, ch.X.Log) && finite(p.Y, ch.Y.Log) {
				xs, ys = append(xs, p.X), append(ys, p.Y)
				drawable++
				if lo, hi, ok := errBar(p, ch.Y.Log); ok {
					ys = append(ys, lo, hi)
				}
			}
		}
	}
	for _, r := range ch.Refs {
		ys = append(ys, r.Y)
	}
	for _, sp := range ch.Spans {
		xs = append(xs, sp.X0, sp.X1)
	}
	xlo, xhi := rangeOf(ch.X, xs)
	ylo, yhi := rangeOf(ch.Y, ys)
	sx := scale{lo: xlo, hi: xhi, log: ch.X.Log, p0: f.x0, p1: f.x1}
	sy := scale{lo: ylo, hi: yhi, log: ch.Y.Log, p0: f.y1, p1: f.y0}

	c := newCanvas("xy", ch.Title, w, h)
	c.axes(f, sx, sy, ticks(ch.X, xlo, xhi), ticks(ch.Y, ylo, yhi), ch.X.Label, ch.Y.Label)
	if drawable == 0 {
		c.text((f.x0+f.x1)/2, (f.y0+f.y1)/2, "middle", "empty", ch.Empty)
	}
	for _, sp := range ch.Spans {
		c.span(sp, f, sx, ch.X)
	}
	for _, r := range ch.Refs {
		if !finite(r.Y, ch.Y.Log) || r.Y < ylo || r.Y > yhi {
			continue
		}
		y := sy.at(r.Y)
		c.printf(`<line class="ref" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-dasharray="5 3"/>`, f.x0, y, f.x1, y, hex(r.Color))
		c.printf(`<g %s><title>%s</title><rect x="%.1f" y="%.1f" width="%.1f" height="6" fill="transparent"/></g>`,
			tipAttrs(r.Name+": "+Exact(r.Y), [2]string{"y", Exact(r.Y)}), esc(r.Name+": "+Exact(r.Y)), f.x0, y-3, f.x1-f.x0)
	}
	for si, s := range ch.Series {
		c.series(si, s, sx, sy, ch.X, ch.Y)
	}
	c.legend(rows, float64(h)-float64(len(rows))*legendRow-4)
	return c.done()
}

func size(w, h int) (int, int) {
	if w <= 0 {
		w = 600
	}
	if h <= 0 {
		h = 340
	}
	return w, h
}

// axes draws the grid, the frame, tick labels and axis labels.
func (c *canvas) axes(f frame, sx, sy scale, xt, yt []float64, xl, yl string) {
	c.printf(`<rect class="plot" x="%.1f" y="%.1f" width="%.1f" height="%.1f"/>`, f.x0, f.y0, f.x1-f.x0, f.y1-f.y0)
	xs, ys := tickLabels(xt), tickLabels(yt)
	for i, t := range xt {
		x := sx.at(t)
		c.printf(`<line class="grid" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>`, x, f.y0, x, f.y1)
		c.text(x, f.y1+13, "middle", "tick", xs[i])
	}
	for i, t := range yt {
		y := sy.at(t)
		c.printf(`<line class="grid" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>`, f.x0, y, f.x1, y)
		c.text(f.x0-5, y+3.5, "end", "tick", ys[i])
	}
	c.text((f.x0+f.x1)/2, f.y1+30, "middle", "axis", xl)
	if yl != "" {
		c.printf(`<text class="axis" text-anchor="middle" transform="translate(13 %.1f) rotate(-90)">%s</text>`, (f.y0+f.y1)/2, esc(yl))
	}
}

// series draws one series' line, then its marks with their tooltips and inline labels.
func (c *canvas) series(si int, s Series, sx, sy scale, xa, ya Axis) {
	col := hex(s.Color)
	if s.Line {
		var pts []string
		for _, p := range s.Points {
			if finite(p.X, xa.Log) && finite(p.Y, ya.Log) {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", sx.at(p.X), sy.at(p.Y)))
			}
		}
		dash := ""
		if s.Dashed {
			dash = ` stroke-dasharray="5 3"`
		}
		if len(pts) > 1 {
			c.printf(`<polyline class="line" points="%s" stroke="%s"%s/>`, strings.Join(pts, " "), col, dash)
		}
	}
	if s.Marker == None {
		return
	}
	for _, p := range s.Points {
		if !finite(p.X, xa.Log) || !finite(p.Y, ya.Log) {
			continue
		}
		x, y := sx.at(p.X), sy.at(p.Y)
		tip := []string{s.Name, xa.Label + ": " + Exact(p.X), ya.Label + ": " + Exact(p.Y)}
		if lo, hi, ok := errBar(p, ya.Log); ok {
			c.printf(`<path class="err" d="M%.1f %.1fV%.1fM%.1f %.1fh6M%.1f %.1fh6" stroke="%s" fill="none"/>`, x, sy.at(lo), sy.at(hi), x-3, sy.at(lo), x-3, sy.at(hi), col)
			tip = append(tip, "95 % interval: ["+Exact(lo)+", "+Exact(hi)+"]")
		}
		if p.Tip != "" {
			tip = append(tip, p.Tip)
		}
		t := strings.Join(tip, "\n")
		c.printf(`<g %s><title>%s</title>`, tipAttrs(t, [2]string{"series", fmt.Sprint(si)}, [2]string{"x", Exact(p.X)}, [2]string{"y", Exact(p.Y)}), esc(t))
		c.marker(s.Marker, x, y, col, s.Hollow)
		c.b.WriteString(`</g>`)
		if p.Label != "" && c.place(x+5, y-13, charW*0.85*float64(len([]rune(p.Label))), 10) {
			c.text(x+5, y-5, "start", "lbl", p.Label)
		}
	}
}

// marker draws a glyph centred on (x, y) with an invisible larger hit area for hovering.
func (c *canvas) marker(m Marker, x, y float64, col string, hollow bool) {
	c.printf(`<circle class="hit" cx="%.1f" cy="%.1f" r="7"/>`, x, y)
	c.glyph(m, x, y, col, hollow)
}

// glyph draws a marker's shape centred on (x, y) (also the legend's swatch).
func (c *canvas) glyph(m Marker, x, y float64, col string, hollow bool) {
	fill := col
	if hollow {
		fill = "#fff"
	}
	switch m {
	case Cross:
		c.printf(`<path class="mk" d="M%.1f %.1fl7 7m0 -7l-7 7" stroke="%s" stroke-width="2"/>`, x-3.5, y-3.5, col)
	case Square:
		c.printf(`<rect class="mk" x="%.1f" y="%.1f" width="7" height="7" fill="%s" stroke="%s"/>`, x-3.5, y-3.5, fill, col)
	case Triangle:
		c.printf(`<path class="mk" d="M%.1f %.1fl4 7h-8z" fill="%s" stroke="%s"/>`, x, y-4, fill, col)
	default:
		c.printf(`<circle class="mk" cx="%.1f" cy="%.1f" r="3.6" fill="%s" stroke="%s"/>`, x, y, fill, col)
	}
}

// spanOpacity is how opaque a span's shade is: the grid and the marks stay legible through it.
const spanOpacity = "0.22"

// span shades one band over the plot area's height, its name and ends as its tooltip.
func (c *canvas) span(sp XSpan, f frame, sx scale, xa Axis) {
	if !finite(sp.X0, xa.Log) || !finite(sp.X1, xa.Log) || sp.X1 <= sp.X0 {
		return
	}
	x0, x1 := max(sx.at(sp.X0), f.x0), min(sx.at(sp.X1), f.x1)
	if x1 <= x0 {
		return
	}
	tip := fmt.Sprintf("%s: %s to %s", sp.Name, Exact(sp.X0), Exact(sp.X1))
	c.printf(`<g %s><title>%s</title><rect class="span" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" fill-opacity="%s"/></g>`,
		tipAttrs(tip, [2]string{"x0", Exact(sp.X0)}, [2]string{"x1", Exact(sp.X1)}), esc(tip), x0, f.y0, x1-x0, f.y1-f.y0, hex(sp.Color), spanOpacity)
}

// errBar is a point's interval when it has one that can be drawn.
func errBar(p Point, log bool) (lo, hi float64, ok bool) {
	if p.Lo == nil || p.Hi == nil || !finite(*p.Lo, log) || !finite(*p.Hi, log) || *p.Hi < *p.Lo {
		return 0, 0, false
	}
	return *p.Lo, *p.Hi, true
}
