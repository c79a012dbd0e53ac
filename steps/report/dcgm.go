package report

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/johnfercher/maroto/v2/pkg/consts/align"
	"github.com/johnfercher/maroto/v2/pkg/consts/fontstyle"
	"gonum.org/v1/plot/vg"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/report/charts"
)

const dcgmChartH = 50.0

// dcgmRow is one (cell, point) of DCGM window means.
type dcgmRow struct {
	cell                    string
	load                    schema.Load
	c, gpus                 int // c: the point's concurrency (a rate point's cap)
	sm, tensor, dram, power *float64
	tokW                    *float64
	grounded                bool
	source                  string
}

// dcgmTable joins the cells' dcgm_correlation.json files; without them it falls back to the
// DCGM fields the atlas carries.
func dcgmTable(in Input, v *view) []dcgmRow {
	var out []dcgmRow
	byPoint, byConc := map[string]*schema.AtlasRow{}, map[string]*schema.AtlasRow{}
	for i := range v.all {
		r := &v.all[i]
		byPoint[r.CellID+"|"+r.PointLoad().Key()] = r
		byConc[fmt.Sprintf("%s|%d", r.CellID, r.Concurrency)] = r
	}
	for _, corr := range in.DCGM {
		for _, p := range corr.Points {
			row := dcgmRow{cell: corr.Cell, load: p.PointLoad(), c: p.Concurrency, gpus: p.GPUs, sm: p.SMActive, tensor: p.TensorActive,
				dram: p.DRAMActive, power: p.PowerWattsPerGPU, tokW: p.TokensPerWatt, grounded: corr.DCGMGrounded, source: corr.Source}
			a := byPoint[corr.Cell+"|"+row.load.Key()]
			if a == nil && p.Load.IsZero() { // a correlation written before points were keyed by load names only the concurrency
				if a = byConc[fmt.Sprintf("%s|%d", corr.Cell, p.Concurrency)]; a != nil {
					row.load = a.PointLoad()
				}
			}
			if a != nil && row.tokW == nil {
				row.tokW = a.TokensPerWatt
			}
			out = append(out, row)
		}
	}
	if len(out) == 0 {
		for i := range v.all {
			r := &v.all[i]
			if r.SMActive == nil && r.TensorActive == nil && r.DRAMActive == nil && r.PowerWattsPerGPU == nil {
				continue
			}
			out = append(out, dcgmRow{cell: r.CellID, load: r.PointLoad(), c: r.Concurrency, gpus: r.GPUs, sm: r.SMActive, tensor: r.TensorActive,
				dram: r.DRAMActive, power: r.PowerWattsPerGPU, tokW: r.TokensPerWatt, grounded: r.DCGMGrounded, source: "atlas"})
		}
	}
	// Cells in the report's variant order (then by id), points by concurrency.
	order := func(cell string) int {
		for i, x := range v.variants {
			for j := range v.rows {
				if v.rows[j].CellID == cell {
					if keyOf(&v.rows[j]) == x.key {
						return i
					}
					break
				}
			}
		}
		return len(v.variants)
	}
	rank := map[string]int{}
	for _, r := range out {
		if _, ok := rank[r.cell]; !ok {
			rank[r.cell] = order(r.cell)
		}
	}
	slices.SortStableFunc(out, func(a, b dcgmRow) int {
		return cmp.Or(cmp.Compare(rank[a.cell], rank[b.cell]), cmp.Compare(a.cell, b.cell), a.load.Compare(b.load))
	})
	return out
}

