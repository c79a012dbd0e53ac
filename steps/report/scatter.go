package report

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strings"

	"github.com/perfdag/perfdag/engine/plural"

	"github.com/johnfercher/maroto/v2/pkg/consts/fontstyle"
	"gonum.org/v1/plot/vg"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/report/charts"
)

// Scatter pane geometry (mm): two panes share the page width; five mbt rows fit one page.
const (
	paneW = contentW / 2
	paneH = 44.0
)

// paneSpec says what one scatter pane plots.
type paneSpec struct {
	title string
	x, y  charts.Axis
	xv    func(*schema.AtlasRow) *float64
	yv    func(*schema.AtlasRow) *float64
}

var (
	leftPane = paneSpec{
		title: "TTFT vs request throughput",
		x:     charts.Axis{Label: "request throughput (req/s)"},
		y:     charts.Axis{Label: "TTFT p50 (ms)"},
		xv:    func(r *schema.AtlasRow) *float64 { return r.RequestThroughput },
		yv:    func(r *schema.AtlasRow) *float64 { return r.TTFTP50Ms },
	}
	rightPane = paneSpec{
		title: "tok/s/user vs output tok/s/GPU",
		x:     charts.Axis{Label: "output tok/s/GPU"},
		y:     charts.Axis{Label: "tok/s/user (mean of 1/ITL)"},
		xv:    func(r *schema.AtlasRow) *float64 { return r.OutputTokPerSPerGPU },
		yv:    func(r *schema.AtlasRow) *float64 { return r.TokPerSPerUser },
	}
)

// scatterCharts draws, per mbt value present, the left and right panes with shared axis ranges
// (so rows compare at a glance) and one legend strip for the page.
func scatterCharts(v *view, art *artwork) []job {
	if v.plotReady == 0 {
		return nil
	}
	left, right := axesFor(v, leftPane), axesFor(v, rightPane)
	var jobs []job
	for _, mbt := range v.mbts {
		jobs = append(jobs, func() error {
			var figs [2]*figure
			for i, p := range []paneSpec{left, right} {
				title := fmt.Sprintf("%s: %s", mbtName(mbt), p.title)
				if len(v.mbts) == 1 && mbt <= 0 {
					title = p.title // one row of panes and no knob to name (llama.cpp, imports)
				}
				ch := charts.Chart{
					Title: v.dev(title),
					X:     devAxis(v, p.x), Y: devAxis(v, p.y),
					Series: scatterSeries(v, mbt, p),
					Width:  vg.Length(paneW) * vg.Millimeter, Height: vg.Length(paneH) * vg.Millimeter,
					FontSize: 6.5,
					Empty:    "no plot-ready points at " + mbtName(mbt),
				}
				f, err := art.chartFig(ch)
				if err != nil {
					return fmt.Errorf("scatter %s: %w", mbtName(mbt), err)
				}
				figs[i] = f
			}
			art.setScatter(mbt, figs)
			return nil
		})
	}
	jobs = append(jobs, func() error {
		var legend []charts.Series
		for _, x := range v.variants {
			legend = append(legend, charts.Series{Name: x.label, Color: x.color, Marker: x.marker, Hollow: x.key.MTP, Line: true})
		}
		if slices.ContainsFunc(v.rows, func(r schema.AtlasRow) bool { return r.PlotReady && r.PointLoad().IsRate() }) {
			legend = append(legend, charts.Series{Name: "dashed: a variant's request-rate points, in rate order", Color: color.RGBA{0x55, 0x55, 0x55, 0xFF}, Marker: charts.None, Line: true, Dashed: true})
		}
		f, err := art.legendFig(legend, vg.Length(contentW)*vg.Millimeter, 7)
		if err != nil {
			return fmt.Errorf("scatter legend: %w", err)
		}
		art.legend = f
		return nil
	})
	return jobs
}

func mbtName(mbt int) string {
	if mbt <= 0 {
		return "mbt not set"
	}
	return fmt.Sprintf("mbt %d", mbt)
}

// scatterSeries builds one series per variant at this mbt, points in concurrency order,
// labelled at the report's label concurrencies, and a dashed one of the variant's request-rate
// points in rate order when it has any.
func scatterSeries(v *view, mbt int, p paneSpec) []charts.Series {
	var out []charts.Series
	for _, x := range v.variants {
		var rows []*schema.AtlasRow
		for i := range v.rows {
			r := &v.rows[i]
			if r.PlotReady && r.MaxNumBatchedTokens == mbt && keyOf(r) == x.key {
				rows = append(rows, r)
			}
		}
		if len(rows) == 0 {
			continue
		}
		slices.SortFunc(rows, func(a, b *schema.AtlasRow) int { return a.PointLoad().Compare(b.PointLoad()) })
		s := charts.Series{Name: x.label, Color: x.color, Marker: x.marker, Hollow: x.key.MTP, Line: true, Width: 0.6}
		rates := s // the variant's rate points: a dashed line of their own, never joined to its concurrencies
		rates.Name, rates.Dashed = x.label+" (request rates)", true
		for _, r := range rows {
			xv, yv := p.xv(r), p.yv(r)
			if xv == nil || yv == nil {
				continue
			}
			l := r.PointLoad()
			pt := charts.Point{X: *xv, Y: *yv, Tip: fmt.Sprintf("cell %s, %s", r.CellID, loadTip(l))}
			if l.IsRate() {
				rates.Points = append(rates.Points, pt)
				continue
			}
			if slices.Contains(v.opt.labels, r.Concurrency) {
				pt.Label = fmt.Sprintf("c%d", r.Concurrency)
			}
			s.Points = append(s.Points, pt)
		}
		if len(s.Points) > 0 || len(rates.Points) == 0 {
			out = append(out, s)
		}
		if len(rates.Points) > 0 {
			out = append(out, rates)
		}
	}
	return out
}

