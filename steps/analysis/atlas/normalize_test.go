package atlas

import (
	"bytes"
	"context"
	"maps"
	"math"
	"slices"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// okPoint is a valid point at concurrency c: 4·c prompts, all valid, with round numbers.
func okPoint(cell string, c int) schema.Point {
	return schema.Point{
		Schema: "point_v1", Cell: cell, Concurrency: c, Shape: "aa-1k", Mode: "synthetic", GPUs: 8,
		NumPrompts: 4 * c, RequestCount: 4 * c, Status: PointOK, WindowS: 60,
		TTFT:                  &schema.Stat{Unit: "ms", Count: 4 * c, Avg: 100 + float64(c), P50: 90, P90: 150, P95: 160, P99: 200},
		TTFO:                  &schema.Stat{Unit: "ms", Count: 4 * c, Avg: 120},
		ITL:                   &schema.Stat{Unit: "ms", Count: 4 * c, Avg: 20, P50: 19, P99: 30},
		RequestLatency:        &schema.Stat{Unit: "ms", Count: 4 * c, Avg: 20000, P50: 19000, P99: 25000},
		TPSUser:               &schema.Stat{Unit: "tok/s", Count: 4 * c, Avg: 50},
		TTFOCoverage:          1,
		RequestThroughput:     0.5 * float64(c),
		OutputTokenThroughput: 400 * float64(c),
		TotalTokenThroughput:  800 * float64(c),
		OutputTokPerSPerGPU:   50 * float64(c),
		TotalTokPerSPerGPU:    100 * float64(c),
		AAOutputSpeed:         51,
		MeanISL:               1000,
		MeanOSL:               1000,
	}
}

func testCell(id string, concs ...int) schema.Cell {
	mtp := true
	return schema.Cell{
		ID:            id,
		Workload:      schema.Workload{Shape: "aa-1k", Mode: "synthetic"},
		Concurrencies: concs,
		Identity: schema.Identity{
			Model: "moonshotai/Kimi-K2.6", Hardware: "B200", Quant: "NVFP4", TensorParallel: 8,
			ParallelStrategy: "EP", MTP: &mtp, MaxNumBatchedTokens: 4096, Engine: "vllm",
			Delivery: "release", CacheMode: "warm", Arm: "a", Baseline: true,
		},
		Extra: map[string]any{"note": "x"},
	}
}

func TestNormalizeStatus(t *testing.T) {
	failed := okPoint("c", 4)
	failed.RequestCount, failed.ErrorCount, failed.Status = 0, 16, PointFailed
	partial := okPoint("c", 4)
	partial.ErrorCount, partial.Status = 2, PointPartial

	tests := []struct {
		name       string
		concs      []int
		points     []schema.Point
		wantStatus string
		wantPlot   []bool
		wantPoint  []string
	}{
		{"every point ok", []int{1, 4}, []schema.Point{okPoint("c", 4), okPoint("c", 1)}, schema.CellFull, []bool{true, true}, []string{PointOK, PointOK}},
		{"one point missing", []int{1, 4}, []schema.Point{okPoint("c", 1)}, schema.CellPartial, []bool{true, false}, []string{PointOK, PointMissing}},
		{"one point failed", []int{1, 4}, []schema.Point{okPoint("c", 1), failed}, schema.CellPartial, []bool{true, false}, []string{PointOK, PointFailed}},
		{"one point with errors", []int{1, 4}, []schema.Point{okPoint("c", 1), partial}, schema.CellPartial, []bool{true, true}, []string{PointOK, PointPartial}},
		{"nothing usable", []int{1, 4}, []schema.Point{failed}, schema.CellFailed, []bool{false, false}, []string{PointMissing, PointFailed}},
		{"unrequested point ignored", []int{1}, []schema.Point{okPoint("c", 1), okPoint("c", 64)}, schema.CellFull, []bool{true}, []string{PointOK}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows, status := Normalize("camp", testCell("c", tt.concs...), tt.points, nil, nil)
			if status != tt.wantStatus {
				t.Fatalf("status = %q, want %q", status, tt.wantStatus)
			}
			if len(rows) != len(tt.wantPlot) {
				t.Fatalf("%d rows, want %d", len(rows), len(tt.wantPlot))
			}
			for i, r := range rows {
				if r.Concurrency != tt.concs[i] || r.CellStatus != tt.wantStatus || r.PlotReady != tt.wantPlot[i] || r.Extra["point_status"] != tt.wantPoint[i] {
					t.Errorf("row %d: c=%d status=%q plot=%v point=%v", i, r.Concurrency, r.CellStatus, r.PlotReady, r.Extra["point_status"])
				}
			}
		})
	}
}

