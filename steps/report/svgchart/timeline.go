package svgchart

import (
	"html/template"
	"image/color"
	"math"
)

// Span is one interval on a timeline (a request from send to last token); Mark, when not NaN,
// is an instant inside it drawn as a tick (its first token).
type Span struct {
	Start, End float64
	Mark       float64
	Label      string
	Color      color.Color
}

// Timeline draws spans one row each, in the order given (a point's requests over its window).
type Timeline struct {
	Title, XLabel string
	// MarkName names Mark in the tooltip ("TTFT at").
	MarkName      string
	Spans         []Span
	Width, Height int
}

// SVG renders the timeline; each span's tooltip gives its start, end, duration and mark exactly.
// Rows shrink to fit the height (down to one pixel), so thousands of requests still draw.
func (ch Timeline) SVG() template.HTML {
	w, h := size(ch.Width, ch.Height)
	f := frame{padLeft, float64(w) - padRight, padTop, float64(h) - padBottom}
	var xs []float64
	for _, s := range ch.Spans {
		if finite(s.Start, false) && finite(s.End, false) {
			xs = append(xs, s.Start, s.End)
		}
	}
	xa := Axis{Label: ch.XLabel}
	lo, hi := rangeOf(xa, xs)
	sx := scale{lo: lo, hi: hi, p0: f.x0, p1: f.x1}
	c := newCanvas("timeline", ch.Title, w, h)
	c.axes(f, sx, scale{lo: 0, hi: 1, p0: f.y1, p1: f.y0}, ticks(xa, lo, hi), nil, ch.XLabel, "")
	if len(xs) == 0 {
		c.text((f.x0+f.x1)/2, (f.y0+f.y1)/2, "middle", "empty", "no spans")
	}
	rowH := (f.y1 - f.y0) / float64(max(len(ch.Spans), 1))
	barH := math.Max(math.Min(rowH*0.8, 14), 1)
	for i, s := range ch.Spans {
		if !finite(s.Start, false) || !finite(s.End, false) {
			continue
		}
		y := f.y0 + rowH*float64(i) + (rowH-barH)/2
		x0, x1 := sx.at(s.Start), sx.at(math.Max(s.End, s.Start))
		tip := s.Label + "\nstart: " + Exact(s.Start) + "\nend: " + Exact(s.End) + "\nduration: " + Exact(s.End-s.Start)
		vals := [][2]string{{"start", Exact(s.Start)}, {"end", Exact(s.End)}}
		if finite(s.Mark, false) {
			name := ch.MarkName
			if name == "" {
				name = "mark"
			}
			tip += "\n" + name + ": " + Exact(s.Mark)
			vals = append(vals, [2]string{"mark", Exact(s.Mark)})
		}
		c.printf(`<g %s><title>%s</title><rect class="bar" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`,
			tipAttrs(tip, vals...), esc(tip), x0, y, math.Max(x1-x0, 1), barH, hex(s.Color))
		if finite(s.Mark, false) {
			m := sx.at(s.Mark)
			c.printf(`<line class="tl-mark" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#111"/>`, m, y, m, y+barH)
		}
		c.b.WriteString(`</g>`)
	}
	return c.done()
}
