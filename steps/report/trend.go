package report

import (
	"cmp"
	"fmt"
	"image/color"
	"slices"
	"strconv"
	"strings"

	"github.com/johnfercher/maroto/v2/pkg/consts/align"
	"github.com/johnfercher/maroto/v2/pkg/consts/fontstyle"
	"gonum.org/v1/plot/vg"

	"github.com/perfdag/perfdag/steps/analysis/history"
	"github.com/perfdag/perfdag/steps/report/charts"
)

// missingTrendNote is the trend page's line in the report a scheduled run's own render step
// writes: the run is not judged yet, so its trend cannot be drawn.
const missingTrendNote = "A scheduled run's trend is drawn when its verdict is written (perfdag report DIR re-renders it)."

// trendMetrics are the series the trend page draws per cell, with their axis labels: the
// headline throughput and TTFT at each load, and a searched cell's knee (over concurrency or
// request rate).
var trendMetrics = []struct{ metric, label string }{
	{"output_tok_s", "output tok/s"},
	{"ttft_p50_ms", "TTFT p50 (ms)"},
	{history.KneeMetric, "knee (concurrency)"},
	{history.KneeRateMetric, "knee (req/s)"},
}

func hasTrend(in Input) bool {
	return in.Trend != nil && in.Trend.History != nil && len(in.Trend.History.Runs) > 0
}

func missingTrend(in Input) string {
	if in.Trend != nil && in.Trend.Note != "" {
		return "No trend: " + in.Trend.Note
	}
	return missingTrendNote
}

// trendPage draws, per cell, the headline metrics at each load and the knee over the window of
// runs ending at this one — intervals as error bars, this run shaded, change points as seams —
// and a table of the runs' verdicts.
func trendPage(d sink, v *view, art *artwork) {
	d.newPage(TitleTrend)
	in := v.in
	if !hasTrend(in) {
		d.missing(missingTrend(in))
		return
	}
	h, this := in.Trend.History, in.Trend.Run
	index := map[string]int{} // run id → its x (1-based)
	for i, r := range h.Runs {
		index[r.ID] = i + 1
	}
	d.para(fmt.Sprintf("Campaign %s over its last %d scheduled runs, ending at this one (run %d, shaded). Bars are 95 %% intervals; "+
		"a shaded seam before a run marks a change point (the series' level shifts from that run on, E-divisive means: docs/schedule.md#change-points). "+
		"perfdag history gives every series as JSON.", h.Campaign, len(h.Runs), index[this]), 7.5, fontstyle.Normal, &colorMuted)
	var figs []*figure
	for _, cell := range trendCells(h) {
		for _, m := range trendMetrics {
			ch, ok := trendChart(h, cell, m.metric, m.label, index, this)
			if !ok {
				continue
			}
			f, err := art.chartFig(ch)
			if err != nil {
				d.missing(err.Error())
				continue
			}
			figs = append(figs, f)
		}
	}
	for i := 0; i < len(figs); i += 2 {
		pair := []*figure{figs[i], nil}
		if i+1 < len(figs) {
			pair[1] = figs[i+1]
		}
		d.images(62, pair...)
	}
	d.space(2)
	d.heading("Runs")
	cols := []tcol{{head: "#", w: 1, align: align.Right}, {head: "Run", w: 10}, {head: "Started (UTC)", w: 7},
		{head: "Verdict", w: 4}, {head: "Drift changes", w: 3, align: align.Right}, {head: "Change points from it", w: 7}}
	var rows [][]tcell
	for i, r := range h.Runs {
		var marks []string
		for _, mk := range r.Marks {
			marks = append(marks, strings.TrimPrefix(mk.Cell+" "+mk.Load+" "+mk.Metric, " "))
		}
		row := []tcell{plain(strconv.Itoa(i + 1)), plain(r.ID), plain(r.Started), plain(r.Verdict),
			plain(strconv.Itoa(r.DriftChanges)), plain(strings.Join(marks, ", "))}
		if r.ID == this {
			for j := range row {
				row[j].bold = true
			}
		}
		rows = append(rows, row)
	}
	d.table(cols, nil, rows)
}

// Colours of the trend page's bands: this run's column, a change point's seam.
var (
	trendThisRun = color.RGBA{0x80, 0x80, 0x80, 0xff}
	trendSeam    = color.RGBA{0xC0, 0x1C, 0x28, 0xff}
)

// trendCells are the cells the window's series cover, sorted.
func trendCells(h *history.History) []string {
	var out []string
	for _, s := range h.Series {
		out = append(out, s.Cell)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// trendChart is one cell's metric over the runs: a line per load (the knee has one), this
// run's points ringed, the series' change points as seams before the run they start at.
func trendChart(h *history.History, cell, metric, label string, index map[string]int, this string) (charts.Chart, bool) {
	var ss []history.Series
	for _, s := range h.Series {
		if s.Cell == cell && s.Metric == metric && len(s.Points) > 0 {
			ss = append(ss, s)
		}
	}
	if len(ss) == 0 {
		return charts.Chart{}, false
	}
	slices.SortStableFunc(ss, func(a, b history.Series) int { return cmp.Compare(loadOrder(a.Load), loadOrder(b.Load)) })
	ch := charts.Chart{Title: cell + ": " + label, X: charts.Axis{Label: "run", Min: 0.5, Max: float64(len(h.Runs)) + 0.5},
		Y: charts.Axis{Label: label}, Legend: true, Width: 120 * vg.Millimeter, Height: 62 * vg.Millimeter}
	for i := range h.Runs {
		ch.X.Ticks = append(ch.X.Ticks, float64(i+1))
	}
	if x, ok := index[this]; ok {
		ch.Spans = append(ch.Spans, charts.Span{Name: "this run", X0: float64(x) - 0.35, X1: float64(x) + 0.35, Color: trendThisRun})
	}
	seams := map[int]bool{}
	for i, s := range ss {
		name := s.Load
		if name == "" {
			name = metric
		}
		out := charts.Series{Name: name, Color: charts.Color(i), Marker: charts.Circle, Line: true}
		for _, p := range s.Points {
			x, ok := index[p.Run]
			if !ok {
				continue
			}
			out.Points = append(out.Points, charts.Point{X: float64(x), Y: p.Value, Lo: p.Lo, Hi: p.Hi, Tip: p.Run})
		}
		ch.Series = append(ch.Series, out)
		for _, mk := range s.Marks {
			if x, ok := index[mk.Run]; ok && !seams[x] {
				seams[x] = true
				ch.Spans = append(ch.Spans, charts.Span{Name: "change point", X0: float64(x) - 0.56, X1: float64(x) - 0.44, Color: trendSeam})
			}
		}
	}
	return ch, true
}

// loadOrder sorts loads c2 < c16 < r2.5 by kind then number ("" for a knee first).
func loadOrder(load string) float64 {
	if load == "" {
		return -1
	}
	n, err := strconv.ParseFloat(strings.SplitN(load[1:], "-", 2)[0], 64)
	if err != nil {
		return 1e18
	}
	if load[0] == 'r' {
		n += 1e9
	}
	return n
}
