package report

import (
	"fmt"
	"slices"

	"github.com/perfdag/perfdag/engine/plural"
	"github.com/perfdag/perfdag/schema"

	"github.com/johnfercher/maroto/v2/pkg/consts/align"
	"github.com/johnfercher/maroto/v2/pkg/consts/fontstyle"
)

// championPage is page 8: the production recommendation, the ranked baseline and top-X arms
// under the focus metric and TPOT SLO, and what each arm's rigor rests on.
func championPage(d sink, v *view, _ *artwork) {
	d.newPage(TitleChampion)
	c := v.in.Champion
	if c == nil {
		d.missing("No champion selection (champion.json) in this campaign.")
		return
	}
	champ := c.Champion
	if champ == "" {
		champ = "none (no arm meets the SLO)"
	}
	d.para("Champion: "+champ, 12, fontstyle.Bold, nil)
	if c.Recommendation != "" {
		d.para(c.Recommendation, 9.5, fontstyle.Normal, nil)
	}
	under := fmt.Sprintf("under a TPOT SLO of %s ms", stated(c.TPOTSLOMs))
	if c.SLO != nil {
		under = fmt.Sprintf("(goodput: requests per second that met every per-request target of the cells' slo, %s; every point ranked, none filtered by its mean TPOT; Points meeting SLO: those with a good request)", c.SLO)
	}
	d.para(fmt.Sprintf("Focus metric %s %s; baseline %s; %s considered, top %d shown. The recommendation is evidence for delivery %s only.",
		c.FocusMetric, under, first(c.Baseline, "not marked"), plural.N(c.ArmsConsidered, "arm"), c.TopX, first(c.Delivery, "not recorded")),
		7.5, fontstyle.Normal, &colorMuted)
	d.space(1)
	cols := []tcol{
		{head: "Rank", w: 2, align: align.Right}, {head: "Arm", w: 7}, {head: "Engine, delivery", w: 5},
		{head: "Best point", w: 8}, {head: "Points meeting SLO", w: 3, align: align.Right},
		{head: "Focus value", w: 3, align: align.Right}, {head: "TPOT (ms)", w: 3, align: align.Right},
		{head: "TTFT mean (ms)", w: 3, align: align.Right}, {head: v.dev("tok/s /GPU"), w: 3, align: align.Right},
		{head: "vs baseline", w: 3, align: align.Right},
	}
	if c.SLO != nil { // the best point's SLO attainment beside its TPOT
		cols = slices.Insert(cols, 7, tcol{head: "Attained", w: 3, align: align.Right})
		cols[1].w, cols[3].w = 6, 6 // the grid is 40 wide
	}
	var rows [][]tcell
	for _, a := range c.Arms {
		rank := fmt.Sprint(a.Rank)
		if a.Rank == 0 {
			rank = "-"
		}
		arm := a.Arm
		if a.Baseline {
			arm += " (baseline)"
		}
		engine := a.Engine
		if a.EngineVersion != "" {
			engine += " " + a.EngineVersion
		}
		best := "no point meets the SLO"
		if a.CellID != "" {
			best = fmt.Sprintf("%s c%d", a.CellID, a.Concurrency)
		}
		delta := "-"
		if a.DeltaVsBaseline != nil {
			delta = fmt.Sprintf("%+.1f %%", *a.DeltaVsBaseline)
		}
		row := []tcell{plain(rank), {text: arm, bold: a.Arm == c.Champion}, plain(engine + ", " + a.Delivery), plain(best),
			plain(fmt.Sprintf("%d of %d", a.PointsMeetSLO, a.Points)), plain(focus(a)), plain(num(a.TPOTMs)), plain(num(a.TTFTAvgMs)), plain(num(a.OutputTokPerGPU)), plain(delta)}
		if c.SLO != nil {
			row = slices.Insert(row, 7, plain(attainment(a.SLOAttainment)))
		}
		if a.Arm == c.Champion {
			for i := range row {
				row[i].bg = &colorHeader
			}
		}
		rows = append(rows, row)
	}
	d.table(cols, nil, rows)
	if c.SeparationNote != "" {
		d.space(1)
		col := &colorMuted
		if c.Separated != nil && !*c.Separated {
			col = &colorWarn
		}
		d.para("Separation: "+c.SeparationNote+". Focus values show ± the half-width of their 95 % interval (docs/report.md).", 7.5, fontstyle.Normal, col)
	}
	d.space(2)
	d.heading("Speed-of-light rigor per arm")
	for _, a := range c.Arms {
		d.para(fmt.Sprintf("%s: sol_rigor %s - %s", a.Arm, first(a.SolRigor, "?"), first(a.RigorNote, "no note")), bodySize, fontstyle.Normal, nil)
	}
	for _, w := range c.Warnings {
		if w == c.SeparationNote {
			continue // printed under the table
		}
		d.para("Warning: "+w, 7.5, fontstyle.Italic, &colorWarn)
	}
}

// focus is an arm's focus value with ± its 95 % interval's half-width when it has one.
func focus(a schema.ChampionArm) string {
	if a.FocusValue == nil || a.FocusInterval == nil {
		return sig(a.FocusValue)
	}
	return sig(a.FocusValue) + " ±" + sig(schema.F(a.FocusInterval.HalfWidth()))
}
