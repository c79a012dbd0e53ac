package smoke

import (
	_ "embed"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/analysis/champion"
	"github.com/perfdag/perfdag/steps/analysis/roofline"
	"github.com/perfdag/perfdag/steps/analysis/tpm"
)

// DCGM returns the DCGM correlation of every cell at mbt 8192 (one frozen capture per
// variant), matching the DCGM fields on those cells' atlas rows, ordered by cell id as the
// files are read back.
func DCGM() []schema.DCGMCorrelation {
	var out []schema.DCGMCorrelation
	for _, v := range variants {
		id := cellID(v, dcgmMBT)
		corr := schema.DCGMCorrelation{Schema: "dcgm_correlation_v1", Cell: id, Source: "frozen",
			SourceDetail: "smoke fixture (synthetic window means)", DCGMGrounded: true, SolRigor: schema.RigorL3}
		for _, c := range concurrencies {
			m := model(v, dcgmMBT, c, jitter(id, c))
			p := dcgmPoint(v, c, round(m.outTokPerS, 2))
			corr.Points = append(corr.Points, p)
		}
		out = append(out, corr)
	}
	slices.SortFunc(out, func(a, b schema.DCGMCorrelation) int { return strings.Compare(a.Cell, b.Cell) })
	return out
}

// TPM is the TPM and cost rollup of the fixture atlas, computed by steps/analysis/tpm with the
// default SLA and cost table.
func TPM(c *schema.Campaign) schema.TPMSummary {
	return tpm.Summarize(Campaign, tpm.ConfigFor(c), Atlas())
}

//go:embed moe_config.json
var moeConfig []byte

// Roofline import of the fixture: GB300 TP4 NVFP4 with an FP8 KV cache, cold cache.
const (
	rooflineID  = "gb300-tp4-nvfp4"
	rooflineISL = 1024
	rooflineOSL = 1024
)

var (
	decodeConcs = []int{1, 2, 4, 8, 16, 32, 64, 128, 192}
	prefillISLs = []int{1024, 2048, 4096, 8192, 16384}
)

