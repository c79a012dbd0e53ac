package report

import (
	"fmt"
	"math"

	"github.com/johnfercher/maroto/v2/pkg/consts/align"
	"github.com/johnfercher/maroto/v2/pkg/consts/fontstyle"
	"github.com/johnfercher/maroto/v2/pkg/props"

	"github.com/perfdag/perfdag/schema"
)

// heatCell is one (variant, mbt) cell of a heatmap at one concurrency.
type heatCell struct {
	value *float64
	grey  bool
	text  string // shown instead of the value when grey and no value: failed, missing, ...
}

// heatCellOf classifies a measurement: missing (no row), failed or missing point, partial
// point (grey, value kept) or a plain value.
func heatCellOf(r *schema.AtlasRow, metric func(*schema.AtlasRow) *float64) heatCell {
	if r == nil {
		return heatCell{grey: true, text: "-"}
	}
	st := pointStatus(r)
	if !r.PlotReady {
		switch {
		case st == "failed" || r.CellStatus == schema.CellFailed:
			return heatCell{grey: true, text: "failed"}
		case st == "partial":
			return heatCell{grey: true, value: metric(r), text: "partial"}
		}
		return heatCell{grey: true, text: "missing"}
	}
	v := metric(r)
	if v == nil {
		return heatCell{grey: true, text: "n/a"}
	}
	return heatCell{value: v, grey: st == "partial"}
}

// shade maps t in [0,1] (1 = best) from near white to dark blue, and picks a readable text colour.
func shade(t float64) (bg, fg props.Color) {
	t = math.Max(0, math.Min(1, t))
	lo := [3]float64{0xF2, 0xF7, 0xFC}
	hi := [3]float64{0x08, 0x45, 0x94}
	c := func(i int) int { return int(math.Round(lo[i] + (hi[i]-lo[i])*t)) }
	bg = props.Color{Red: c(0), Green: c(1), Blue: c(2)}
	fg = props.Color{}
	if t > 0.55 {
		fg = colorWhite
	}
	return bg, fg
}

// heatmapPage is page 2: per heatmap concurrency, output tok/s/GPU and TTFT avg for every
// (variant, mbt), darker = better, grey = missing, failed or partial.
func heatmapPage(d sink, v *view, _ *artwork) {
	d.newPage(TitleHeatmap)
	if len(v.rows) == 0 {
		d.missing("No atlas rows in this campaign.")
		return
	}
	d.para(v.dev("Darker blue = better (higher output tok/s/GPU, lower TTFT p50), compared only among rows of one workload shape. Grey = missing, failed or partial point; a grey cell with a number is a partial point (some requests failed)."),
		7.5, fontstyle.Normal, &colorMuted)
	index := map[string]*schema.AtlasRow{}
	for i := range v.rows {
		if r := &v.rows[i]; !r.PointLoad().IsRate() { // tables at fixed concurrency: a rate point capped at 8 is not c8
			index[fmt.Sprintf("%v|%d|%d", keyOf(r), r.MaxNumBatchedTokens, r.Concurrency)] = r
		}
	}
	k := len(v.mbts)
	metrics := []heatMetric{
		{v.dev("output tok/s/GPU"), func(r *schema.AtlasRow) *float64 { return r.OutputTokPerSPerGPU }, true},
		{"TTFT p50 (ms)", func(r *schema.AtlasRow) *float64 { return r.TTFTP50Ms }, false},
	}
	// Up to five mbt values both metrics share one table; more get a table per metric.
	tables := [][]heatMetric{metrics}
	if k > 5 {
		tables = [][]heatMetric{metrics[:1], metrics[1:]}
	}
	for _, c := range v.opt.heatmapCs {
		d.keep(7 + 14)
		d.heading(fmt.Sprintf("Concurrency C = %d", c))
		for _, ms := range tables {
			cols, groups, rows := heatTable(v, index, c, ms)
			d.table(cols, groups, rows)
			d.space(1.5)
		}
		d.space(1)
	}
}

// heatMetric is one metric a heatmap colours: higher or lower is better.
type heatMetric struct {
	name   string
	get    func(*schema.AtlasRow) *float64
	higher bool
}

// heatTable lays out one heatmap table at concurrency c: a variant column, then one column per
// mbt for each metric, each metric shaded over its own range.
func heatTable(v *view, index map[string]*schema.AtlasRow, c int, ms []heatMetric) ([]tcol, []tgroup, [][]tcell) {
	k := len(v.mbts)
	w := max(1, 30/(len(ms)*k))
	labelW := max(4, gridSize-len(ms)*k*w)
	cols := []tcol{{head: "Variant", w: labelW}}
	groups := []tgroup{{head: "", w: labelW}}
	for _, m := range ms {
		for _, mbt := range v.mbts {
			cols = append(cols, tcol{head: mbtName(mbt), w: w, align: align.Center})
		}
		groups = append(groups, tgroup{head: m.name, w: k * w})
	}
	grid := make([][]heatCell, len(v.variants))
	// shading ranges per (metric, workload shape): one shape is never ranked against another
	type rangeKey struct {
		metric int
		shape  string
	}
	lo, hi := map[rangeKey]float64{}, map[rangeKey]float64{}
	for vi, x := range v.variants {
		for mi, m := range ms {
			for _, mbt := range v.mbts {
				hc := heatCellOf(index[fmt.Sprintf("%v|%d|%d", x.key, mbt, c)], m.get)
				if rk := (rangeKey{mi, x.key.Shape}); !hc.grey && hc.value != nil {
					l, ok := lo[rk]
					if !ok {
						l, hi[rk] = math.Inf(1), math.Inf(-1)
					}
					lo[rk], hi[rk] = math.Min(l, *hc.value), math.Max(hi[rk], *hc.value)
				}
				grid[vi] = append(grid[vi], hc)
			}
		}
	}
	var rows [][]tcell
	for vi, x := range v.variants {
		row := []tcell{{text: x.label}}
		for j, hc := range grid[vi] {
			rk := rangeKey{j / k, x.key.Shape}
			row = append(row, heatTCell(hc, lo[rk], hi[rk], ms[rk.metric].higher))
		}
		rows = append(rows, row)
	}
	return cols, groups, rows
}

func heatTCell(hc heatCell, lo, hi float64, higher bool) tcell {
	if hc.grey {
		txt := hc.text
		if hc.value != nil {
			txt = fnum(*hc.value)
		}
		return tcell{text: txt, bg: &colorGrey, fg: &colorMuted, exact: hc.value}
	}
	if !(hi > lo) { // nothing to compare it with in its shape: unshaded
		return tcell{text: fnum(*hc.value), exact: hc.value}
	}
	t := (*hc.value - lo) / (hi - lo)
	if !higher {
		t = 1 - t
	}
	bg, fg := shade(t)
	return tcell{text: fnum(*hc.value), bg: &bg, fg: &fg, exact: hc.value}
}
