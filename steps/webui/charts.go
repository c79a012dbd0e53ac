package webui

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"
)

// The charts are server-rendered SVG: no script library, nothing fetched, and every mark
// carries its exact value in data-tip (the page's script shows it as a tooltip on hover or
// focus; <title> shows it without script). Text goes through html/template's escaping
// (template.HTMLEscapeString here, since the SVG is assembled as a string).

// exact formats a value as the shortest decimal that reads back as the same float64: the
// tooltip shows what the file holds, not a rounded figure.
func exact(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

const (
	chartW, chartH = 640, 240
	padL, padB     = 56, 36
	padT, padR     = 12, 12
)

// svgChart accumulates one SVG chart.
type svgChart struct {
	b                     strings.Builder
	x0, x1, y0, y1        float64
	title, xLabel, yLabel string
	plotW, plotH, originY float64
	class                 string
}

func newChart(class, title, xLabel, yLabel string, x0, x1, y0, y1 float64) *svgChart {
	if x1 <= x0 {
		x1 = x0 + 1
	}
	if y1 <= y0 {
		y1 = y0 + 1
	}
	c := &svgChart{x0: x0, x1: x1, y0: y0, y1: y1, title: title, xLabel: xLabel, yLabel: yLabel, class: class,
		plotW: chartW - padL - padR, plotH: chartH - padT - padB}
	fmt.Fprintf(&c.b, `<svg class="chart %s" viewBox="0 0 %d %d" role="img" aria-label="%s">`, class, chartW, chartH, esc(title))
	c.axes()
	return c
}

func esc(s string) string { return template.HTMLEscapeString(s) }

func (c *svgChart) px(x float64) float64 { return padL + (x-c.x0)/(c.x1-c.x0)*c.plotW }
func (c *svgChart) py(y float64) float64 { return padT + c.plotH - (y-c.y0)/(c.y1-c.y0)*c.plotH }

// axes draws the frame, five ticks per axis and the labels.
func (c *svgChart) axes() {
	fmt.Fprintf(&c.b, `<rect class="frame" x="%d" y="%d" width="%.1f" height="%.1f"/>`, padL, padT, c.plotW, c.plotH)
	for i := 0; i <= 4; i++ {
		xv := c.x0 + float64(i)/4*(c.x1-c.x0)
		yv := c.y0 + float64(i)/4*(c.y1-c.y0)
		fmt.Fprintf(&c.b, `<text class="tick" x="%.1f" y="%d" text-anchor="middle">%s</text>`, c.px(xv), chartH-padB+14, esc(short(xv)))
		fmt.Fprintf(&c.b, `<text class="tick" x="%d" y="%.1f" text-anchor="end">%s</text>`, padL-4, c.py(yv)+4, esc(short(yv)))
	}
	fmt.Fprintf(&c.b, `<text class="label" x="%.1f" y="%d" text-anchor="middle">%s</text>`, padL+c.plotW/2, chartH-4, esc(c.xLabel))
	fmt.Fprintf(&c.b, `<text class="label" x="12" y="%.1f" transform="rotate(-90 12 %.1f)" text-anchor="middle">%s</text>`, padT+c.plotH/2, padT+c.plotH/2, esc(c.yLabel))
}

// mark writes one element with its tooltip: focusable, so a keyboard shows the value too.
func (c *svgChart) mark(shape, attrs, tip, cls string) {
	fmt.Fprintf(&c.b, `<%s class="mark %s" %s tabindex="0" data-tip="%s"><title>%s</title></%s>`, shape, cls, attrs, esc(tip), esc(tip), shape)
}

func (c *svgChart) html() template.HTML {
	return template.HTML(c.b.String() + "</svg>") // every text inside was escaped by esc
}

// short is a tick label: four significant digits.
func short(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

// histogram draws values in bins (Freedman–Diaconis width, 10 to 60 bins) with marker lines
// at the named reference values (a point.json's percentiles), each with its exact value.
func histogram(class, title, unit string, values []float64, refs []ref) template.HTML {
	if len(values) == 0 {
		return ""
	}
	lo, hi := values[0], values[0]
	for _, v := range values {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	for _, r := range refs {
		lo, hi = math.Min(lo, r.Value), math.Max(hi, r.Value)
	}
	bins := binCount(values, lo, hi)
	width := (hi - lo) / float64(bins)
	if width == 0 {
		width = 1
	}
	counts := make([]int, bins)
	for _, v := range values {
		i := min(int((v-lo)/width), bins-1)
		counts[i]++
	}
	top := 0
	for _, n := range counts {
		top = max(top, n)
	}
	c := newChart(class, title, unit, "requests", lo, lo+width*float64(bins), 0, float64(top))
	for i, n := range counts {
		if n == 0 {
			continue
		}
		a, b := lo+float64(i)*width, lo+float64(i+1)*width
		x, y := c.px(a), c.py(float64(n))
		c.mark("rect", fmt.Sprintf(`x="%.2f" y="%.2f" width="%.2f" height="%.2f"`, x, y, math.Max(c.px(b)-x-1, 1), c.py(0)-y),
			fmt.Sprintf("%s %s–%s %s: %d requests", title, exact(a), exact(b), unit, n), "bar")
	}
	for _, r := range refs {
		x := c.px(r.Value)
		c.mark("line", fmt.Sprintf(`x1="%.2f" x2="%.2f" y1="%d" y2="%.2f" data-ref="%s"`, x, x, padT, c.py(0), esc(r.Name)),
			fmt.Sprintf("%s = %s %s", r.Name, exact(r.Value), unit), "ref")
	}
	return c.html()
}

// ref is a named reference value drawn on a chart.
type ref struct {
	Name  string
	Value float64
}

// binCount is the Freedman–Diaconis rule's bin count, clamped to [10, 60].
func binCount(values []float64, lo, hi float64) int {
	if len(values) < 4 || hi == lo {
		return 10
	}
	s := append([]float64(nil), values...)
	sortFloats(s)
	iqr := s[len(s)*3/4] - s[len(s)/4]
	if iqr <= 0 {
		return 10
	}
	w := 2 * iqr / math.Cbrt(float64(len(s)))
	return max(10, min(60, int(math.Ceil((hi-lo)/w))))
}

// timeline draws each request as a bar from its start to its end, its first token marked:
// the request-level picture of a point (ramp, queueing, stragglers).
func timeline(reqs []reqSpan) template.HTML {
	if len(reqs) == 0 {
		return ""
	}
	end := 0.0
	for _, r := range reqs {
		end = math.Max(end, r.End)
	}
	c := newChart("timeline", "request timeline", "seconds since the first request", "request", 0, end, 0, float64(len(reqs)))
	h := math.Max(c.plotH/float64(len(reqs))-0.5, 0.5)
	for i, r := range reqs {
		y := c.py(float64(i + 1))
		tip := fmt.Sprintf("request %d: start +%s s, TTFT %s ms, latency %s ms", r.Index, exact(r.Start), exact(r.TTFTms), exact(r.LatencyMs))
		if r.Error != "" {
			tip = fmt.Sprintf("request %d: start +%s s, failed: %s", r.Index, exact(r.Start), r.Error)
		}
		cls := "span"
		if r.Error != "" {
			cls = "span failed"
		}
		c.mark("rect", fmt.Sprintf(`x="%.2f" y="%.2f" width="%.2f" height="%.2f"`, c.px(r.Start), y, math.Max(c.px(r.End)-c.px(r.Start), 0.5), h), tip, cls)
		if r.First > 0 {
			fmt.Fprintf(&c.b, `<rect class="first" x="%.2f" y="%.2f" width="1" height="%.2f"/>`, c.px(r.First), y, h)
		}
	}
	return c.html()
}

// reqSpan is one request on the timeline, in seconds since the point's first start.
type reqSpan struct {
	Index             int
	Start, First, End float64
	TTFTms, LatencyMs float64
	Error             string
}

// scatter draws the campaign's points: output tokens/s per GPU against tokens/s per user, the
// report's throughput–interactivity frontier, one series per cell.
func scatterOf(points []pointRow) template.HTML {
	type xy struct {
		x, y float64
		tip  string
		cell int
	}
	var pts []xy
	cells := map[string]int{}
	x1, y1 := 0.0, 0.0
	for _, p := range points {
		if p.Point == nil || p.Point.TPSUser == nil {
			continue
		}
		if _, ok := cells[p.Point.Cell]; !ok {
			cells[p.Point.Cell] = len(cells)
		}
		x, y := p.Point.TPSUser.P50, p.Point.OutputTokPerSPerGPU
		pts = append(pts, xy{x, y, fmt.Sprintf("%s c%d: %s tok/s/user (p50), %s output tok/s/GPU", p.Point.Cell, p.Point.Concurrency, exact(x), exact(y)), cells[p.Point.Cell]})
		x1, y1 = math.Max(x1, x), math.Max(y1, y)
	}
	if len(pts) == 0 {
		return ""
	}
	c := newChart("scatter", "throughput vs interactivity", "tokens/s per user (p50)", "output tokens/s per GPU", 0, x1*1.05, 0, y1*1.05)
	for _, p := range pts {
		c.mark("circle", fmt.Sprintf(`cx="%.2f" cy="%.2f" r="5" data-series="%d"`, c.px(p.x), c.py(p.y), p.cell%8), p.tip, fmt.Sprintf("dot s%d", p.cell%8))
	}
	return c.html()
}