// Roofline returns the fixture's roofline sweep: a decode concurrency sweep and a prefill ISL
// sweep of GB300 TP4 NVFP4 placed with steps/analysis/roofline's analytical model of a GLM-4.5-shaped
// MoE (moe_config.json), with DCGM means derived from the delivered bandwidth.
func Roofline() (schema.RooflineSweep, error) {
	shape, err := roofline.ParseShape("moe_config.json", moeConfig)
	if err != nil {
		return schema.RooflineSweep{}, fmt.Errorf("smoke roofline: %w", err)
	}
	shape.Source = "steps/report/smoke/moe_config.json"
	hw, err := roofline.HardwareFor("GB300", "NVFP4")
	if err != nil {
		return schema.RooflineSweep{}, fmt.Errorf("smoke roofline: %w", err)
	}
	bw, err := roofline.BytesPerWeight("NVFP4")
	if err != nil {
		return schema.RooflineSweep{}, fmt.Errorf("smoke roofline: %w", err)
	}
	const bkv, tp = 1.0, 4
	s := schema.RooflineSweep{
		Schema: schema.SchemaRooflineSweep, Campaign: Campaign, ImportID: rooflineID,
		DecodeCell: rooflineID + "-decode", PrefillCell: rooflineID + "-prefill",
		Hardware: hw.Name, Quant: "NVFP4", TensorParallel: tp, CacheMode: "cold", WeightBytes: bw, KVBytes: bkv,
		Provenance: schema.ExperimentProvenance{Schema: schema.SchemaProvenance, Engine: Engine, EngineVersion: Version,
			Commit: "0000000 (fixture)", Delivery: Delivery, Model: Model, Hardware: hw.Name, TensorParallel: tp,
			Quant: "NVFP4", KVCacheDtype: "fp8", CaptureDate: "2026-01-15"},
		Model: shape, HBMLabel: schema.HBMBytesLabel, DRAMLabel: schema.DRAMActiveLabel,
	}
	base := variants[6] // GB300 NVFP4 TP4 EP, MTP off
	for _, c := range decodeConcs {
		// Decode is bandwidth-bound: steps/s = efficiency × HBM bytes/s ÷ bytes per step, with the
		// efficiency rising from 35 % at batch 1 towards 80 % as the batch hides launch overheads.
		ctxTok := rooflineISL + rooflineOSL/2
		step := roofline.DecodeStep(shape, c, ctxTok, bw, bkv)
		eff := (0.35 + 0.45*float64(c)/(float64(c)+16)) / jitter(rooflineID, c)
		stepsPerS := eff * hw.HBMTBs * 1e12 * tp / step.Bytes
		tok := round(stepsPerS*float64(c), 2)
		m := model(base, dcgmMBT, c, jitter(rooflineID, c))
		achieved := roofline.AchievedTFLOPsPerGPU(step.FLOP/float64(c), tok, tp)
		hbm := roofline.DeliveredHBMPct(step, tok, c, tp, hw)
		dram := math.Min(0.97, hbm/100*1.12+0.05)
		s.Rows = append(s.Rows, schema.RooflineRow{
			Schema: schema.SchemaRoofline, Campaign: Campaign, ImportID: rooflineID, CellID: s.DecodeCell,
			Phase: schema.RooflinePhaseDecode, Concurrency: c, ISL: rooflineISL, OSL: rooflineOSL, Context: ctxTok,
			NumPrompts: max(10, 4*c), Hardware: hw.Name, Quant: "NVFP4", TensorParallel: tp,
			OutputTokPerS: &tok, TTFTAvgMs: f(m.ttftMs/8, 2), ITLAvgMs: f(1000/stepsPerS, 3),
			FLOPPerStep: step.FLOP, BytesPerStep: step.Bytes, ArithmeticIntensity: round(step.AI(), 4),
			RidgeFLOPPerByte: hw.Ridge(), Bound: bound(step.AI(), hw.Ridge()),
			AchievedTFLOPsPerGPU: f(achieved, 3), PeakTFLOPsPerGPU: hw.PeakTFLOPs,
			ComputePct: f(achieved/hw.PeakTFLOPs*100, 3), PeakHBMTBs: hw.HBMTBs,
			HBMBWDeliveredPct: f(hbm, 2), DRAMActivePct: f(dram*100, 2),
			SMActive: f(0.3+0.55*float64(c)/(float64(c)+24), 4), TensorActive: f(0.1+0.4*float64(c)/(float64(c)+48), 4),
			DRAMActive: f(dram, 4), NVLinkBytesPerS: f(2e9+float64(c)*3.5e8, 0),
		})
	}
	for _, n := range prefillISLs {
		in := round(base.hw.prefill*float64(n)/float64(n+1500), 1)
		step := roofline.PrefillStep(shape, n, bw, bkv)
		achieved := roofline.AchievedTFLOPsPerGPU(step.FLOP/float64(n), in, tp)
		sm := 0.55 + 0.4*float64(n)/float64(n+4096)
		s.Rows = append(s.Rows, schema.RooflineRow{
			Schema: schema.SchemaRoofline, Campaign: Campaign, ImportID: rooflineID, CellID: s.PrefillCell,
			Phase: schema.RooflinePhasePrefill, Concurrency: 1, ISL: n, Context: n, NumPrompts: 20,
			Hardware: hw.Name, Quant: "NVFP4", TensorParallel: tp, InputTokPerS: &in, TTFTAvgMs: f(float64(n)/in*1000, 2),
			FLOPPerStep: step.FLOP, BytesPerStep: step.Bytes, ArithmeticIntensity: round(step.AI(), 4),
			RidgeFLOPPerByte: hw.Ridge(), Bound: bound(step.AI(), hw.Ridge()),
			AchievedTFLOPsPerGPU: f(achieved, 3), PeakTFLOPsPerGPU: hw.PeakTFLOPs,
			ComputePct: f(achieved/hw.PeakTFLOPs*100, 3), PeakHBMTBs: hw.HBMTBs,
			DRAMActivePct: f(35, 2), SMActive: f(sm, 4), TensorActive: f(sm*0.7, 4), DRAMActive: f(0.35, 4),
		})
	}
	return s, nil
}

func bound(ai, ridge float64) string {
	if ai < ridge {
		return "memory"
	}
	return "compute"
}

// Champion is champion.json of the fixture, selected by steps/analysis/champion: every deployment is an
// arm (its cell id without the mbt), the H100 FP8 TP16 EP arm is the baseline, and arms are
// ranked by output tok/s/GPU under the default 50 ms TPOT SLO.
func Champion() (schema.Champion, error) {
	sel, err := champion.NewSelector(Campaign, champion.Options{})
	if err != nil {
		return schema.Champion{}, fmt.Errorf("smoke champion: %w", err)
	}
	rows := Atlas()
	for i := range rows {
		if err := sel.Add(&rows[i]); err != nil {
			return schema.Champion{}, fmt.Errorf("smoke champion: %w", err)
		}
	}
	c, err := sel.Result()
	if err != nil {
		return schema.Champion{}, fmt.Errorf("smoke champion: %w", err)
	}
	return c, nil
}

func armName(v variant) string {
	id := cellID(v, 0)
	return id[:len(id)-len("-mbt0")]
}
