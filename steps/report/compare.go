package report

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/johnfercher/maroto/v2/pkg/consts/align"
	"github.com/johnfercher/maroto/v2/pkg/consts/fontstyle"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/analysis/atlas"
	"github.com/perfdag/perfdag/steps/measure/benchfile"
)

// compareKey is what a measured and an imported point must share to be compared: the
// endpoint, the workload (shape and token budgets) and the concurrency.
type compareKey struct {
	Endpoint    string
	Shape       string
	ISL, OSL    int
	Concurrency int
}

// compareGroup is one measured point and the imported points of the same key.
type compareGroup struct {
	key      compareKey
	measured []schema.AtlasRow // perfdag's own points (usually one)
	imported []schema.AtlasRow
}

// compareMetric is one compared row: its label and how to read it from an atlas row.
type compareMetric struct {
	name string
	get  func(*schema.AtlasRow) *float64
}

// compareMetrics are the metrics the side-by-side page compares, in order.
var compareMetrics = []compareMetric{
	{"TTFT p50 (ms)", func(r *schema.AtlasRow) *float64 { return r.TTFTP50Ms }},
	{"TTFT p90 (ms)", func(r *schema.AtlasRow) *float64 { return r.TTFTP90Ms }},
	{"ITL mean (ms)", func(r *schema.AtlasRow) *float64 { return r.ITLAvgMs }},
	{"ITL p50 (ms)", func(r *schema.AtlasRow) *float64 { return r.ITLP50Ms }},
	{"E2E latency mean (ms)", func(r *schema.AtlasRow) *float64 { return r.RequestLatencyAvgMs }},
	{"E2E latency p50 (ms)", func(r *schema.AtlasRow) *float64 { return r.RequestLatencyP50Ms }},
	{"Output tok/s", func(r *schema.AtlasRow) *float64 { return r.OutputTokPerS }},
	{"Request throughput (req/s)", func(r *schema.AtlasRow) *float64 { return r.RequestThroughput }},
}

// isImported says whether an atlas row was read from another tool's output.
func isImported(r *schema.AtlasRow) bool {
	return r.Backend == benchfile.SourceAIPerf || r.Backend == benchfile.SourceVLLM || r.Backend == benchfile.SourceSGLang
}

// compareKeyOf finds a row's endpoint and workload in the campaign (the atlas row carries
// neither the endpoint nor the token budgets of a custom shape).
func compareKeyOf(c *schema.Campaign, r *schema.AtlasRow) compareKey {
	k := compareKey{Shape: r.Shape, Concurrency: r.Concurrency}
	if c == nil {
		return k
	}
	if i := slices.IndexFunc(c.Cells, func(cl schema.Cell) bool { return cl.ID == r.CellID }); i >= 0 {
		cl := c.Cells[i]
		k.Endpoint, k.ISL, k.OSL = cl.Endpoint, cl.Workload.InputTokens, cl.Workload.OutputTokens
		if cl.Workload.Shape != "" {
			k.Shape = cl.Workload.Shape
		}
	}
	if k.Endpoint == "" && len(c.Endpoints) == 1 {
		for name := range c.Endpoints {
			k.Endpoint = name
		}
	}
	return k
}

// compareGroups pairs measured and imported points of the same endpoint, shape and
// concurrency; groups lacking either side are left out. Only plot-ready rows take part.
func compareGroups(in Input) []compareGroup {
	by := map[compareKey]*compareGroup{}
	var keys []compareKey
	for i := range in.Atlas {
		r := in.Atlas[i]
		if !r.PlotReady || (r.Backend != atlas.BackendPerfdag && !isImported(&r)) {
			continue
		}
		k := compareKeyOf(in.Campaign, &r)
		g := by[k]
		if g == nil {
			g = &compareGroup{key: k}
			by[k] = g
			keys = append(keys, k)
		}
		if isImported(&r) {
			g.imported = append(g.imported, r)
		} else {
			g.measured = append(g.measured, r)
		}
	}
	slices.SortFunc(keys, func(a, b compareKey) int {
		return cmp.Or(cmp.Compare(a.Endpoint, b.Endpoint), cmp.Compare(a.Shape, b.Shape), cmp.Compare(a.ISL, b.ISL),
			cmp.Compare(a.OSL, b.OSL), cmp.Compare(a.Concurrency, b.Concurrency))
	})
	var out []compareGroup
	for _, k := range keys {
		g := by[k]
		if len(g.measured) == 0 || len(g.imported) == 0 {
			continue
		}
		byCell := func(a, b schema.AtlasRow) int { return cmp.Compare(a.CellID, b.CellID) }
		slices.SortFunc(g.measured, byCell)
		slices.SortFunc(g.imported, byCell)
		out = append(out, *g)
	}
	return out
}

