package laketest

import (
	"fmt"
	"time"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/analysis/atlas"
	"github.com/perfdag/perfdag/steps/analysis/tpm"
	"github.com/perfdag/perfdag/steps/lake"
)

// Spec describes a synthetic campaign. Numbers are deterministic functions of the cell,
// the concurrency and Variant, so a re-publish with another Variant changes every row.
type Spec struct {
	Campaign   string // slug stamped on every row
	Cells      int    // measured cells (hardware, TP, strategy, MTP cycle through them)
	Concs      int    // concurrencies per cell: 1, 2, 4, ...
	Variant    int    // perturbs the measured numbers
	Grounded   bool   // DCGM-grounded rows (sol_rigor L3), else L1 with no DCGM
	Undercount bool   // the first cell ran num_prompts = concurrency (steady_window_undercount)
	FailedCell bool   // one more cell, failed: no plot-ready point
	Roofline   bool   // a roofline import: <id>-decode and <id>-prefill cells and sweep rows
}

// RooflineImportID names the synthetic roofline import (cells rf-decode and rf-prefill).
const RooflineImportID = "rf"

var hardware = []string{"H100", "B200", "GB300"}

// Atlas builds the campaign's atlas rows in atlas order.
func Atlas(s Spec) []schema.AtlasRow {
	var rows []schema.AtlasRow
	for i := range s.Cells {
		id := fmt.Sprintf("cell-%03d", i)
		for j := range s.Concs {
			rows = append(rows, measured(s, i, id, 1<<j))
		}
	}
	if s.FailedCell {
		for j := range s.Concs {
			r := identity(s, s.Cells, "failed-cell", 1<<j)
			r.CellStatus, r.NumPrompts, r.ErrorCount = schema.CellFailed, 3<<j, 3<<j
			r.Extra = map[string]any{"point_status": atlas.PointFailed}
			rows = append(rows, r)
		}
	}
	if s.Roofline {
		for _, rr := range Roofline(s) {
			rows = append(rows, rooflineAtlas(s, rr))
		}
	}
	atlas.SortRows(rows)
	return rows
}

func identity(s Spec, i int, id string, c int) schema.AtlasRow {
	tp := []int{8, 4}[i%2]
	return schema.AtlasRow{
		Schema: "atlas_v1", Campaign: s.Campaign, CellID: id, Load: schema.Conc(c), Concurrency: c,
		Model: "moonshotai/Kimi-K2.6", Hardware: hardware[i%len(hardware)], Quant: "NVFP4", TensorParallel: tp,
		ParallelStrategy: []string{"EP", "TP"}[i%2], MTP: i%3 == 1, MaxNumBatchedTokens: 4096 << (i % 2),
		Engine: "vllm", EngineVersion: "0.11.0", Delivery: "release", Shape: "aa-1k", CacheMode: "warm",
		Backend: atlas.BackendPerfdag, GPUs: tp, CellStatus: schema.CellFull, SolRigor: schema.RigorL1,
	}
}

func measured(s Spec, i int, id string, c int) schema.AtlasRow {
	r := identity(s, i, id, c)
	v := float64(s.Variant)
	f := float64(c)
	r.NumPrompts = 3 * c
	if s.Undercount && i == 0 {
		r.NumPrompts = c
		r.Flags = []string{schema.FlagSteadyWindowUndercount}
	}
	r.RequestCount, r.PlotReady = r.NumPrompts, true
	ttft := 120 + 9.5*f + 3*float64(i) + v
	itl := 18 + 0.75*f + float64(i%3) + v/10
	out := f * 1000 / itl * 0.9
	r.TTFTAvgMs, r.TTFTP50Ms, r.TTFTP99Ms = schema.F(ttft), schema.F(ttft*0.95), schema.F(ttft*1.8)
	r.ITLAvgMs, r.ITLP50Ms, r.ITLP99Ms = schema.F(itl), schema.F(itl*0.97), schema.F(itl*1.5)
	r.RequestLatencyAvgMs = schema.F(ttft + 999*itl)
	r.RequestThroughput = schema.F(out / 1000)
	r.OutputTokPerS, r.TotalTokPerS = schema.F(out), schema.F(out*2.02)
	r.OutputTokPerSPerGPU, r.TotalTokPerSPerGPU = schema.F(out/float64(r.GPUs)), schema.F(out*2.02/float64(r.GPUs))
	r.TokPerSPerUser, r.AAOutputSpeed = schema.F(1000/itl), schema.F(1000/itl*1.01)
	r.MeanInputTokens, r.MeanOutputTokens = schema.F(1000+0.25*float64(i)), schema.F(1000)
	r.TokenBasis = schema.TokenBasisServer
	if i%2 == 1 { // a reasoning cell: TTFO and its coverage are measured only here
		r.TTFOAvgMs, r.TTFOCoverage = schema.F(ttft*3), schema.F(0.97)
		r.ReasoningTokenAvg, r.ReasoningField = schema.F(412.5), "reasoning_content"
	}
	if r.MTP {
		r.AcceptanceLength, r.SpecAcceptRate = schema.F(2.6), schema.F(0.8)
	}
	if s.Grounded {
		r.SMActive, r.TensorActive, r.DRAMActive = schema.F(0.4+f/1000), schema.F(0.3), schema.F(0.55)
		r.PowerWattsPerGPU = schema.F(650 + f)
		r.TokensPerWatt = atlas.TokensPerWatt(r.OutputTokPerS, r.PowerWattsPerGPU, r.GPUs)
		r.DCGMGrounded, r.SolRigor = true, schema.RigorL3
	}
	r.Extra = map[string]any{"point_status": atlas.PointOK, "note": "a <b> & c"}
	return r
}

