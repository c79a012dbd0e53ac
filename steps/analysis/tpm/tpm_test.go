package tpm

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/analysis/atlas"
	"github.com/perfdag/perfdag/steps/testkit"
)

func row(cell string, c int, hw string, tp int, out float64, ttft, itl *float64) schema.AtlasRow {
	return schema.AtlasRow{
		Schema: "atlas_v1", CellID: cell, Concurrency: c, Model: "m", Hardware: hw, Quant: "FP8", TensorParallel: tp,
		ParallelStrategy: "TP", Shape: "aa-1k", CellStatus: schema.CellFull, GPUs: tp, CacheMode: "warm",
		OutputTokPerSPerGPU: schema.F(out), TotalTokPerSPerGPU: schema.F(2 * out), MeanInputTokens: schema.F(1000),
		MeanOutputTokens: schema.F(1000), TTFTAvgMs: ttft, ITLAvgMs: itl,
	}
}

func near(t *testing.T, name string, got *float64, want float64) {
	t.Helper()
	if got == nil || math.Abs(*got-want) > 1e-9*math.Max(1, math.Abs(want)) {
		t.Errorf("%s = %v, want %v", name, deref(got), want)
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestTPMAllBases(t *testing.T) {
	// One B200 row, TP 4, 1,250 output tok/s/GPU and 2,500 total tok/s/GPU, 8 GPUs per node:
	//   output TPM/GPU     = 1,250 × 60      =    75,000
	//   output TPM/replica = 75,000 × 4 (TP) =   300,000
	//   output TPM/node    = 75,000 × 8      =   600,000
	//   total TPM/GPU      = 2,500 × 60      =   150,000
	//   total TPM/replica  = 150,000 × 4     =   600,000
	//   total TPM/node     = 150,000 × 8     = 1,200,000
	//   $/1M output = 8.60 ÷ (1,250 × 3,600) × 1e6 = 8.60 ÷ 4.5 = 1.91111…
	//   $/1M total  = 8.60 ÷ (2,500 × 3,600) × 1e6 = 8.60 ÷ 9.0 = 0.95555…
	r := row("b200", 16, "B200", 4, 1250, schema.F(500), schema.F(30))
	s := Summarize("camp", ConfigFor(nil), []schema.AtlasRow{r})
	if len(s.Groups) != 1 {
		t.Fatalf("%d groups", len(s.Groups))
	}
	p, c := s.Groups[0].Peak, s.Groups[0].PeakCost
	near(t, "output_tpm_per_gpu", &p.OutputTPMPerGPU, 75000)
	near(t, "output_tpm_per_replica", &p.OutputTPMPerReplica, 300000)
	near(t, "output_tpm_per_node", &p.OutputTPMPerNode, 600000)
	near(t, "total_tpm_per_gpu", p.TotalTPMPerGPU, 150000)
	near(t, "total_tpm_per_replica", p.TotalTPMPerReplica, 600000)
	near(t, "total_tpm_per_node", p.TotalTPMPerNode, 1200000)
	near(t, "usd_per_gpu_hour", c.USDPerGPUHour, 8.60)
	near(t, "usd_per_1m_output", c.USDPer1MOutput, 8.60/4.5)
	near(t, "usd_per_1m_total", c.USDPer1MTotal, 8.60/9.0)
	if c.RateEstimate || !strings.HasPrefix(c.RateSource, "catalog") {
		t.Errorf("rate estimate %v source %q", c.RateEstimate, c.RateSource)
	}
}

func TestUSDPerMillion(t *testing.T) {
	tests := []struct {
		name       string
		rate, toks float64
		want       *float64
	}{
		// 4.50 ÷ (1,250 × 3,600) × 1e6 = 4.50 ÷ 4.5 = 1.00
		{"campaign B200 rate", 4.50, 1250, schema.F(1)},
		// 12.00 ÷ (1,000 × 3,600) × 1e6 = 12 ÷ 3.6 = 3.3333…
		{"GB300 estimate", 12, 1000, schema.F(12 / 3.6)},
		// 6.16 ÷ (100 × 3,600) × 1e6 = 6.16 ÷ 0.36 = 17.1111…
		{"H100 low throughput", 6.16, 100, schema.F(6.16 / 0.36)},
		{"zero throughput", 6.16, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := USDPerMillion(tt.rate, tt.toks)
			if tt.want == nil {
				if got != nil {
					t.Errorf("got %v, want nil", *got)
				}
				return
			}
			near(t, "usd_per_1m", got, *tt.want)
		})
	}
}

func TestSLAPointSelection(t *testing.T) {
	// c1 (100 tok/s/GPU, TTFT 200, TPOT 10) and c8 (600, 900, 35) meet TTFT ≤ 2000 and TPOT ≤ 50;
	// c32 (1500, 1800, 55) misses TPOT; c64 (1700, 4000, 70) misses both.
	// Peak = c64 (max 1,700); SLA = c8 (max among {100, 600}); with TPOT ≤ 60, SLA = c32 (1,500).
	rows := []schema.AtlasRow{
		row("h100", 1, "H100", 8, 100, schema.F(200), schema.F(10)),
		row("h100", 8, "H100", 8, 600, schema.F(900), schema.F(35)),
		row("h100", 32, "H100", 8, 1500, schema.F(1800), schema.F(55)),
		row("h100", 64, "H100", 8, 1700, schema.F(4000), schema.F(70)),
	}
	tests := []struct {
		name     string
		cfg      Config
		wantPeak int
		wantSLA  int // 0 = unset
		wantNote string
	}{
		{"defaults", ConfigFor(nil), 64, 8, ""},
		{"looser TPOT", ConfigFor(&schema.Campaign{TPM: &schema.TPM{TPOTSLAMs: 60}}), 64, 32, ""},
		{"nothing meets", ConfigFor(&schema.Campaign{TPM: &schema.TPM{TTFTSLAMs: 100}}), 64, 0, "no row meets TTFT mean <= 100 ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := Summarize("camp", tt.cfg, rows).Groups[0]
			if g.Peak.Concurrency != tt.wantPeak {
				t.Errorf("peak at c%d, want c%d", g.Peak.Concurrency, tt.wantPeak)
			}
			switch {
			case tt.wantSLA == 0 && (g.SLA != nil || g.SLACost != nil):
				t.Errorf("sla set at c%d, want unset", g.SLA.Concurrency)
			case tt.wantSLA != 0 && (g.SLA == nil || g.SLACost == nil):
				t.Errorf("sla unset (%s), want c%d", g.SLANote, tt.wantSLA)
			case tt.wantSLA != 0 && g.SLA.Concurrency != tt.wantSLA:
				t.Errorf("sla at c%d, want c%d", g.SLA.Concurrency, tt.wantSLA)
			}
			if !strings.Contains(g.SLANote, tt.wantNote) {
				t.Errorf("note %q, want %q", g.SLANote, tt.wantNote)
			}
		})
	}
}