func TestNormalizeFields(t *testing.T) {
	p := okPoint("c", 8)
	p.NumPrompts = 12 // < 2·8: steady window undercount
	p.ReasoningParserSuspect = true
	p.UsageMismatches = 3
	p.Reasoning, p.ReasoningField = true, "reasoning_content"
	p.ReasoningTok = &schema.Stat{Count: 32, Avg: 300}
	spec := map[schema.Load]*schema.SpecWindow{schema.Conc(8): {AcceptanceLength: schema.F(2.5), SpecAcceptRate: schema.F(0.75), PrefixCacheHitRate: schema.F(0.1)}}
	dcgm := &schema.DCGMCorrelation{DCGMGrounded: true, SolRigor: schema.RigorL3, Points: []schema.DCGMPoint{{
		Concurrency: 8, SMActive: schema.F(0.8), TensorActive: schema.F(0.4), DRAMActive: schema.F(0.6),
		NVLinkBytesPerS: schema.F(1e9), PowerWattsPerGPU: schema.F(800),
	}}}
	rows, status := Normalize("camp", testCell("c", 8), []schema.Point{p}, spec, dcgm)
	if status != schema.CellFull || len(rows) != 1 {
		t.Fatalf("status %q, %d rows", status, len(rows))
	}
	r := rows[0]
	// tokens_per_watt = output tok/s ÷ (W/GPU × GPUs) = (400·8 = 3200) ÷ (800 × 8 = 6400) = 0.5
	checks := []struct {
		name string
		got  *float64
		want float64
	}{
		{"ttft_avg_ms", r.TTFTAvgMs, 108}, {"ttft_p99_ms", r.TTFTP99Ms, 200}, {"ttfo_avg_ms", r.TTFOAvgMs, 120},
		{"itl_avg_ms", r.ITLAvgMs, 20}, {"request_latency_p50_ms", r.RequestLatencyP50Ms, 19000},
		{"request_throughput", r.RequestThroughput, 4}, {"output_tok_s", r.OutputTokPerS, 3200},
		{"total_tok_s", r.TotalTokPerS, 6400}, {"output_tok_s_per_gpu", r.OutputTokPerSPerGPU, 400},
		{"total_tok_s_per_gpu", r.TotalTokPerSPerGPU, 800}, {"tok_s_per_user", r.TokPerSPerUser, 50},
		{"aa_output_speed", r.AAOutputSpeed, 51}, {"mean_input_tokens", r.MeanInputTokens, 1000},
		{"mean_output_tokens", r.MeanOutputTokens, 1000}, {"reasoning_token_avg", r.ReasoningTokenAvg, 300},
		{"acceptance_length", r.AcceptanceLength, 2.5}, {"spec_accept_rate", r.SpecAcceptRate, 0.75},
		{"prefix_cache_hit_rate", r.PrefixCacheHitRate, 0.1}, {"dcgm_sm_active", r.SMActive, 0.8},
		{"dcgm_dram_active", r.DRAMActive, 0.6}, {"dcgm_nvlink_bytes_s", r.NVLinkBytesPerS, 1e9},
		{"power_watts_per_gpu", r.PowerWattsPerGPU, 800}, {"tokens_per_watt", r.TokensPerWatt, 0.5},
	}
	for _, c := range checks {
		if c.got == nil || math.Abs(*c.got-c.want) > 1e-9 {
			t.Errorf("%s = %v, want %v", c.name, deref(c.got), c.want)
		}
	}
	if r.Model != "moonshotai/Kimi-K2.6" || r.Hardware != "B200" || r.Quant != "NVFP4" || r.TensorParallel != 8 ||
		r.ParallelStrategy != "EP" || !r.MTP || r.MaxNumBatchedTokens != 4096 || r.Engine != "vllm" ||
		r.Delivery != "release" || r.CacheMode != "warm" || r.Arm != "a" || !r.Baseline || r.GPUs != 8 ||
		r.Shape != "aa-1k" || r.Backend != BackendPerfdag || r.Campaign != "camp" || r.Schema != "atlas_v1" {
		t.Errorf("identity = %+v", r)
	}
	if !r.DCGMGrounded || r.SolRigor != schema.RigorL3 || r.ReasoningField != "reasoning_content" || r.NumPrompts != 12 {
		t.Errorf("grounded=%v rigor=%q field=%q prompts=%d", r.DCGMGrounded, r.SolRigor, r.ReasoningField, r.NumPrompts)
	}
	wantFlags := []string{schema.FlagSteadyWindowUndercount, schema.FlagReasoningParserSuspect, schema.FlagUsageMismatch}
	if !slices.Equal(r.Flags, wantFlags) {
		t.Errorf("flags = %v, want %v", r.Flags, wantFlags)
	}
	if r.Extra["note"] != "x" || r.Extra["shape"] != "aa-1k" || r.Extra["mode"] != "synthetic" {
		t.Errorf("extra = %v", r.Extra)
	}
}

