package charts

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"slices"
	"strconv"
	"sync"

	"git.sr.ht/~sbinet/gg"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// DPI is the resolution charts are rasterised at: sharp in print, small in the PDF.
const DPI = 120

// Point is one data point; a non-empty Label is drawn inline next to it when it fits. Tip
// says what the point is (cell, concurrency) where a chart is interactive; a PNG ignores it.
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
	Hollow bool    // outlined marker (the report's MTP encoding)
	Line   bool    // connect the points in the order given
	Dashed bool    // draw the connecting line dashed
	Width  float64 // line width in points (default 0.8)
	Points []Point
	// NoLegend keeps the series out of the legend (e.g. a second segment of a ceiling).
	NoLegend bool
}

// Axis names an axis with its unit and chooses linear or log scale; Min/Max fix the range when
// Max > Min; Ticks, when set, are the only labelled ticks (e.g. the concurrencies swept).
type Axis struct {
	Label    string
	Log      bool
	Min, Max float64
	Ticks    []float64
}

// Chart is one pane: series over two axes, optional horizontal reference lines, a legend strip.
type Chart struct {
	Title  string
	X, Y   Axis
	Series []Series
	// Refs are dashed horizontal lines across the pane (a threshold), named in the legend and
	// always inside the Y range.
	Refs []RefLine
	// Spans are shaded vertical bands from X0 to X1 across the pane (a range a value is known
	// to lie in, e.g. a knee's band), drawn under the series and named in the legend.
	Spans []Span
	// Legend draws a legend strip under the pane naming every series.
	Legend bool
	// Width and Height are the image size; the PDF scales it into its cell.
	Width, Height vg.Length
	// FontSize is the base text size in points (default 7).
	FontSize vg.Length
	// Empty is the text drawn instead of data when no series has a point.
	Empty string
}

// PNG renders the chart to PNG bytes. gonum/plot panics on data it cannot draw (a log axis
// reaching zero); that becomes an error naming the chart, never a crashed report.
func (ch Chart) PNG() (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("chart %q: %v", ch.Title, r)
		}
	}()
	fs := ch.FontSize
	if fs == 0 {
		fs = 7
	}
	c := newCanvas(ch.Width, ch.Height)
	dc := draw.New(c)
	plotArea := dc
	if ch.Legend {
		entries := legendEntries(slices.Concat(spanSeries(ch.Spans), ch.Series, refSeries(ch.Refs)))
		lay := layoutLegend(entries, dc.Max.X-dc.Min.X, fs)
		legendArea := dc
		legendArea.Max.Y = dc.Min.Y + lay.height
		plotArea.Min.Y = legendArea.Max.Y
		drawLegend(legendArea, entries, lay, fs)
	}
	p, err := ch.plot(fs)
	if err != nil {
		return nil, err
	}
	p.Draw(plotArea)
	return encodePNG(c)
}

