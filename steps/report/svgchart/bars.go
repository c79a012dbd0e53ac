package svgchart

import (
	"html/template"
	"image/color"
	"math"
	"slices"
)

// BarGroup is one named bar series over the categories; NaN marks a category it has no value for.
type BarGroup struct {
	Name   string
	Color  color.Color
	Values []float64
}

// Bars is a grouped bar pane over nominal categories with reference lines and a legend.
type Bars struct {
	Title          string
	XLabel, YLabel string
	Categories     []string
	Groups         []BarGroup
	Refs           []RefLine
	YMax           float64 // fixed top of the Y axis when > 0
	Width, Height  int
}

// SVG renders the bars; a NaN value draws no bar and says "n/a" in its tooltip-less slot.
func (ch Bars) SVG() template.HTML {
	w, h := size(ch.Width, ch.Height)
	var items []legendItem
	for _, g := range ch.Groups {
		items = append(items, legendItem{name: g.Name, color: g.Color, marker: Square})
	}
	for _, r := range ch.Refs {
		items = append(items, legendItem{name: r.Name, color: r.Color, marker: None, line: true, dash: true})
	}
	rows := legendRows(items, float64(w)-20)
	f := frame{padLeft, float64(w) - padRight, padTop, float64(h) - padBottom - float64(len(rows))*legendRow}
	vals := []float64{0}
	for _, g := range ch.Groups {
		vals = append(vals, g.Values...)
	}
	for _, r := range ch.Refs {
		vals = append(vals, r.Y)
	}
	ya := Axis{Label: ch.YLabel}
	if ch.YMax > 0 {
		ya.Min, ya.Max = 0, ch.YMax
	}
	lo, hi := rangeOf(ya, vals)
	lo = math.Min(lo, 0)
	sy := scale{lo: lo, hi: hi, p0: f.y1, p1: f.y0}
	c := newCanvas("bars", ch.Title, w, h)
	c.axes(f, scale{lo: 0, hi: 1, p0: f.x0, p1: f.x1}, sy, nil, ticks(ya, lo, hi), ch.XLabel, ch.YLabel)
	n := max(len(ch.Categories), 1)
	slot := (f.x1 - f.x0) / float64(n)
	bw := slot * 0.8 / float64(max(len(ch.Groups), 1))
	for ci, cat := range ch.Categories {
		x0 := f.x0 + slot*float64(ci) + slot*0.1
		c.text(f.x0+slot*(float64(ci)+0.5), f.y1+13, "middle", "tick", cat)
		for gi, g := range ch.Groups {
			if ci >= len(g.Values) || !finite(g.Values[ci], false) {
				c.text(x0+bw*(float64(gi)+0.5), f.y1-3, "middle", "na", "n/a")
				continue
			}
			v := g.Values[ci]
			y0, y1 := sy.at(math.Max(v, 0)), sy.at(math.Min(v, 0))
			tip := g.Name + "\n" + cat + ": " + Exact(v)
			c.printf(`<g %s><title>%s</title><rect class="bar" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/></g>`,
				tipAttrs(tip, [2]string{"category", cat}, [2]string{"y", Exact(v)}), esc(tip), x0+bw*float64(gi), y0, math.Max(bw-1, 1), math.Max(y1-y0, 0.5), hex(g.Color))
		}
	}
	for _, r := range ch.Refs {
		if r.Y < lo || r.Y > hi {
			continue
		}
		y := sy.at(r.Y)
		c.printf(`<line class="ref" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-dasharray="5 3"/>`, f.x0, y, f.x1, y, hex(r.Color))
	}
	c.legend(rows, float64(h)-float64(len(rows))*legendRow-4)
	return c.done()
}

// Bin is one histogram bar: the values in [Lo, Hi) (the last bin includes Hi).
type Bin struct {
	Lo, Hi float64
	Count  int
}

// Bins splits values into n equal-width bins over their range (NaN and ±Inf left out); n ≤ 0
// picks ⌈√count⌉ clamped to [5, 40]. A single distinct value gives one bin holding all.
func Bins(values []float64, n int) []Bin {
	var vs []float64
	for _, v := range values {
		if finite(v, false) {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return nil
	}
	if n <= 0 {
		n = min(max(int(math.Ceil(math.Sqrt(float64(len(vs))))), 5), 40)
	}
	lo, hi := slices.Min(vs), slices.Max(vs)
	if hi == lo {
		return []Bin{{Lo: lo, Hi: hi, Count: len(vs)}}
	}
	width := (hi - lo) / float64(n)
	bins := make([]Bin, n)
	for i := range bins {
		bins[i] = Bin{Lo: lo + width*float64(i), Hi: lo + width*float64(i+1)}
	}
	bins[n-1].Hi = hi
	for _, v := range vs {
		i := min(int((v-lo)/width), n-1)
		bins[i].Count++
	}
	return bins
}

// Histogram is the distribution of Values (e.g. per-request TTFTs) in Bins bins.
type Histogram struct {
	Title, XLabel string
	Values        []float64
	Bins          int
	Color         color.Color
	Width, Height int
}

// SVG renders the histogram; each bar's tooltip gives its bin edges and count exactly.
func (ch Histogram) SVG() template.HTML {
	w, h := size(ch.Width, ch.Height)
	f := frame{padLeft, float64(w) - padRight, padTop, float64(h) - padBottom}
	bins := Bins(ch.Values, ch.Bins)
	c := newCanvas("histogram", ch.Title, w, h)
	xlo, xhi := 0.0, 1.0
	top := 1.0
	if len(bins) > 0 {
		xlo, xhi = bins[0].Lo, bins[len(bins)-1].Hi
		if xhi == xlo {
			xlo, xhi = xlo-0.5, xhi+0.5
		}
		for _, b := range bins {
			top = math.Max(top, float64(b.Count))
		}
	}
	xa, ya := Axis{Label: ch.XLabel}, Axis{Label: "count", Min: 0, Max: top * 1.08}
	sx := scale{lo: xlo, hi: xhi, p0: f.x0, p1: f.x1}
	sy := scale{lo: 0, hi: top * 1.08, p0: f.y1, p1: f.y0}
	c.axes(f, sx, sy, ticks(xa, xlo, xhi), ticks(ya, 0, top*1.08), ch.XLabel, "count")
	if len(bins) == 0 {
		c.text((f.x0+f.x1)/2, (f.y0+f.y1)/2, "middle", "empty", "no values")
	}
	for i, b := range bins {
		x0, x1 := sx.at(b.Lo), sx.at(b.Hi)
		if len(bins) == 1 {
			x0, x1 = sx.at(xlo+0.25), sx.at(xhi-0.25)
		}
		closeB := ")"
		if i == len(bins)-1 {
			closeB = "]"
		}
		tip := ch.XLabel + " [" + Exact(b.Lo) + ", " + Exact(b.Hi) + closeB + "\ncount: " + Exact(float64(b.Count))
		y := sy.at(float64(b.Count))
		c.printf(`<g %s><title>%s</title><rect class="bar" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/></g>`,
			tipAttrs(tip, [2]string{"lo", Exact(b.Lo)}, [2]string{"hi", Exact(b.Hi)}, [2]string{"y", Exact(float64(b.Count))}),
			esc(tip), x0, y, math.Max(x1-x0-1, 1), f.y1-y, hex(ch.Color))
	}
	return c.done()
}
