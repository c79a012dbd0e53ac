package roofline

import (
	"fmt"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/analysis/atlas"
)

// decodeRow computes one decode point's roofline coordinates and its atlas row. The analytical
// context is ISL + OSL/2: the mean KV length a request holds over its decode.
func decodeRow(b *Bundle, r resolved, opt Options, cell string, d DecodePoint) (schema.RooflineRow, schema.AtlasRow, []string) {
	c, isl, osl, tok := *d.Concurrency, *d.ISL, *d.OSL, *d.OutputTokPerS
	ctxTok := isl + osl/2
	step := DecodeStep(b.Model, c, ctxTok, r.bw, r.bkv)
	flopPerTok := step.FLOP / float64(c)
	achieved := AchievedTFLOPsPerGPU(flopPerTok, tok, r.tp)
	rr := schema.RooflineRow{
		Schema: schema.SchemaRoofline, Campaign: opt.Campaign, ImportID: opt.ID, CellID: cell,
		Phase: schema.RooflinePhaseDecode, Concurrency: c, ISL: isl, OSL: osl, Context: ctxTok,
		NumPrompts: *d.NumPrompts, Hardware: r.hw.Name, Quant: r.quant, TensorParallel: r.tp,
		OutputTokPerS: schema.F(tok), TTFTAvgMs: d.TTFTAvgMs, ITLAvgMs: d.ITLAvgMs,
		FLOPPerStep: step.FLOP, BytesPerStep: step.Bytes, ArithmeticIntensity: step.AI(),
		RidgeFLOPPerByte: r.hw.Ridge(), Bound: bound(step.AI(), r.hw.Ridge()),
		AchievedTFLOPsPerGPU: schema.F(achieved), PeakTFLOPsPerGPU: r.hw.PeakTFLOPs,
		ComputePct: schema.F(achieved / r.hw.PeakTFLOPs * 100), PeakHBMTBs: r.hw.HBMTBs,
		HBMBWDeliveredPct: schema.F(DeliveredHBMPct(step, tok, c, r.tp, r.hw)),
	}
	ar := baseRow(r, opt, b.Provenance, cell, c)
	ar.Shape = "roofline-decode"
	ar.NumPrompts, ar.RequestCount = *d.NumPrompts, *d.NumPrompts
	ar.OutputTokPerS = schema.F(tok)
	ar.OutputTokPerSPerGPU = schema.F(tok / float64(r.tp))
	ar.MeanInputTokens, ar.MeanOutputTokens = schema.F(float64(isl)), schema.F(float64(osl))
	ar.TTFTAvgMs, ar.ITLAvgMs, ar.RequestThroughput = d.TTFTAvgMs, d.ITLAvgMs, d.RequestThroughput
	if d.ITLAvgMs != nil && *d.ITLAvgMs > 0 {
		ar.TokPerSPerUser = schema.F(1000 / *d.ITLAvgMs)
	}
	var warnings []string
	m := b.dcgmFor(schema.RooflinePhaseDecode, c, isl)
	if m == nil {
		warnings = append(warnings, fmt.Sprintf("%s: no DCGM means for decode concurrency %d isl %d: the point is not byte-grounded", DCGMFile, c, isl))
	}
	joinDCGM(&ar, &rr, m)
	ar.TokensPerWatt = atlas.TokensPerWatt(ar.OutputTokPerS, ar.PowerWattsPerGPU, ar.GPUs)
	if *d.NumPrompts < 2*c {
		rr.Flags = append(rr.Flags, schema.FlagSteadyWindowUndercount)
		ar.Flags = append(ar.Flags, schema.FlagSteadyWindowUndercount)
		warnings = append(warnings, fmt.Sprintf("%s: decode concurrency %d isl %d: num_prompts %d < 2 × concurrency: its throughput is undercounted (ramp/drain-dominated window)",
			DecodeFile, c, isl, *d.NumPrompts))
	}
	ar.PlotReady = ar.TTFTAvgMs != nil && *ar.TTFTAvgMs > 0 && ar.RequestThroughput != nil && ar.OutputTokPerSPerGPU != nil
	ar.Extra = extra(rr)
	return rr, ar, warnings
}