func TestNormalizeRigorLadder(t *testing.T) {
	tests := []struct {
		name     string
		dcgm     *schema.DCGMCorrelation
		want     string
		grounded bool
	}{
		{"no dcgm", nil, schema.RigorL1, false},
		{"proxy only", &schema.DCGMCorrelation{Points: []schema.DCGMPoint{{Concurrency: 1, SMActive: schema.F(0.5)}}}, schema.RigorL2, false},
		{"grounded", &schema.DCGMCorrelation{DCGMGrounded: true, Points: []schema.DCGMPoint{{Concurrency: 1, DRAMActive: schema.F(0.5)}}}, schema.RigorL3, true},
		{"grounded, other point", &schema.DCGMCorrelation{DCGMGrounded: true, Points: []schema.DCGMPoint{{Concurrency: 2, DRAMActive: schema.F(0.5)}}}, schema.RigorL1, false},
		{"power only", &schema.DCGMCorrelation{DCGMGrounded: true, Points: []schema.DCGMPoint{{Concurrency: 1, PowerWattsPerGPU: schema.F(500)}}}, schema.RigorL1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows, _ := Normalize("camp", testCell("c", 1), []schema.Point{okPoint("c", 1)}, nil, tt.dcgm)
			if rows[0].SolRigor != tt.want || rows[0].DCGMGrounded != tt.grounded {
				t.Errorf("rigor %q grounded %v, want %q %v", rows[0].SolRigor, rows[0].DCGMGrounded, tt.want, tt.grounded)
			}
		})
	}
}

func TestTokensPerWatt(t *testing.T) {
	tests := []struct {
		name  string
		tok   *float64
		power *float64
		gpus  int
		want  *float64
	}{
		// 1200 tok/s ÷ (600 W × 4 GPUs = 2400 W) = 0.5 tok/J
		{"four gpus", schema.F(1200), schema.F(600), 4, schema.F(0.5)},
		// 9000 tok/s ÷ (1000 W × 8 = 8000 W) = 1.125 tok/J
		{"eight gpus", schema.F(9000), schema.F(1000), 8, schema.F(1.125)},
		{"no power", schema.F(1200), nil, 4, nil},
		{"zero power", schema.F(1200), schema.F(0), 4, nil},
		{"no throughput", nil, schema.F(600), 4, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := TokensPerWatt(tt.tok, tt.power, tt.gpus)
			if (got == nil) != (tt.want == nil) || (got != nil && math.Abs(*got-*tt.want) > 1e-12) {
				t.Errorf("TokensPerWatt = %v, want %v", deref(got), deref(tt.want))
			}
		})
	}
}

func TestNormalizeNonFiniteStaysNull(t *testing.T) {
	p := okPoint("c", 1)
	p.TTFT.Avg = math.NaN()
	p.OutputTokPerSPerGPU = math.Inf(1)
	rows, _ := Normalize("camp", testCell("c", 1), []schema.Point{p}, nil, nil)
	if rows[0].TTFTAvgMs != nil || rows[0].OutputTokPerSPerGPU != nil || rows[0].PlotReady {
		t.Errorf("NaN/Inf leaked: ttft=%v tok/gpu=%v plot=%v", deref(rows[0].TTFTAvgMs), deref(rows[0].OutputTokPerSPerGPU), rows[0].PlotReady)
	}
}