func TestSLAUnsetWithoutDecodeMetric(t *testing.T) {
	rows := []schema.AtlasRow{row("x", 1, "B200", 8, 900, schema.F(100), nil), row("x", 2, "B200", 8, 1000, schema.F(150), nil)}
	g := Summarize("camp", ConfigFor(nil), rows).Groups[0]
	if g.SLA != nil || !strings.Contains(g.SLANote, "no decode metric") {
		t.Errorf("sla %v note %q", g.SLA, g.SLANote)
	}
	if g.Peak.Concurrency != 2 || g.Rows != 2 {
		t.Errorf("peak c%d rows %d", g.Peak.Concurrency, g.Rows)
	}
}

func TestGroupingAndGaps(t *testing.T) {
	noISL := row("gb", 4, "GB300", 4, 1000, schema.F(100), schema.F(20))
	noISL.MeanInputTokens = nil
	failed := row("gb", 8, "GB300", 4, 99999, schema.F(100), schema.F(20))
	failed.CellStatus = schema.CellFailed
	tie := row("gb", 2, "GB300", 4, 1000, schema.F(100), schema.F(20))
	mtp := row("gb-mtp", 1, "GB300", 4, 5000, schema.F(100), schema.F(20))
	mtp.MTP = true
	noTput := row("gb", 16, "GB300", 4, 0, nil, nil)
	noTput.OutputTokPerSPerGPU = nil
	s := Summarize("camp", ConfigFor(nil), []schema.AtlasRow{noISL, failed, tie, mtp, noTput})
	if len(s.Groups) != 2 || s.Groups[0].MTP || !s.Groups[1].MTP {
		t.Fatalf("groups %+v", s.Groups)
	}
	g := s.Groups[0]
	// c2 and c4 tie at 1,000: the earlier row in atlas order (c2) wins; the failed cell is ignored.
	if g.Peak.Concurrency != 2 || g.Rows != 2 {
		t.Errorf("peak c%d rows %d, want c2 of 2 rows", g.Peak.Concurrency, g.Rows)
	}
	// GB300 uses the catalog estimate: 12 ÷ (1,000 × 3,600) × 1e6 = 3.3333…
	near(t, "gb300 usd_per_1m_output", g.PeakCost.USDPer1MOutput, 12/3.6)
	if !g.PeakCost.RateEstimate {
		t.Error("GB300 rate not marked as an estimate")
	}
	// Total TPM is n/a when input tokens are unknown.
	s2 := Summarize("camp", ConfigFor(nil), []schema.AtlasRow{noISL})
	if p := s2.Groups[0].Peak; p.TotalTPMPerGPU != nil || p.TotalTokPerSPerGPU != nil || s2.Groups[0].PeakCost.USDPer1MTotal != nil {
		t.Errorf("total present without input tokens: %+v", p)
	}
}

