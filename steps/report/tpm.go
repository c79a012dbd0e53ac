package report

import (
	"cmp"
	"fmt"
	"math"
	"strings"

	"github.com/perfdag/perfdag/engine/plural"

	"github.com/johnfercher/maroto/v2/pkg/consts/align"
	"github.com/johnfercher/maroto/v2/pkg/consts/fontstyle"
	"gonum.org/v1/plot/vg"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/report/charts"
)

const tpmChartH = 62.0

// tpmLabel names a TPM group compactly.
func tpmLabel(k schema.TPMGroupKey) string {
	parts := []string{k.Hardware, k.Quant, tpPart(k.TensorParallel), k.ParallelStrategy}
	if k.MTP {
		parts = append(parts, "MTP")
	}
	if k.Shape != "" {
		parts = append(parts, k.Shape)
	}
	return cmp.Or(strings.Join(strings.Fields(strings.Join(parts, " ")), " "), "all cells")
}

func tpmCharts(v *view, art *artwork) []job {
	s := v.in.TPM
	if s == nil || len(s.Groups) == 0 {
		return nil
	}
	return []job{func() error {
		cats := make([]string, len(s.Groups))
		peak, sla := make([]float64, len(s.Groups)), make([]float64, len(s.Groups))
		for i, g := range s.Groups {
			cats[i] = fmt.Sprintf("G%d", i+1)
			peak[i] = g.Peak.OutputTPMPerGPU
			sla[i] = math.NaN()
			if g.SLA != nil {
				sla[i] = g.SLA.OutputTPMPerGPU
			}
		}
		bc := charts.BarChart{
			Title:      v.dev("Output TPM per GPU by group (G numbers as in the table)"),
			YLabel:     v.dev("output tokens/min per GPU"),
			Categories: cats,
			Groups: []charts.BarGroup{
				{Name: "peak (warm best case)", Color: charts.Color(0), Values: peak},
				{Name: fmt.Sprintf("SLA point (TTFT mean <= %s ms, TPOT mean <= %s ms)", stated(s.TTFTSLAMs), stated(s.TPOTSLAMs)), Color: charts.Color(1), Values: sla},
			},
			Width: vg.Length(contentW) * vg.Millimeter, Height: vg.Length(tpmChartH) * vg.Millimeter, FontSize: 7,
		}
		f, err := art.barFig(bc)
		if err != nil {
			return fmt.Errorf("tpm chart: %w", err)
		}
		art.tpm = f
		return nil
	}}
}

// tpmPage shows peak and SLA TPM per group at per-GPU, per-replica and per-node bases, with
// $/1M tokens and tokens per watt where power was measured.
func tpmPage(d sink, v *view, art *artwork) {
	d.newPage(TitleTPM)
	s := v.in.TPM
	if s == nil || len(s.Groups) == 0 {
		d.missing("No TPM summary (tpm_summary.json) in this campaign.")
		return
	}
	if s.Caveat != "" {
		d.para(s.Caveat, bodySize, fontstyle.Bold, nil)
	}
	node := " Per node = " + plural.N(s.GPUsPerNode, "GPU") + "."
	if v.device != "GPU" {
		node = "" // a GPUs-per-node figure means nothing for a CPU or unknown device
	}
	d.para(v.dev(fmt.Sprintf("TPM = tokens per minute = tok/s x 60. Peak = max output tok/s/GPU (warm best case); SLA point = the best point with TTFT mean <= %s ms and TPOT mean <= %s ms (the customer-commitment number).%s $/1M tokens = $/GPU-hour / (tok/s/GPU x 3600) x 1e6.",
		stated(s.TTFTSLAMs), stated(s.TPOTSLAMs), node)), 7.5, fontstyle.Normal, &colorMuted)
	d.images(tpmChartH, art.tpm)
	cols := []tcol{
		{head: "Group", w: 8}, {head: "Point", w: 3}, {head: "C", w: 3, align: align.Right},
		{head: "out tok/s/GPU", w: 3, align: align.Right}, {head: "out TPM/GPU", w: 3, align: align.Right},
		{head: "out TPM/replica", w: 3, align: align.Right}, {head: "out TPM/node", w: 3, align: align.Right},
		{head: "total TPM/GPU", w: 3, align: align.Right}, {head: "$/GPU-hour", w: 3, align: align.Right},
		{head: "$/1M out", w: 3, align: align.Right}, {head: "$/1M total", w: 3, align: align.Right},
		{head: "tok/W", w: 2, align: align.Right},
	}
	for i := range cols {
		cols[i].head = v.dev(cols[i].head)
	}
	var rows [][]tcell
	for i, g := range s.Groups {
		label := fmt.Sprintf("G%d %s", i+1, tpmLabel(g.TPMGroupKey))
		rows = append(rows, tpmRow(label, g.Peak, g.PeakCost, v.device == "GPU"))
		if g.SLA != nil && g.SLACost != nil {
			rows = append(rows, tpmRow("", *g.SLA, *g.SLACost, v.device == "GPU"))
			continue
		}
		note := "no point meets the SLA"
		if g.SLANote != "" {
			note = g.SLANote
		}
		row := []tcell{plain(""), plain("sla"), {text: note, fg: &colorWarn}}
		for range len(cols) - 3 {
			row = append(row, plain(""))
		}
		rows = append(rows, row)
	}
	d.table(cols, nil, rows)
	for _, g := range s.Groups {
		if g.PeakCost.RateEstimate {
			d.para(fmt.Sprintf("%s $/GPU-hour is an estimate (%s).", g.Hardware, g.PeakCost.RateSource), 7, fontstyle.Italic, &colorMuted)
			break
		}
	}
}

// tpmRow is one TPM point; perNode is false where a GPUs-per-node multiple means nothing (a
// CPU or unknown device), and the per-node cell says n/a.
func tpmRow(label string, r schema.TPMRow, c schema.CostRow, perNode bool) []tcell {
	rate := usd(c.USDPerGPUHour)
	if c.RateEstimate && c.USDPerGPUHour != nil {
		rate += " est."
	}
	node := "n/a"
	if perNode {
		node = big(&r.OutputTPMPerNode)
	}
	return []tcell{
		{text: label, bold: label != ""}, plain(r.Point), plain(loadCell(r.PointLoad())),
		plain(fnum(r.OutputTokPerSPerGPU)), plain(big(&r.OutputTPMPerGPU)),
		plain(big(&r.OutputTPMPerReplica)), plain(node), plain(big(r.TotalTPMPerGPU)),
		plain(rate), plain(usd(c.USDPer1MOutput)), plain(usd(c.USDPer1MTotal)), plain(num(c.TokensPerWatt)),
	}
}