// axesFor fixes a pane's ranges over every plot-ready row, with 5 % padding; an axis whose
// values span more than 30x is drawn log-scaled.
func axesFor(v *view, p paneSpec) paneSpec {
	xs, ys := []float64{}, []float64{}
	for i := range v.rows {
		r := &v.rows[i]
		if !r.PlotReady {
			continue
		}
		if x, y := p.xv(r), p.yv(r); x != nil && y != nil && *x > 0 && *y > 0 {
			xs, ys = append(xs, *x), append(ys, *y)
		}
	}
	p.x, p.y = fitAxis(p.x, xs), fitAxis(p.y, ys)
	return p
}

func devAxis(v *view, a charts.Axis) charts.Axis {
	a.Label = v.dev(a.Label)
	return a
}

func fitAxis(a charts.Axis, vals []float64) charts.Axis {
	if len(vals) == 0 {
		return a
	}
	lo, hi := slices.Min(vals), slices.Max(vals)
	if lo > 0 && hi/lo > 30 {
		a.Log = true
		a.Min, a.Max = lo/1.25, hi*1.25
		return a
	}
	pad := (hi - lo) * 0.06
	if pad == 0 {
		pad = math.Max(math.Abs(hi)*0.1, 1)
	}
	a.Min, a.Max = math.Max(0, lo-pad), hi+pad
	return a
}

// scatterPage is page 1: coverage line, encoding note, legend, then one row per mbt.
func scatterPage(d sink, v *view, art *artwork) {
	d.newPage(TitleScatter)
	d.para(v.coverageLine(), 9, fontstyle.Bold, nil)
	if v.plotReady == 0 {
		d.missing("No plot-ready points in this campaign.")
		return
	}
	d.para(fmt.Sprintf("Colour = one per (hardware, TP and any other field that differs between cells, e.g. shape). Circle = EP, X = TP; hollow markers = MTP. Labels mark concurrency %s; colliding labels are skipped. Axes are shared down each column.",
		ints(v.opt.labels)), 7.5, fontstyle.Normal, &colorMuted)
	if note := gaps(v); note != "" {
		d.para(note, 7.5, fontstyle.Normal, &colorWarn)
	}
	d.images(art.legend.h, art.legend)
	for _, mbt := range v.mbts {
		p := art.scatterFor(mbt)
		d.images(paneH, p[0], p[1])
	}
	if n := countFlag(v.rows, FlagEvicted); n > 0 {
		d.para(fmt.Sprintf("%s carry the evicted flag: measured while the server evicted request context from its KV cache (latency includes recomputation).", plural.N(n, "plotted point")),
			7, fontstyle.Italic, &colorMuted)
	}
}

func countFlag(rows []schema.AtlasRow, f string) int {
	n := 0
	for i := range rows {
		if rows[i].PlotReady && hasFlag(&rows[i], f) {
			n++
		}
	}
	return n
}

// gaps names the cells whose points are missing from the panes: failed cells and partial ones
// with how many points they lack.
func gaps(v *view) string {
	type tally struct {
		status       string
		points, miss int
	}
	var order []string
	cells := map[string]*tally{}
	for i := range v.rows {
		r := &v.rows[i]
		t := cells[r.CellID]
		if t == nil {
			t = &tally{status: r.CellStatus}
			cells[r.CellID] = t
			order = append(order, r.CellID)
		}
		t.points++
		if !r.PlotReady {
			t.miss++
		}
	}
	var failed, partial []string
	for _, id := range order {
		switch t := cells[id]; {
		case t.status == schema.CellFailed:
			failed = append(failed, id)
		case t.miss > 0:
			partial = append(partial, fmt.Sprintf("%s (%d of %s missing)", id, t.miss, plural.N(t.points, "point")))
		}
	}
	var parts []string
	if len(failed) > 0 {
		parts = append(parts, "Failed, not plotted: "+strings.Join(failed, ", ")+".")
	}
	if len(partial) > 0 {
		parts = append(parts, "Partly plotted: "+strings.Join(partial, ", ")+".")
	}
	return strings.Join(parts, " ")
}