func dcgmCharts(v *view, art *artwork) []job {
	rows := dcgmTable(v.in, v)
	if len(rows) == 0 {
		return nil
	}
	return []job{func() error {
		var cells []string
		for _, r := range rows {
			if !slices.Contains(cells, r.cell) {
				cells = append(cells, r.cell)
			}
		}
		panes := []struct {
			title, y string
			get      func(dcgmRow) *float64
			scale    float64
		}{
			{"Tokens per watt vs ", "output tokens/J (tok/s per W)", func(r dcgmRow) *float64 { return r.tokW }, 1},
			{"DRAM active vs ", "DRAM active (% of time)", func(r dcgmRow) *float64 { return r.dram }, 100},
		}
		for _, rate := range loadKinds(rows) { // concurrency points, then rate points: never one axis
			kind := "concurrency"
			axis := charts.Axis{Label: "concurrency (requests in flight)", Log: true, Ticks: loadTicks(rows, false)}
			if rate {
				kind, axis = "request rate", charts.Axis{Label: loadAxisLabel(true), Log: true, Ticks: loadTicks(rows, true)}
			}
			var figs [2]*figure
			for i, p := range panes {
				var series []charts.Series
				for ci, cell := range cells {
					s := charts.Series{Name: cell, Color: charts.Color(ci), Marker: charts.Marker(ci % 2), Line: true}
					for _, r := range rows {
						if r.cell == cell && r.load.IsRate() == rate {
							if y := p.get(r); y != nil {
								s.Points = append(s.Points, charts.Point{X: loadX(r.load), Y: *y * p.scale, Tip: fmt.Sprintf("cell %s, %s", cell, loadTip(r.load))})
							}
						}
					}
					series = append(series, s)
				}
				ch := charts.Chart{Title: p.title + kind, X: axis, Y: charts.Axis{Label: p.y},
					Series: series, Width: vg.Length(contentW/2) * vg.Millimeter, Height: vg.Length(dcgmChartH) * vg.Millimeter,
					FontSize: 6.5, Empty: "not measured"}
				if i == 1 {
					ch.Y.Min, ch.Y.Max = 0, 100
				}
				f, err := art.chartFig(ch)
				if err != nil {
					return fmt.Errorf("dcgm chart: %w", err)
				}
				figs[i] = f
				if i == 0 && art.dcgmLegend == nil {
					lf, err := art.legendFig(series, vg.Length(contentW)*vg.Millimeter, 7)
					if err != nil {
						return fmt.Errorf("dcgm legend: %w", err)
					}
					art.dcgmLegend = lf
				}
			}
			art.dcgm = append(art.dcgm, figs)
		}
		return nil
	}}
}

// loadKinds says which load axes a page's rows need, in order: concurrency (false) when some
// row is a concurrency point, request rate (true) when some is a rate point.
func loadKinds(rows []dcgmRow) []bool {
	var out []bool
	if slices.ContainsFunc(rows, func(r dcgmRow) bool { return !r.load.IsRate() }) {
		out = append(out, false)
	}
	if slices.ContainsFunc(rows, func(r dcgmRow) bool { return r.load.IsRate() }) {
		out = append(out, true)
	}
	return out
}

// dcgmPage shows per cell and point the DCGM window means (SM, tensor, DRAM active, power) and
// tokens per watt.
func dcgmPage(d sink, v *view, art *artwork) {
	d.newPage(TitleDCGM)
	rows := dcgmTable(v.in, v)
	if len(rows) == 0 {
		d.missing("No DCGM data in this campaign.")
		return
	}
	d.para("Window means over each point's benchmark window, averaged over the endpoint's GPUs. Activity fields are DCGM duty cycles (share of time the unit was busy), not bytes or FLOPs. Tokens per watt = output tok/s / (power per GPU x GPUs).",
		7.5, fontstyle.Normal, &colorMuted)
	for i, figs := range art.dcgm {
		if i > 0 {
			d.space(2)
		}
		d.images(dcgmChartH, figs[0], figs[1])
	}
	d.images(art.dcgmLegend.h, art.dcgmLegend)
	cols := []tcol{
		{head: "Cell", w: 8}, {head: "C", w: 4, align: align.Right}, {head: "GPUs", w: 2, align: align.Right},
		{head: "SM active", w: 4, align: align.Right}, {head: "Tensor active", w: 4, align: align.Right},
		{head: "DRAM active", w: 4, align: align.Right}, {head: "Power (W/GPU)", w: 4, align: align.Right},
		{head: "Tokens/W", w: 4, align: align.Right}, {head: "Source", w: 6},
	}
	var out [][]tcell
	for _, r := range rows {
		src := r.source
		if r.grounded {
			src += ", grounded"
		}
		out = append(out, []tcell{plain(r.cell), plain(loadCell(r.load)), plain(fmt.Sprint(r.gpus)),
			plain(pct(r.sm)), plain(pct(r.tensor)), plain(pct(r.dram)), plain(num(r.power)), plain(num(r.tokW)), plain(src)})
	}
	d.table(cols, nil, out)
}

// loadTicks are the distinct concurrencies (or request rates) of the DCGM rows, the X ticks of
// their charts.
func loadTicks(rows []dcgmRow, rate bool) []float64 {
	var out []float64
	for _, r := range rows {
		if x := loadX(r.load); r.load.IsRate() == rate && !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	slices.Sort(out)
	return out
}