// delta is imported − measured and its percentage of measured; nil where either is missing
// (or the measured value is zero, for the percentage).
func delta(measured, imported *float64) (d, pct *float64) {
	if measured == nil || imported == nil {
		return nil, nil
	}
	x := *imported - *measured
	d = &x
	if *measured != 0 {
		p := x / *measured * 100
		pct = &p
	}
	return d, pct
}

func signed(v *float64) string {
	if v == nil {
		return "n/a"
	}
	if *v > 0 {
		return "+" + fnum(*v)
	}
	return fnum(*v)
}

func signedPct(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf("%+.1f %%", *v)
}

// importLabel names an imported row's source: cell, tool (and version), where its statistics came from.
func importLabel(r *schema.AtlasRow) string {
	s := r.Backend
	if r.CellID != r.Backend {
		s = r.CellID + ": " + s
	}
	if v, ok := r.Extra["source_version"].(string); ok && v != "" {
		s += " " + v
	}
	if v, ok := r.Extra["stats_from"].(string); ok && v != "" {
		s += " (stats from " + v + ")"
	}
	return s
}

// importsPerTable is how many imported points share one table beside the measured column.
const importsPerTable = 3

// comparePage puts each measured point beside the imported points of the same endpoint,
// shape and concurrency, metric by metric.
func comparePage(d sink, v *view, _ *artwork) {
	d.newPage(TitleCompare)
	groups := compareGroups(v.in)
	if len(groups) == 0 {
		d.missing(missingCompare)
		return
	}
	d.para("Each table puts a point perfdag measured beside points imported from other tools' outputs for the same endpoint, shape and concurrency. "+
		"Delta = imported - measured; % = delta / measured. Statistics \"per-request\" were recomputed by perfdag from the file's per-request records; "+
		"\"aggregate\" are the file's own summary numbers; n/a: the file does not state it.", 7.5, fontstyle.Normal, &colorMuted)
	for _, g := range groups {
		shape := g.key.Shape
		if g.key.ISL > 0 || g.key.OSL > 0 {
			shape = fmt.Sprintf("%s %d/%d tokens", shape, g.key.ISL, g.key.OSL)
		}
		for _, m := range g.measured {
			for start := 0; start < len(g.imported); start += importsPerTable {
				part := g.imported[start:min(start+importsPerTable, len(g.imported))]
				d.heading(fmt.Sprintf("Endpoint %s, %s, concurrency %d", g.key.Endpoint, shape, g.key.Concurrency))
				compareTable(d, m, part)
				d.space(2)
			}
		}
	}
}

// compareTable is one measured point against up to importsPerTable imported ones.
func compareTable(d sink, m schema.AtlasRow, imported []schema.AtlasRow) {
	const metricW, measuredW, valW, deltaW, pctW = 7, 3, 4, 3, 3
	cols := []tcol{{head: "Metric", w: metricW}, {head: m.CellID, w: measuredW, align: align.Right}}
	groups := []tgroup{{head: "", w: metricW}, {head: "perfdag", w: measuredW}}
	for i := range imported {
		cols = append(cols, tcol{head: "Imported", w: valW, align: align.Right}, tcol{head: "Delta", w: deltaW, align: align.Right},
			tcol{head: "%", w: pctW, align: align.Right})
		groups = append(groups, tgroup{head: importLabel(&imported[i]), w: valW + deltaW + pctW})
	}
	var rows [][]tcell
	for _, mt := range compareMetrics {
		mv := mt.get(&m)
		row := []tcell{plain(mt.name), plain(num(mv))}
		for i := range imported {
			iv := mt.get(&imported[i])
			dv, pv := delta(mv, iv)
			row = append(row, plain(num(iv)), plain(signed(dv)), plain(signedPct(pv)))
		}
		rows = append(rows, row)
	}
	d.table(cols, groups, rows)
}