func (ch Chart) plot(fs vg.Length) (*plot.Plot, error) {
	p := newPlot()
	p.Title.Text = ch.Title
	p.Title.TextStyle.Font.Size = fs + 1.5
	p.Title.Padding = 2
	for _, a := range []struct {
		ax   *plot.Axis
		spec Axis
	}{{&p.X, ch.X}, {&p.Y, ch.Y}} {
		a.ax.Label.Text = a.spec.Label
		a.ax.Label.TextStyle.Font.Size = fs
		a.ax.Tick.Label.Font.Size = fs - 1
		a.ax.Label.Padding = 1
		switch {
		case len(a.spec.Ticks) > 0:
			a.ax.Tick.Marker = fixedTicks(a.spec.Ticks)
		case a.spec.Log:
			a.ax.Tick.Marker = logTicks{}
		default:
			a.ax.Tick.Marker = linearTicks{}
		}
		if a.spec.Log {
			a.ax.Scale = plot.LogScale{}
		}
	}
	grid := plotter.NewGrid()
	grid.Vertical.Color = color.Gray{Y: 225}
	grid.Horizontal.Color = color.Gray{Y: 225}
	p.Add(grid)
	for _, sp := range ch.Spans {
		if usable(sp.X0, ch.X.Log) && usable(sp.X1, ch.X.Log) && sp.X1 > sp.X0 {
			p.Add(span{sp})
		}
	}

	n := 0
	var labels labelLayer
	labels.fs = fs - 1.5
	for _, s := range ch.Series {
		xys := make(plotter.XYs, 0, len(s.Points))
		var bars errBars
		for _, pt := range s.Points {
			if !usable(pt.X, ch.X.Log) || !usable(pt.Y, ch.Y.Log) {
				continue
			}
			xys = append(xys, plotter.XY{X: pt.X, Y: pt.Y})
			if pt.Lo != nil && pt.Hi != nil && usable(*pt.Lo, ch.Y.Log) && usable(*pt.Hi, ch.Y.Log) && *pt.Hi >= *pt.Lo {
				bars.XYs = append(bars.XYs, plotter.XY{X: pt.X, Y: pt.Y})
				bars.YErrors = append(bars.YErrors, struct{ Low, High float64 }{pt.Y - *pt.Lo, *pt.Hi - pt.Y})
			}
			if pt.Label != "" {
				labels.reqs = append(labels.reqs, labelPoint{x: pt.X, y: pt.Y, text: pt.Label, color: s.Color})
			}
		}
		if len(xys) == 0 {
			continue
		}
		if len(bars.XYs) > 0 {
			eb, err := plotter.NewYErrorBars(bars)
			if err != nil {
				return nil, fmt.Errorf("series %q: %w", s.Name, err)
			}
			eb.LineStyle.Color, eb.LineStyle.Width = s.Color, vg.Points(0.7)
			p.Add(eb)
		}
		n += len(xys)
		if s.Line && len(xys) > 1 {
			l, err := plotter.NewLine(xys)
			if err != nil {
				return nil, fmt.Errorf("series %q: %w", s.Name, err)
			}
			l.LineStyle = lineStyle(s)
			p.Add(l)
		}
		if s.Marker != None {
			sc, err := plotter.NewScatter(xys)
			if err != nil {
				return nil, fmt.Errorf("series %q: %w", s.Name, err)
			}
			sc.GlyphStyle = draw.GlyphStyle{Color: s.Color, Radius: markerRadius, Shape: glyph(s.Marker, s.Hollow)}
			p.Add(sc)
			labels.markers = append(labels.markers, xys...)
		}
	}
	for _, r := range ch.Refs {
		if usable(r.Y, ch.Y.Log) {
			p.Add(refLine{r})
		}
	}
	if n == 0 {
		empty := ch.Empty
		if empty == "" {
			empty = "no data"
		}
		p.Add(emptyNote{text: empty, fs: fs + 1})
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, 1
		if ch.X.Log {
			p.X.Min, p.X.Max = 1, 10
		}
		if ch.Y.Log {
			p.Y.Min, p.Y.Max = 1, 10
		}
	}
	if ch.X.Max > ch.X.Min {
		p.X.Min, p.X.Max = ch.X.Min, ch.X.Max
	}
	if ch.Y.Max > ch.Y.Min {
		p.Y.Min, p.Y.Max = ch.Y.Min, ch.Y.Max
	}
	if len(labels.reqs) > 0 {
		p.Add(&labels)
	}
	widenLog(&p.X, ch.X.Log)
	widenLog(&p.Y, ch.Y.Log)
	niceLinear(&p.X, ch.X)
	niceLinear(&p.Y, ch.Y)
	return p, nil
}

// errBars are a series' points with their intervals (plotter.YErrorBars reads them).
type errBars struct {
	plotter.XYs
	plotter.YErrors
}

// widenLog gives a log axis a positive, non-empty range: gonum pads an empty range (one point)
// by ±1, which reaches zero and cannot be drawn on a log scale.
func widenLog(ax *plot.Axis, log bool) {
	if !log || ax.Max > ax.Min && ax.Min > 0 {
		return
	}
	v := max(ax.Max, ax.Min)
	if v <= 0 {
		v = 1
	}
	ax.Min, ax.Max = v/2, v*2
}

// niceLinear rounds a linear axis without a fixed range out to whole tick steps (flat data
// widened, nothing clipped) and labels it with distinct ticks.
func niceLinear(ax *plot.Axis, spec Axis) {
	if spec.Log || len(spec.Ticks) > 0 || spec.Max > spec.Min {
		return
	}
	lo, hi, step := NiceRange(ax.Min, ax.Max)
	ax.Min, ax.Max = lo, hi
	ax.Tick.Marker = linearTicks{step: step}
}

// fixedTicks labels exactly the given values.
type fixedTicks []float64

// Ticks implements plot.Ticker.
func (f fixedTicks) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	for _, v := range f {
		if v >= lo && v <= hi {
			out = append(out, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', -1, 64)})
		}
	}
	return out
}

// logTicks labels 1-2-5 steps on a log axis spanning up to three decades (gonum's LogTicks
// labels powers of ten only, leaving a short axis with one or two labels), unlabelled minor
// ticks between; wider ranges fall back to powers of ten.
type logTicks struct{}

// Ticks implements plot.Ticker.
func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if lo <= 0 || hi/lo > 1000 {
		return plot.LogTicks{Prec: -1}.Ticks(lo, hi)
	}
	var out []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		for m := 1.0; m <= 9; m++ {
			v := m * math.Pow(10, e)
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || m == 2 || m == 5 {
				t.Label = strconv.FormatFloat(v, 'g', 6, 64)
			}
			out = append(out, t)
		}
	}
	return out
}