// prefillRow computes one prefill point: FLOP per prompt × prompts/s (= input tok/s ÷ ISL) ÷ GPUs.
// Delivered HBM % is left null: a prefill step is compute-bound and its byte count says little.
func prefillRow(b *Bundle, r resolved, opt Options, cell string, p PrefillPoint) (schema.RooflineRow, schema.AtlasRow, []string) {
	c, isl, in := prefillConc(p), *p.ISL, *p.InputTokPerS
	step := PrefillStep(b.Model, isl, r.bw, r.bkv)
	achieved := AchievedTFLOPsPerGPU(step.FLOP/float64(isl), in, r.tp)
	rr := schema.RooflineRow{
		Schema: schema.SchemaRoofline, Campaign: opt.Campaign, ImportID: opt.ID, CellID: cell,
		Phase: schema.RooflinePhasePrefill, Concurrency: c, ISL: isl, Context: isl, NumPrompts: *p.NumPrompts,
		Hardware: r.hw.Name, Quant: r.quant, TensorParallel: r.tp, InputTokPerS: schema.F(in), TTFTAvgMs: p.TTFTAvgMs,
		FLOPPerStep: step.FLOP, BytesPerStep: step.Bytes, ArithmeticIntensity: step.AI(),
		RidgeFLOPPerByte: r.hw.Ridge(), Bound: bound(step.AI(), r.hw.Ridge()),
		AchievedTFLOPsPerGPU: schema.F(achieved), PeakTFLOPsPerGPU: r.hw.PeakTFLOPs,
		ComputePct: schema.F(achieved / r.hw.PeakTFLOPs * 100), PeakHBMTBs: r.hw.HBMTBs,
	}
	ar := baseRow(r, opt, b.Provenance, cell, c)
	ar.Shape = "roofline-prefill"
	ar.NumPrompts, ar.RequestCount = *p.NumPrompts, *p.NumPrompts
	ar.TTFTAvgMs = p.TTFTAvgMs
	ar.MeanInputTokens = schema.F(float64(isl))
	var warnings []string
	m := b.dcgmFor(schema.RooflinePhasePrefill, c, isl)
	if m == nil {
		warnings = append(warnings, fmt.Sprintf("%s: no DCGM means for prefill concurrency %d isl %d: the point is not byte-grounded", DCGMFile, c, isl))
	}
	joinDCGM(&ar, &rr, m)
	if *p.NumPrompts < 2*c {
		rr.Flags = append(rr.Flags, schema.FlagSteadyWindowUndercount)
		ar.Flags = append(ar.Flags, schema.FlagSteadyWindowUndercount)
		warnings = append(warnings, fmt.Sprintf("%s: prefill concurrency %d isl %d: num_prompts %d < 2 × concurrency: steady-state window undercount",
			PrefillFile, c, isl, *p.NumPrompts))
	}
	ar.Extra = extra(rr)
	ar.Extra["input_tok_s"] = in
	return rr, ar, warnings
}

// extra carries the roofline coordinates onto the atlas row (atlas_v1.extra_json).
func extra(rr schema.RooflineRow) map[string]any {
	e := map[string]any{
		"phase": rr.Phase, "import_id": rr.ImportID, "isl": rr.ISL, "context": rr.Context,
		"arithmetic_intensity": rr.ArithmeticIntensity, "ridge_flop_per_byte": rr.RidgeFLOPPerByte,
		"flop_per_step": rr.FLOPPerStep, "bytes_per_step": rr.BytesPerStep, "bound": rr.Bound,
		"point_status": atlas.PointOK,
	}
	if rr.OSL > 0 {
		e["osl"] = rr.OSL
	}
	if rr.AchievedTFLOPsPerGPU != nil {
		e["achieved_tflops_per_gpu"] = *rr.AchievedTFLOPsPerGPU
	}
	if rr.HBMBWDeliveredPct != nil {
		e["hbm_bw_delivered_pct"] = *rr.HBMBWDeliveredPct
	}
	if rr.DRAMActivePct != nil {
		e["dram_active_pct"] = *rr.DRAMActivePct
	}
	return e
}

// writeCells writes both cells and the sweep through the campaign directory contract. Each
// file is replaced atomically; the step's checkpoint trusts them only once all are written.
func writeCells(campaignDir string, imp Imported) ([]campaigndir.CellFiles, error) {
	var decodeRows, prefillRows []schema.AtlasRow
	for _, r := range imp.Rows {
		if r.CellID == imp.DecodeCell {
			decodeRows = append(decodeRows, r)
		} else {
			prefillRows = append(prefillRows, r)
		}
	}
	decode, err := atlas.WriteCell(campaignDir, imp.DecodeCell, decodeRows, schema.CellFull)
	if err != nil {
		return nil, err
	}
	prefill, err := atlas.WriteCell(campaignDir, imp.PrefillCell, prefillRows, schema.CellFull)
	if err != nil {
		return nil, err
	}
	if decode.Sweep, err = campaigndir.WriteJSON(campaignDir, campaigndir.RooflineSweep(imp.DecodeCell), imp.Sweep); err != nil {
		return nil, err
	}
	decode.Source, prefill.Source = "roofline-import", "roofline-import"
	return []campaigndir.CellFiles{decode, prefill}, nil
}
