package report

import (
	"github.com/perfdag/perfdag/steps/report/charts"
	"gonum.org/v1/plot/vg"
)

// figure is one chart of the report as its renderer-neutral spec (exactly one of chart, bars,
// legend is set), with its PNG once rasterised for the PDF; the HTML report draws the spec.
type figure struct {
	chart  *charts.Chart
	bars   *charts.BarChart
	legend []charts.Series // a legend strip shared by the panes of a page
	width  vg.Length       // the legend strip's width
	png    []byte
	h      float64 // the legend strip's height in mm, known once rasterised
}

// chartFig makes the figure of an XY chart, rasterised when the artwork is for the PDF.
func (a *artwork) chartFig(ch charts.Chart) (*figure, error) {
	f := &figure{chart: &ch}
	if a.raster {
		b, err := ch.PNG()
		if err != nil {
			return nil, err
		}
		f.png = b
	}
	return f, nil
}

// barFig makes the figure of a bar chart, rasterised when the artwork is for the PDF.
func (a *artwork) barFig(bc charts.BarChart) (*figure, error) {
	f := &figure{bars: &bc}
	if a.raster {
		b, err := bc.PNG()
		if err != nil {
			return nil, err
		}
		f.png = b
	}
	return f, nil
}

// legendFig makes a legend strip w wide, rasterised (with its height) for the PDF.
func (a *artwork) legendFig(series []charts.Series, w vg.Length, fs vg.Length) (*figure, error) {
	f := &figure{legend: series, width: w}
	if a.raster {
		b, h, err := charts.LegendStrip(series, w, fs)
		if err != nil {
			return nil, err
		}
		f.png, f.h = b, float64(h/vg.Millimeter)
	}
	return f, nil
}