// Roofline builds the synthetic import's sweep rows: a decode concurrency sweep and a prefill
// ISL sweep, every prefill point at concurrency 1.
func Roofline(s Spec) []schema.RooflineRow {
	if !s.Roofline {
		return nil
	}
	var out []schema.RooflineRow
	base := schema.RooflineRow{Schema: schema.SchemaRoofline, Campaign: s.Campaign, ImportID: RooflineImportID,
		Hardware: "GB300", Quant: "NVFP4", TensorParallel: 4, PeakTFLOPsPerGPU: 10000, PeakHBMTBs: 8,
		RidgeFLOPPerByte: 1250}
	for _, c := range []int{1, 8, 32, 64} {
		r := base
		tok := float64(c) * 90 * (1 + float64(s.Variant)/100)
		r.CellID, r.Phase, r.Concurrency, r.ISL, r.OSL, r.Context, r.NumPrompts = RooflineImportID+"-decode", schema.RooflinePhaseDecode, c, 2048, 512, 2304, 4*c
		r.OutputTokPerS, r.ITLAvgMs, r.TTFTAvgMs = schema.F(tok), schema.F(1000*float64(c)/tok), schema.F(200+float64(c))
		r.FLOPPerStep, r.BytesPerStep = 2e11*float64(c), 7e11
		r.ArithmeticIntensity, r.Bound = r.FLOPPerStep/r.BytesPerStep, "memory"
		r.AchievedTFLOPsPerGPU, r.ComputePct = schema.F(tok*2e11/4/1e12), schema.F(tok*2e11/4/1e12/100)
		r.HBMBWDeliveredPct, r.DRAMActivePct = schema.F(40+float64(c)/2), schema.F(60+float64(c)/3)
		r.SMActive, r.TensorActive, r.DRAMActive = schema.F(0.5), schema.F(0.2), schema.F(0.6)
		out = append(out, r)
	}
	for _, isl := range []int{1024, 2048, 4096, 8192} {
		r := base
		r.CellID, r.Phase, r.Concurrency, r.ISL, r.Context, r.NumPrompts = RooflineImportID+"-prefill", schema.RooflinePhasePrefill, 1, isl, isl, 8
		r.InputTokPerS, r.TTFTAvgMs = schema.F(float64(isl)*20), schema.F(float64(isl)/20)
		r.FLOPPerStep, r.BytesPerStep = 2e11*float64(isl), 7e11
		r.ArithmeticIntensity, r.Bound = r.FLOPPerStep/r.BytesPerStep, "compute"
		r.AchievedTFLOPsPerGPU, r.ComputePct = schema.F(float64(isl)*20*2e11/4/1e12), schema.F(30)
		r.SMActive, r.TensorActive, r.DRAMActive = schema.F(0.9), schema.F(0.7), schema.F(0.3)
		out = append(out, r)
	}
	return out
}