func TestConfigForOverlays(t *testing.T) {
	c := &schema.Campaign{TPM: &schema.TPM{TTFTSLAMs: 500}, Cost: &schema.Cost{USDPerGPUHour: map[string]float64{"b200": 4.5, "MI300X": 3}}}
	cfg := ConfigFor(c)
	if cfg.TTFTSLAMs != 500 || cfg.TPOTSLAMs != DefaultTPOTSLAMs || cfg.GPUsPerNode != DefaultGPUsPerNode {
		t.Errorf("cfg %+v", cfg)
	}
	tests := []struct {
		hw       string
		want     float64
		estimate bool
		source   string
		ok       bool
	}{
		{"B200", 4.5, false, "campaign", true}, {"MI300X", 3, false, "campaign", true},
		{"H100", 6.16, false, "catalog", true}, {"GB300", 12, true, "catalog", true}, {"TPUv5", 0, false, "", false},
	}
	for _, tt := range tests {
		r, ok := cfg.Rate(tt.hw)
		if ok != tt.ok || r.USDPerGPUHour != tt.want || r.Estimate != tt.estimate || !strings.HasPrefix(r.Source, tt.source) {
			t.Errorf("Rate(%s) = %+v %v", tt.hw, r, ok)
		}
	}
}

func TestWriteGolden(t *testing.T) {
	rows := []schema.AtlasRow{
		row("b200-tp4", 8, "B200", 4, 1250, schema.F(500), schema.F(30)),
		row("b200-tp4", 32, "B200", 4, 2000, schema.F(2500), schema.F(60)),
		row("h100-tp8", 8, "H100", 8, 400, schema.F(300), nil),
	}
	rows[1].PowerWattsPerGPU, rows[1].TokensPerWatt = schema.F(900), schema.F(2.222)
	rows[1].Flags = []string{schema.FlagSteadyWindowUndercount}
	var atlasBuf bytes.Buffer
	if _, err := atlas.Aggregate(&atlasBuf, rows...); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := campaigndir.WriteFile(campaigndir.Abs(dir, campaigndir.Atlas()), atlasBuf.Bytes()); err != nil {
		t.Fatal(err)
	}
	s, err := SummarizeAtlas(context.Background(), campaigndir.Unrecorded(dir), campaigndir.Atlas(), "camp", ConfigFor(nil))
	if err != nil {
		t.Fatal(err)
	}
	names, err := Write(dir, s)
	if err != nil || len(names) != 3 {
		t.Fatalf("write: %v %v", names, err)
	}
	for _, name := range names {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(got), "Caveat: peak TPM") {
			t.Errorf("%s does not open with the caveat", name)
		}
		testkit.Golden(t, filepath.Join("testdata", name+".golden"), got)
	}
	var back schema.TPMSummary
	b, _ := os.ReadFile(campaigndir.Abs(dir, campaigndir.TPMJSON()))
	if err := json.Unmarshal(b, &back); err != nil || len(back.TPMRows()) != 3 || len(back.CostRows()) != 3 {
		t.Errorf("json round trip: %v, %d tpm rows, %d cost rows", err, len(back.TPMRows()), len(back.CostRows()))
	}
}

func TestSummarizeBadAtlas(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(campaigndir.Abs(dir, campaigndir.Atlas()), []byte("{\"output_tok_s_per_gpu\": \"fast\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := SummarizeAtlas(context.Background(), campaigndir.Unrecorded(dir), campaigndir.Atlas(), "camp", ConfigFor(nil))
	if err == nil || !strings.Contains(err.Error(), "atlas.jsonl:1") || !strings.Contains(err.Error(), "output_tok_s_per_gpu") {
		t.Errorf("err = %v", err)
	}
}

func TestGroupThousands(t *testing.T) {
	tests := []struct {
		v    float64
		d    int
		want string
	}{{1234567.891, 1, "1,234,567.9"}, {999, 0, "999"}, {1000, 0, "1,000"}, {-12345, 0, "-12,345"}, {0.5, 3, "0.500"}}
	for _, tt := range tests {
		if got := group(&tt.v, tt.d); got != tt.want {
			t.Errorf("group(%v) = %q, want %q", tt.v, got, tt.want)
		}
	}
}

// TestCaveatWording: the caveat names the statistic the SLA compares (the mean) and counts
// devices, never GPUs, so it reads right for a CPU or unknown accelerator.
func TestCaveatWording(t *testing.T) {
	c := Caveat(ConfigFor(&schema.Campaign{TPM: &schema.TPM{TTFTSLAMs: 500, TPOTSLAMs: 40, GPUsPerNode: 4}}))
	for _, want := range []string{"TTFT mean <= 500 ms", "TPOT mean <= 40 ms", "per node = 4 devices"} {
		if !strings.Contains(c, want) {
			t.Errorf("caveat lacks %q: %s", want, c)
		}
	}
	if strings.Contains(c, "GPU") {
		t.Errorf("caveat names GPUs: %s", c)
	}
}