// markerRadius is the glyph radius of every series marker.
const markerRadius = vg.Length(2.6)

func usable(v float64, log bool) bool {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return false
	}
	return !log || v > 0
}

func lineStyle(s Series) draw.LineStyle {
	w := s.Width
	if w == 0 {
		w = 0.8
	}
	ls := draw.LineStyle{Color: s.Color, Width: vg.Points(w)}
	if s.Dashed {
		ls.Dashes = []vg.Length{vg.Points(3), vg.Points(2)}
	}
	return ls
}

// emptyNote draws a centred note in the data area of a pane with no data.
type emptyNote struct {
	text string
	fs   vg.Length
}

// Plot implements plot.Plotter.
func (e emptyNote) Plot(c draw.Canvas, _ *plot.Plot) {
	sty := textStyle(e.fs, color.Gray{Y: 90})
	sty.XAlign, sty.YAlign = draw.XCenter, draw.YCenter
	c.FillText(sty, vg.Point{X: (c.Min.X + c.Max.X) / 2, Y: (c.Min.Y + c.Max.Y) / 2}, e.text)
}

// labelPoint is a point that wants an inline label.
type labelPoint struct {
	x, y  float64
	text  string
	color color.Color
}

// labelLayer draws the inline labels last, after placing them so that none overlap.
type labelLayer struct {
	reqs    []labelPoint
	markers plotter.XYs
	fs      vg.Length
}

// Plot implements plot.Plotter.
func (l *labelLayer) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	obstacles := make([]box, 0, len(l.markers))
	for _, m := range l.markers {
		x, y := trX(m.X), trY(m.Y)
		obstacles = append(obstacles, box{x - markerRadius, y - markerRadius, x + markerRadius, y + markerRadius})
	}
	reqs := make([]labelReq, len(l.reqs))
	styles := make([]draw.TextStyle, len(l.reqs))
	for i, r := range l.reqs {
		styles[i] = textStyle(l.fs, darken(r.color))
		reqs[i] = labelReq{
			at:  vg.Point{X: trX(r.x), Y: trY(r.y)},
			w:   styles[i].Width(r.text),
			h:   styles[i].Height(r.text),
			gap: markerRadius + 0.8,
		}
	}
	bounds := box{c.Min.X, c.Min.Y, c.Max.X, c.Max.Y}
	for _, pl := range placeLabels(reqs, bounds, obstacles) {
		c.FillText(styles[pl.index], vg.Point{X: pl.at.minX, Y: pl.at.minY}, l.reqs[pl.index].text)
	}
}

// darken makes a label a little darker than its series so it reads on white.
func darken(c color.Color) color.Color {
	if c == nil {
		return color.Black
	}
	r, g, b, _ := c.RGBA()
	return color.RGBA{uint8(r >> 8 * 3 / 4), uint8(g >> 8 * 3 / 4), uint8(b >> 8 * 3 / 4), 0xFF}
}

// encoderBuffers recycles the PNG encoder's ~1 MB zlib state between charts. It is a cache,
// not state: what it holds never changes an output byte.
var encoderBuffers = &pngBuffers{}

type pngBuffers struct{ p sync.Pool }

// Get implements png.EncoderBufferPool.
func (b *pngBuffers) Get() *png.EncoderBuffer {
	eb, _ := b.p.Get().(*png.EncoderBuffer)
	return eb
}

// Put implements png.EncoderBufferPool.
func (b *pngBuffers) Put(eb *png.EncoderBuffer) { b.p.Put(eb) }

// newCanvas is a white image canvas of w×h at DPI. It hands vgimg an RGBA image with its own
// drawing context, which skips the full-image copy vgimg.NewWith otherwise makes.
func newCanvas(w, h vg.Length) *vgimg.Canvas {
	px := func(l vg.Length) int { return int(float64(l/vg.Inch)*DPI + 0.5) }
	img := image.NewRGBA(image.Rect(0, 0, px(w), px(h)))
	ctx := gg.NewContextForRGBA(img)
	ctx.SetLineCapButt()
	ctx.InvertY()
	return vgimg.NewWith(vgimg.UseImageWithContext(img, ctx), vgimg.UseDPI(DPI))
}

// encodePNG writes the canvas as an opaque PNG (RGB, so the PDF embeds it without an alpha pass).
func encodePNG(c *vgimg.Canvas) ([]byte, error) {
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed, BufferPool: encoderBuffers}
	if err := enc.Encode(&buf, c.Image()); err != nil {
		return nil, fmt.Errorf("encode chart png: %w", err)
	}
	return buf.Bytes(), nil
}