func rooflineAtlas(s Spec, rr schema.RooflineRow) schema.AtlasRow {
	r := schema.AtlasRow{
		Schema: "atlas_v1", Campaign: s.Campaign, CellID: rr.CellID, Load: schema.Conc(rr.Concurrency), Concurrency: rr.Concurrency,
		Model: "moonshotai/Kimi-K2.6", Hardware: rr.Hardware, Quant: rr.Quant, TensorParallel: rr.TensorParallel,
		ParallelStrategy: "TP", Engine: "vllm", Delivery: "release", Shape: "roofline-" + rr.Phase, CacheMode: "cold",
		Backend: atlas.BackendRoofline, GPUs: rr.TensorParallel, CellStatus: schema.CellFull,
		NumPrompts: rr.NumPrompts, RequestCount: rr.NumPrompts, TTFTAvgMs: rr.TTFTAvgMs, ITLAvgMs: rr.ITLAvgMs,
		MeanInputTokens: schema.F(float64(rr.ISL)), SMActive: rr.SMActive, TensorActive: rr.TensorActive,
		DRAMActive: rr.DRAMActive, DCGMGrounded: true, SolRigor: schema.RigorL3,
		Extra: map[string]any{"phase": rr.Phase, "import_id": rr.ImportID, "isl": rr.ISL, "point_status": atlas.PointOK},
	}
	if rr.Phase == schema.RooflinePhaseDecode {
		r.OutputTokPerS = rr.OutputTokPerS
		r.OutputTokPerSPerGPU = schema.F(*rr.OutputTokPerS / float64(rr.TensorParallel))
		r.RequestThroughput = schema.F(*rr.OutputTokPerS / 512)
		r.MeanOutputTokens = schema.F(float64(rr.OSL))
		r.PlotReady = true
	}
	return r
}

// TPM is the TPM summary of the campaign's atlas (steps/analysis/tpm with the default SLA and rates).
func TPM(s Spec) schema.TPMSummary {
	return tpm.Summarize(s.Campaign, tpm.ConfigFor(nil), Atlas(s))
}

// Publication builds everything the campaign puts in the lake, with a campaign_v1 row that
// summarizes the atlas the way strict-publish does.
func Publication(campaignID string, s Spec) *lake.Publication {
	rows := Atlas(s)
	sum := TPM(s)
	cov, _ := atlas.Aggregate(discard{}, rows...)
	grounded := s.Grounded
	row := schema.CampaignRow{
		Schema: schema.SchemaCampaignRow, Campaign: s.Campaign, Kind: "throughput",
		Created: "2026-12-02T13:04:55Z", Cells: cov.Cells, FullCells: cov.Full, PartialCells: cov.Partial,
		FailedCells: cov.Failed, PlotReadyPoints: cov.PlotReady, DCGMGrounded: grounded,
		SolRigor:        map[bool]string{true: schema.RigorL3, false: schema.RigorL1}[grounded],
		RooflinePresent: s.Roofline, Strict: true, Engine: "vllm", EngineVersion: "0.11.0", Delivery: "release",
	}
	if !grounded {
		row.Strict, row.Gaps = false, []string{"dcgm-grounded: the campaign is not DCGM-grounded"}
	}
	return &lake.Publication{
		CampaignID: campaignID, Campaign: row, PublishedAt: time.Date(2026, 12, 2, 14, 0, 0, 0, time.UTC),
		Atlas: lake.Rows(rows), TPM: sum.TPMRows(), Cost: sum.CostRows(), Roofline: Roofline(s),
		History: &schema.HistoryRow{Schema: schema.SchemaHistoryRow, Campaign: s.Campaign, Slot: "2026-12-02T03:00:00+01:00",
			Trigger: "scheduled", Started: "2026-12-02T13:04:55Z", Ended: "2026-12-02T13:58:01Z", Outcome: "succeeded",
			Verdict: "RED", Baseline: "baselines/inference/nightly/20261201T030000Z", BaselineSHA256: "ab12", RedRows: 2,
			OnRed: "ran ok", Dir: "/data/campaigns/" + campaignID, PerfdagVersion: "v1.4.0", Host: "bench-01",
			Endpoints: []schema.HistoryEndpoint{{Name: "main", Model: "org/m", Server: "vllm 0.11.0+cu128"}},
			Knees:     []schema.Knee{{Cell: "cell-0", SLO: "itl_avg_ms <= 50", Knee: 31, KneeLo: 29, KneeHi: 33}}},
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
