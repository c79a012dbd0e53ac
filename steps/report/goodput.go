package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/johnfercher/maroto/v2/pkg/consts/align"
	"github.com/johnfercher/maroto/v2/pkg/consts/fontstyle"

	"github.com/perfdag/perfdag/schema"
)

// missingGoodput is the goodput page's line when no cell declares a per-request slo.
const missingGoodput = "No cell declares a per-request slo: (ttft_ms, tpot_ms, latency_ms)."

// goodputRows are the rows of cells with a per-request slo, by cell then concurrency.
func goodputRows(rows []schema.AtlasRow) []*schema.AtlasRow {
	var out []*schema.AtlasRow
	for i := range rows {
		if rows[i].Goodput != nil {
			out = append(out, &rows[i])
		}
	}
	slices.SortStableFunc(out, func(a, b *schema.AtlasRow) int {
		return cmp.Or(cmp.Compare(a.CellID, b.CellID), cmp.Compare(a.Concurrency, b.Concurrency))
	})
	return out
}

// goodputPage shows, per cell with a per-request slo, each point's goodput and SLO attainment
// with their 95 % intervals beside its request throughput, and which target the misses missed.
func goodputPage(d sink, v *view, _ *artwork) {
	d.newPage(TitleGoodput)
	rows := goodputRows(v.rows)
	if len(rows) == 0 {
		d.missing(missingGoodput)
		return
	}
	d.para("A request is good when it is valid and meets every per-request target of its cell's slo: TTFT, TPOT = (latency - TTFT) / (tokens - 1) "+
		"(a one-token answer has none and is judged by the other targets only) and latency, each at most its target. Goodput is good requests per second "+
		"of the point's window (DistServe; vLLM --goodput, AIPerf); SLO attainment is good / every request of the window, failed ones included. "+
		"A spaced ± is the half-width of the 95 % interval (docs/statistics.md).", 7.5, fontstyle.Normal, &colorMuted)
	cols := []tcol{
		{head: "C", w: 2, align: align.Right}, {head: "Requests (failed)", w: 5, align: align.Right},
		{head: "Good", w: 3, align: align.Right}, {head: "SLO attainment", w: 6, align: align.Right},
		{head: "Goodput (req/s)", w: 6, align: align.Right}, {head: "Throughput (req/s)", w: 5, align: align.Right},
		{head: "Missed TTFT", w: 3, align: align.Right}, {head: "Missed TPOT", w: 3, align: align.Right},
		{head: "Missed latency", w: 3, align: align.Right}, {head: "No TPOT (1 token)", w: 4, align: align.Right},
	}
	for i := 0; i < len(rows); {
		cell := rows[i].CellID
		d.space(1)
		d.heading(fmt.Sprintf("%s: %s", cell, rows[i].Goodput.SLO))
		var out [][]tcell
		var notes []string
		for ; i < len(rows) && rows[i].CellID == cell; i++ {
			r := rows[i]
			g := r.Goodput
			row := []tcell{plain(strconv.Itoa(r.Concurrency)), plain(fmt.Sprintf("%d (%d)", g.Requests, g.Failed)),
				plain(strconv.Itoa(g.Good)), plain(attainmentWithInterval(r)), plain(goodputWithInterval(r)),
				plain(sig(r.RequestThroughput)), plain(strconv.Itoa(g.MissedTTFT)), plain(strconv.Itoa(g.MissedTPOT)),
				plain(strconv.Itoa(g.MissedLatency)), plain(strconv.Itoa(g.NoTPOT))}
			if g.Unknown != "" {
				row = []tcell{plain(strconv.Itoa(r.Concurrency)), plain("-"), plain("-"), plain("unknown"), plain("unknown"),
					plain(sig(r.RequestThroughput)), plain("-"), plain("-"), plain("-"), plain("-")}
				notes = append(notes, fmt.Sprintf("c%d: %s", r.Concurrency, g.Unknown))
			}
			if s := g.SourceGoodputReqS; s != nil {
				notes = append(notes, fmt.Sprintf("c%d: the imported file's own goodput (under the SLO it was run with): %s req/s", r.Concurrency, fnum(*s)))
			}
			if st := pointStatus(r); st == "failed" || st == "partial" {
				row[0].text += " (" + st + ")"
			}
			out = append(out, row)
		}
		d.table(cols, nil, out)
		for _, n := range notes {
			d.para(n, 7.5, fontstyle.Italic, nil)
		}
	}
}

// attainmentWithInterval is a row's SLO attainment in percent, ± its interval's half-width.
func attainmentWithInterval(r *schema.AtlasRow) string {
	s := attainment(r.SLOAttainment)
	if iv, ok := r.Intervals["slo_attainment"]; ok && r.SLOAttainment != nil {
		s += " ± " + strconv.FormatFloat(100*iv.HalfWidth(), 'f', 1, 64) + " %"
	}
	return s
}

// goodputWithInterval is a row's goodput, ± its interval's half-width.
func goodputWithInterval(r *schema.AtlasRow) string {
	if r.GoodputReqS == nil {
		return "n/a"
	}
	s := sig(r.GoodputReqS)
	if iv, ok := r.Intervals["goodput_req_s"]; ok {
		s += " ± " + sig(schema.F(iv.HalfWidth()))
	}
	return s
}

// sig formats a rate as the tables print figures, but a value under 1 with three significant
// digits (0.0862 req/s, not 0.09): request rates of long answers are small numbers.
func sig(v *float64) string {
	if v == nil || math.IsNaN(*v) || math.IsInf(*v, 0) {
		return "n/a"
	}
	if a := math.Abs(*v); a > 0 && a < 1 {
		return strconv.FormatFloat(*v, 'g', 3, 64)
	}
	return fnum(*v)
}
