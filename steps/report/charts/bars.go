package charts

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// BarGroup is one named bar series over the categories; NaN marks a category it did not measure.
type BarGroup struct {
	Name   string
	Color  color.Color
	Values []float64
}

// RefLine is a named horizontal reference line (e.g. the 75 % HBM line).
type RefLine struct {
	Name  string
	Y     float64
	Color color.Color
}

// BarChart is a grouped bar pane over nominal categories with reference lines and a legend strip.
type BarChart struct {
	Title         string
	YLabel        string
	XLabel        string
	Categories    []string
	Groups        []BarGroup
	Refs          []RefLine
	YMax          float64 // fixed top of the Y axis when > 0
	Width, Height vg.Length
	FontSize      vg.Length
}

// PNG renders the bar chart to PNG bytes.
func (bc BarChart) PNG() ([]byte, error) {
	fs := bc.FontSize
	if fs == 0 {
		fs = 7
	}
	for _, g := range bc.Groups {
		if len(g.Values) != len(bc.Categories) {
			return nil, fmt.Errorf("bar group %q: %d values for %d categories", g.Name, len(g.Values), len(bc.Categories))
		}
	}
	c := newCanvas(bc.Width, bc.Height)
	dc := draw.New(c)
	var legend []Series
	for _, g := range bc.Groups {
		legend = append(legend, Series{Name: g.Name, Color: g.Color, Marker: Square})
	}
	legend = append(legend, refSeries(bc.Refs)...)
	entries := legendEntries(legend)
	lay := layoutLegend(entries, dc.Max.X-dc.Min.X, fs)
	legendArea, plotArea := dc, dc
	legendArea.Max.Y = dc.Min.Y + lay.height
	plotArea.Min.Y = legendArea.Max.Y
	drawLegend(legendArea, entries, lay, fs)

	p := newPlot()
	p.Title.Text = bc.Title
	p.Title.TextStyle.Font.Size = fs + 1.5
	p.Y.Label.Text = bc.YLabel
	p.X.Label.Text = bc.XLabel
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		ax.Label.TextStyle.Font.Size = fs
		ax.Tick.Label.Font.Size = fs - 1
	}
	grid := plotter.NewGrid()
	grid.Vertical.Color = nil
	grid.Horizontal.Color = color.Gray{Y: 225}
	p.Add(grid)
	p.Add(&groupedBars{groups: bc.Groups, n: len(bc.Categories)})
	for _, r := range bc.Refs {
		p.Add(refLine{r})
	}
	if len(bc.Categories) > 0 {
		p.NominalX(bc.Categories...)
	}
	p.X.Tick.Label.Rotation = 0
	if len(bc.Categories) > 10 {
		p.X.Tick.Label.Rotation = math.Pi / 4
		p.X.Tick.Label.XAlign = draw.XRight
		p.X.Tick.Label.YAlign = draw.YCenter
	}
	// the top is a whole tick step at or above every bar and line: nothing is clipped
	top := bc.YMax
	if _, _, _, dmax := (&groupedBars{groups: bc.Groups}).DataRange(); dmax > top {
		top = dmax
	}
	for _, r := range bc.Refs {
		top = math.Max(top, r.Y)
	}
	lo, hi, step := NiceRange(0, top)
	p.Y.Min, p.Y.Max = lo, hi
	p.Y.Tick.Marker = linearTicks{step: step}
	p.Draw(plotArea)
	return encodePNG(c)
}

// groupedBars draws the groups side by side within each category slot.
type groupedBars struct {
	groups []BarGroup
	n      int
}

// DataRange implements plot.DataRanger.
func (g *groupedBars) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax = -0.5, float64(g.n)-0.5
	for _, gr := range g.groups {
		for _, v := range gr.Values {
			if !math.IsNaN(v) && v > ymax {
				ymax = v
			}
		}
	}
	if ymax == 0 {
		ymax = 1
	}
	return xmin, xmax, 0, ymax
}

// Plot implements plot.Plotter.
func (g *groupedBars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	if g.n == 0 || len(g.groups) == 0 {
		return
	}
	slot := trX(1) - trX(0)
	w := slot * 0.8 / vg.Length(len(g.groups))
	for gi, gr := range g.groups {
		for i, v := range gr.Values {
			if math.IsNaN(v) {
				continue
			}
			x0 := trX(float64(i)) - slot*0.4 + vg.Length(gi)*w
			y0, y1 := trY(0), trY(v)
			c.FillPolygon(gr.Color, []vg.Point{{X: x0, Y: y0}, {X: x0 + w*0.92, Y: y0}, {X: x0 + w*0.92, Y: y1}, {X: x0, Y: y1}})
		}
	}
}

// refSeries are reference lines as the legend names them: a dashed line swatch.
func refSeries(refs []RefLine) []Series {
	out := make([]Series, 0, len(refs))
	for _, r := range refs {
		out = append(out, Series{Name: r.Name, Color: r.Color, Marker: None, Line: true, Dashed: true})
	}
	return out
}

// refLine draws a dashed horizontal line across the data area.
type refLine struct{ RefLine }

// Plot implements plot.Plotter.
func (r refLine) Plot(c draw.Canvas, p *plot.Plot) {
	_, trY := p.Transforms(&c)
	y := trY(r.Y)
	if y < c.Min.Y || y > c.Max.Y {
		return
	}
	ls := lineStyle(Series{Color: r.Color, Dashed: true, Width: 1})
	c.StrokeLine2(ls, c.Min.X, y, c.Max.X, y)
}

// DataRange implements plot.DataRanger so the line is always inside the axis range.
func (r refLine) DataRange() (xmin, xmax, ymin, ymax float64) {
	return math.Inf(1), math.Inf(-1), r.Y, r.Y
}
