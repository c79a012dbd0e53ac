package webui

import (
	"fmt"
	"html/template"
	"image/color"
	"math"
	"strconv"
	"strings"

	"github.com/perfdag/perfdag/steps/report/svgchart"
)

// The charts are server-rendered SVG from steps/report/svgchart (the HTML report's charts): no
// script library, nothing fetched, and every mark carries its exact value in data-tip, which
// svgchart's script (served as /static/svgchart.js) shows on hover or focus. The request
// timeline, a chart kind svgchart does not draw, is drawn here the same way.

// exact formats a value as the shortest decimal that reads back as the same float64: the
// tooltip shows what the file holds, not a rounded figure.
func exact(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// fig is a figure as a table shows it (the exact value goes in the cell's title): four
// significant digits at most, never an exponent for the magnitudes a point holds; a magnitude
// under 0.001 keeps three significant digits rather than showing as 0.000.
func fig(v float64) string {
	a := math.Abs(v)
	switch {
	case a < 0.001 && a > 0:
		return strconv.FormatFloat(v, 'g', 3, 64)
	case a >= 1000 || v == math.Trunc(v):
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

const (
	chartW, chartH = 640, 240
	padL, padB     = 56, 36
	padT, padR     = 12, 24
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
	for _, xv := range niceTicks(c.x0, c.x1) {
		fmt.Fprintf(&c.b, `<text class="tick" x="%.1f" y="%d" text-anchor="middle">%s</text>`, c.px(xv), chartH-padB+14, esc(short(xv)))
	}
	for _, yv := range niceTicks(c.y0, c.y1) {
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

// niceTicks are the multiples of 1, 2 or 5 × 10^k within [lo, hi], four to ten of them.
func niceTicks(lo, hi float64) []float64 {
	raw := (hi - lo) / 5
	if raw <= 0 || math.IsNaN(raw) || math.IsInf(raw, 0) {
		return []float64{lo}
	}
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{2, 5, 10} {
		if raw/step <= 1.5 {
			break
		}
		step = m * mag
	}
	var out []float64
	for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9; v += step {
		out = append(out, math.Round(v/step)*step)
	}
	return out
}

// short is a tick label: four significant digits.
func short(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

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

// scatterOf draws the campaign's points: output tokens/s per GPU against tokens/s per user
// (p50), the report's throughput–interactivity picture, one series per cell.
func scatterOf(points []pointRow) template.HTML {
	var series []svgchart.Series
	index := map[string]int{}
	for _, p := range points {
		if p.Point == nil || p.Point.TPSUser == nil {
			continue
		}
		i, ok := index[p.Point.Cell]
		if !ok {
			i = len(series)
			index[p.Point.Cell] = i
			series = append(series, svgchart.Series{Name: p.Point.Cell, Color: palette[i%len(palette)], Marker: svgchart.Marker(i % 4), Line: true})
		}
		series[i].Points = append(series[i].Points, svgchart.Point{X: p.Point.TPSUser.P50, Y: p.Point.OutputTokPerSPerGPU,
			Label: p.Ref.Load.Key(), Tip: p.Ref.Load.Label()})
	}
	if len(series) == 0 {
		return ""
	}
	return svgchart.XY{Title: "throughput vs interactivity", X: svgchart.Axis{Label: "tokens/s per user (p50)"},
		Y: svgchart.Axis{Label: "output tokens/s per GPU"}, Series: series, Legend: true}.SVG()
}

// histogram is the distribution of per-request values.
func histogram(title, unit string, values []float64) template.HTML {
	if len(values) == 0 {
		return ""
	}
	return svgchart.Histogram{Title: title, XLabel: title + " (" + unit + ")", Values: values, Bins: binCount(len(values)), Color: palette[0]}.SVG()
}

// binCount is Sturges' rule, at least 8 bins and at most 60.
func binCount(n int) int {
	return max(8, min(60, int(math.Ceil(math.Log2(float64(n))))+1))
}

// percentiles draws a statistic's percentiles as point.json holds them (p1 … p99 against the
// percentile), one series per statistic: the tooltip of each mark is the file's exact value.
func percentiles(title, unit string, stats ...statRow) template.HTML {
	var series []svgchart.Series
	for i, st := range stats {
		if st.S == nil || st.S.Count == 0 {
			continue
		}
		s := svgchart.Series{Name: st.Name, Color: palette[i%len(palette)], Marker: svgchart.Marker(i % 4), Line: true}
		for _, q := range []struct {
			p float64
			v float64
		}{{1, st.S.P1}, {5, st.S.P5}, {10, st.S.P10}, {25, st.S.P25}, {50, st.S.P50}, {75, st.S.P75}, {90, st.S.P90}, {95, st.S.P95}, {99, st.S.P99}} {
			s.Points = append(s.Points, svgchart.Point{X: q.p, Y: q.v, Tip: st.Name + " p" + exact(q.p) + " (point.json) = " + exact(q.v) + " " + unit})
		}
		series = append(series, s)
	}
	if len(series) == 0 {
		return ""
	}
	return svgchart.XY{Title: title, X: svgchart.Axis{Label: "percentile", Min: 0, Max: 100}, Y: svgchart.Axis{Label: unit},
		Series: series, Legend: len(series) > 1}.SVG()
}

// palette colours series (Okabe–Ito, distinguishable with colour blindness).
var palette = []color.Color{
	color.RGBA{0x00, 0x72, 0xB2, 0xff}, color.RGBA{0xD5, 0x5E, 0x00, 0xff}, color.RGBA{0x00, 0x9E, 0x73, 0xff},
	color.RGBA{0xCC, 0x79, 0xA7, 0xff}, color.RGBA{0xE6, 0x9F, 0x00, 0xff}, color.RGBA{0x56, 0xB4, 0xE9, 0xff},
}