// A statistic the point does not state (an import's file lacked it) is null in the row, while
// the stated ones beside it are kept — whether or not the point is an import.
func TestNormalizeUnstatedStaysNull(t *testing.T) {
	p := okPoint("c", 1)
	p.TTFT.Unstate("p90", "p95")
	p.ITL.Unstate("p99")
	rows, _ := Normalize("camp", testCell("c", 1), []schema.Point{p}, nil, nil)
	r := rows[0]
	if r.TTFTP90Ms != nil || r.TTFTP95Ms != nil || r.ITLP99Ms != nil {
		t.Errorf("unstated statistics leaked: ttft p90 %v p95 %v, itl p99 %v", deref(r.TTFTP90Ms), deref(r.TTFTP95Ms), deref(r.ITLP99Ms))
	}
	if deref(r.TTFTP50Ms) != 90.0 || deref(r.TTFTP99Ms) != 200.0 || deref(r.ITLAvgMs) != 20.0 || !r.PlotReady {
		t.Errorf("stated statistics lost: ttft p50 %v p99 %v, itl avg %v, plot-ready %v", deref(r.TTFTP50Ms), deref(r.TTFTP99Ms), deref(r.ITLAvgMs), r.PlotReady)
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestNormalizeFidelity: the point's fidelity fields reach the atlas row the cover reads; zero
// counts stay null, so a clean point carries none of them.
func TestNormalizeFidelity(t *testing.T) {
	p := okPoint("c", 1)
	p.TokenBasis, p.TokenBasisFallbacks, p.TruncatedPrompts, p.Retries = schema.TokenBasisServer, 2, 3, 4
	p.UsageCompletionDiffPct, p.UsageDiscrepancy = schema.F(-15), true
	p.ErrorMessages = map[string][]string{schema.ErrorConnect: {"refused"}}
	p.TTFTMinusServerPromptMs = &schema.Stat{Count: 5, P50: 7.5}
	p.MetricsFamilies = schema.MetricsFamiliesNone
	clean := okPoint("c", 2)
	clean.MetricsFamilies = "llamacpp"
	rows, _ := Normalize("camp", testCell("c", 1, 2), []schema.Point{p, clean}, nil, nil)
	if len(rows) != 2 {
		t.Fatalf("%d rows", len(rows))
	}
	r := rows[0]
	if r.TokenBasis != schema.TokenBasisServer || r.TokenBasisFallbacks == nil || *r.TokenBasisFallbacks != 2 ||
		r.TruncatedPrompts == nil || *r.TruncatedPrompts != 3 || r.Retries == nil || *r.Retries != 4 ||
		r.UsageCompletionDiffPct == nil || *r.UsageCompletionDiffPct != -15 || r.ErrorMessages[schema.ErrorConnect][0] != "refused" ||
		r.TTFTMinusServerPromptP50Ms == nil || *r.TTFTMinusServerPromptP50Ms != 7.5 {
		t.Errorf("fidelity fields not carried: %+v", r)
	}
	if !slices.Contains(r.Flags, schema.FlagUsageDiscrepancy) || !slices.Contains(r.Flags, schema.FlagTruncatedPrompts) ||
		!slices.Contains(r.Flags, schema.FlagNoEngineMetrics) {
		t.Errorf("flags = %v", r.Flags)
	}
	if slices.Contains(rows[1].Flags, schema.FlagNoEngineMetrics) {
		t.Errorf("a point with a known engine family is flagged %s", schema.FlagNoEngineMetrics)
	}
	c := rows[1]
	if c.TokenBasisFallbacks != nil || c.TruncatedPrompts != nil || c.Retries != nil || c.ErrorMessages != nil || c.TTFTMinusServerPromptP50Ms != nil {
		t.Errorf("a clean point carries fidelity fields: %+v", c)
	}
}

func TestNormalizeIntervals(t *testing.T) {
	p := okPoint("c", 8)
	p.Intervals = schema.Intervals{
		"ttft_p50_ms":  {Lo: 85, Hi: 95, Method: "sectioning", N: 10},
		"output_tok_s": {Lo: 3100, Hi: 3300, Method: "batch-means", N: 10},
	}
	rows, _ := Normalize("camp", testCell("c", 8), []schema.Point{p}, nil, nil)
	if len(rows) != 1 || !maps.Equal(rows[0].Intervals, p.Intervals) {
		t.Fatalf("row intervals %v, want the point's %v", rows[0].Intervals, p.Intervals)
	}
	rows[0].Intervals["ttft_p50_ms"] = schema.Interval{}
	if p.Intervals["ttft_p50_ms"].Hi != 95 {
		t.Error("the row shares the point's interval map")
	}
	// Round trip through atlas.jsonl.
	var buf bytes.Buffer
	if _, err := Aggregate(&buf, rows[0]); err != nil {
		t.Fatal(err)
	}
	var back []schema.AtlasRow
	if err := Decode(context.Background(), &buf, campaigndir.Atlas(), func(r *schema.AtlasRow) error { back = append(back, *r); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(back) != 1 || !maps.Equal(back[0].Intervals, rows[0].Intervals) {
		t.Errorf("atlas.jsonl round trip: %v, want %v", back, rows[0].Intervals)
	}
	p.Intervals = nil
	if rows, _ := Normalize("camp", testCell("c", 8), []schema.Point{p}, nil, nil); rows[0].Intervals != nil {
		t.Errorf("a point without intervals gave %v", rows[0].Intervals)
	}
}
