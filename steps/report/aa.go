package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/johnfercher/maroto/v2/pkg/consts/align"
	"github.com/johnfercher/maroto/v2/pkg/consts/fontstyle"

	"github.com/perfdag/perfdag/schema"
)

// aaRows returns the rows of AA-shaped cells, ordered by shape, concurrency and cell.
func aaRows(rows []schema.AtlasRow) []*schema.AtlasRow {
	var out []*schema.AtlasRow
	for i := range rows {
		if strings.HasPrefix(rows[i].Shape, "aa-") {
			out = append(out, &rows[i])
		}
	}
	slices.SortStableFunc(out, func(a, b *schema.AtlasRow) int {
		return cmp.Or(cmp.Compare(shapeRank(a.Shape), shapeRank(b.Shape)), cmp.Compare(a.Shape, b.Shape),
			cmp.Compare(a.Concurrency, b.Concurrency), cmp.Compare(a.CellID, b.CellID))
	})
	return out
}

// shapeRank orders AA shapes by size rather than by name (aa-1k, aa-10k, aa-100k).
func shapeRank(s string) int {
	switch s {
	case "aa-1k":
		return 0
	case "aa-10k":
		return 1
	case "aa-100k":
		return 2
	}
	return 3
}

// aaPage lists, per AA shape and concurrency, TTFT, TTFO with its coverage, AA output speed,
// output throughput and the reasoning field the stream carried.
func aaPage(d sink, v *view, _ *artwork) {
	d.newPage(TitleAA)
	rows := aaRows(v.rows)
	if len(rows) == 0 {
		d.missing("No AA-shaped cells (aa-1k, aa-10k, aa-100k) in this campaign.")
		return
	}
	d.para("TTFT counts the first token of any kind, reasoning included; TTFO counts the first answer token and is averaged over the requests that produced one, so it is always shown with its coverage (answered / valid requests). Output speed is AA's pooled (tokens - 1) / streaming time.",
		7.5, fontstyle.Normal, &colorMuted)
	cols := []tcol{
		{head: "Shape", w: 4}, {head: "Cell", w: 8}, {head: "C", w: 2, align: align.Right},
		{head: "TTFT mean (ms)", w: 4, align: align.Right}, {head: "TTFO mean (ms)", w: 4, align: align.Right},
		{head: "TTFO coverage", w: 4, align: align.Right}, {head: "Output speed (tok/s)", w: 4, align: align.Right},
		{head: "Output throughput (tok/s)", w: 4, align: align.Right}, {head: "Reasoning field", w: 6},
	}
	var out [][]tcell
	for _, r := range rows {
		reasoning := r.ReasoningField
		if reasoning == "" {
			reasoning = "none seen"
		}
		if hasFlag(r, schema.FlagReasoningParserSuspect) {
			reasoning += " (parser suspect)"
		}
		cov := tcell{text: pct(r.TTFOCoverage)}
		if r.TTFOCoverage != nil && *r.TTFOCoverage < 0.9 {
			cov.fg = &colorWarn
		}
		row := []tcell{plain(r.Shape), plain(r.CellID), plain(fmt.Sprint(r.Concurrency)),
			plain(num(r.TTFTAvgMs)), plain(num(r.TTFOAvgMs)), cov,
			plain(num(r.AAOutputSpeed)), plain(num(r.OutputTokPerS)), plain(reasoning)}
		if !r.PlotReady {
			for i := 3; i < len(row); i++ {
				row[i].bg = &colorGrey
			}
			row[3].text = first(pointStatus(r), r.CellStatus, "not plot-ready")
		}
		out = append(out, row)
	}
	d.table(cols, nil, out)
}
