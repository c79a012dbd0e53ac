package champion

import (
	"bytes"
	"context"
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

func pt(arm, engine, delivery string, baseline bool, c int, outPerGPU, tpot float64) schema.AtlasRow {
	return schema.AtlasRow{
		Schema: "atlas_v1", Campaign: "ab", CellID: arm + "-cell", Concurrency: c, Arm: arm, Baseline: baseline,
		Engine: engine, EngineVersion: "v1", Delivery: delivery, CellStatus: schema.CellFull, PlotReady: true,
		TTFTAvgMs: schema.F(300), ITLAvgMs: schema.F(tpot), OutputTokPerSPerGPU: schema.F(outPerGPU),
		RequestThroughput: schema.F(1), SolRigor: schema.RigorL3, DCGMGrounded: true,
	}
}

// abRows: baseline vllm-base bests at 900 tok/s/GPU (c32, TPOT 48; c64's 1,200 misses the SLO at
// TPOT 70); sglang-a at 990 (c32, TPOT 45) → (990 − 900) ÷ 900 × 100 = +10.0 %; vllm-b's 950 misses
// (TPOT 55) so it bests at 700 (c16) → (700 − 900) ÷ 900 × 100 = −22.2 %; slow-d never meets the SLO.
func abRows() []schema.AtlasRow {
	return []schema.AtlasRow{
		pt("vllm-base", "vllm", "release", true, 8, 500, 30),
		pt("vllm-base", "vllm", "release", true, 32, 900, 48),
		pt("vllm-base", "vllm", "release", true, 64, 1200, 70),
		pt("sglang-a", "sglang", "overlay", false, 32, 990, 45),
		pt("vllm-b", "vllm", "release", false, 16, 700, 35),
		pt("vllm-b", "vllm", "release", false, 32, 950, 55),
		pt("slow-d", "vllm", "release", false, 8, 2000, 90),
	}
}

func selectRows(t *testing.T, opt Options, rows []schema.AtlasRow) schema.Champion {
	t.Helper()
	s, err := NewSelector("ab", opt)
	if err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		_ = s.Add(&rows[i])
	}
	c, err := s.Result()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestRankingAndRecommendation(t *testing.T) {
	c := selectRows(t, Options{}, abRows())
	if c.Champion != "sglang-a" || c.Baseline != "vllm-base" || c.Delivery != "overlay" || c.ArmsConsidered != 4 {
		t.Fatalf("champion %q baseline %q delivery %q considered %d", c.Champion, c.Baseline, c.Delivery, c.ArmsConsidered)
	}
	want := []struct {
		arm   string
		rank  int
		value float64
		delta float64
	}{{"vllm-base", 2, 900, 0}, {"sglang-a", 1, 990, 10}, {"vllm-b", 3, 700, -200.0 / 9}, {"slow-d", 0, 0, 0}}
	if len(c.Arms) != 4 {
		t.Fatalf("%d arms listed", len(c.Arms))
	}
	for i, w := range want {
		a := c.Arms[i]
		if a.Arm != w.arm || a.Rank != w.rank {
			t.Errorf("arms[%d] = %s rank %d, want %s rank %d", i, a.Arm, a.Rank, w.arm, w.rank)
			continue
		}
		if w.rank == 0 {
			if a.FocusValue != nil || a.DeltaVsBaseline != nil || a.PointsMeetSLO != 0 {
				t.Errorf("%s ranked without an SLO point: %+v", a.Arm, a)
			}
			continue
		}
		if *a.FocusValue != w.value || math.Abs(*a.DeltaVsBaseline-w.delta) > 1e-9 {
			t.Errorf("%s value %v delta %v, want %v %v", a.Arm, *a.FocusValue, *a.DeltaVsBaseline, w.value, w.delta)
		}
	}
	rec := c.Recommendation
	for _, s := range []string{"Ship arm sglang-a (sglang v1)", "990.0 output_tok_s_per_gpu at c32", "+10.0% against the baseline arm vllm-base (900.0)", "Rigor L3 (byte-grounded DCGM)", "Evidence for delivery overlay only."} {
		if !strings.Contains(rec, s) {
			t.Errorf("recommendation %q lacks %q", rec, s)
		}
	}
	if strings.Contains(rec, "release") {
		t.Errorf("recommendation names another delivery: %q", rec)
	}
	if !strings.Contains(strings.Join(c.Warnings, "\n"), "crosses deliveries") {
		t.Errorf("warnings %q", c.Warnings)
	}
	// top_x = 1: the baseline and the single best variant.
	c1 := selectRows(t, Options{TopX: 1}, abRows())
	if len(c1.Arms) != 2 || c1.Arms[0].Arm != "vllm-base" || c1.Arms[1].Arm != "sglang-a" {
		t.Errorf("top 1 arms %+v", c1.Arms)
	}
}

func TestSLOAndFocusChangeTheOutcome(t *testing.T) {
	tests := []struct {
		name     string
		opt      Options
		rows     []schema.AtlasRow
		champion string
		rec      string
	}{
		// With TPOT ≤ 75 ms the baseline's c64 (1,200) qualifies and beats sglang-a's 990:
		// (990 − 1200) ÷ 1200 × 100 = −17.5 %.
		{"looser SLO keeps baseline", Options{TPOTSLOMs: 75}, abRows()[:4], "vllm-base", "Keep the baseline arm vllm-base (vllm v1): 1200.0 output_tok_s_per_gpu at c64"},
		{"nothing meets", Options{TPOTSLOMs: 10}, abRows(), "", "No production pick: no arm has a point meeting TPOT <= 10 ms."},
		{"no baseline", Options{}, abRows()[3:5], "sglang-a", "Best arm sglang-a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := selectRows(t, tt.opt, tt.rows)
			if c.Champion != tt.champion || !strings.Contains(c.Recommendation, tt.rec) {
				t.Errorf("champion %q rec %q", c.Champion, c.Recommendation)
			}
		})
	}
	c := selectRows(t, Options{TPOTSLOMs: 75}, abRows()[:4])
	if !strings.Contains(c.Recommendation, "the best variant, sglang-a, is -17.5% against it") {
		t.Errorf("rec %q", c.Recommendation)
	}
}

func TestRigorLadder(t *testing.T) {
	l1 := pt("a", "vllm", "release", true, 8, 100, 20)
	l1.SolRigor, l1.DCGMGrounded = schema.RigorL1, false
	l2 := pt("b", "vllm", "release", false, 8, 100, 20)
	l2.SolRigor, l2.DCGMGrounded = schema.RigorL2, false
	l3 := pt("c", "vllm", "release", false, 8, 100, 20)
	l4 := pt("d", "vllm", "release", false, 8, 100, 20)
	l4.Extra = map[string]any{"kernel_profile": "profiles/d.ncu-rep"}
	c := selectRows(t, Options{TopX: 4}, []schema.AtlasRow{l1, l2, l3, l4})
	want := map[string]string{"a": "L1", "b": "L2", "c": "L3", "d": "L4"}
	for _, a := range c.Arms {
		if a.SolRigor != want[a.Arm] || !strings.Contains(a.RigorNote, RigorMeaning(a.SolRigor)) {
			t.Errorf("arm %s rigor %s (%s), want %s", a.Arm, a.SolRigor, a.RigorNote, want[a.Arm])
		}
	}
	if !strings.Contains(strings.Join(c.Warnings, "\n"), "arm a's best point rests on throughput only") {
		t.Errorf("warnings %q", c.Warnings)
	}
}

func TestUnrecordedDelivery(t *testing.T) {
	c := selectRows(t, Options{}, []schema.AtlasRow{pt("a", "vllm", "", true, 8, 100, 20)})
	if c.Delivery != "" || !strings.Contains(c.Recommendation, "evidence for no named delivery") || strings.Contains(c.Recommendation, "Evidence for delivery") {
		t.Errorf("rec %q", c.Recommendation)
	}
}

func TestErrors(t *testing.T) {
	if _, err := NewSelector("ab", Options{FocusMetric: "ttft"}); err == nil || !strings.Contains(err.Error(), `focus metric "ttft"`) {
		t.Errorf("bad metric: %v", err)
	}
	s, _ := NewSelector("ab", Options{})
	unarmed := pt("", "vllm", "release", false, 8, 100, 20)
	_ = s.Add(&unarmed)
	if _, err := s.Result(); err == nil || !strings.Contains(err.Error(), "arm") {
		t.Errorf("no arms: %v", err)
	}
	s, _ = NewSelector("ab", Options{})
	for _, r := range []schema.AtlasRow{pt("a", "x", "d", true, 1, 1, 1), pt("b", "x", "d", true, 1, 1, 1)} {
		_ = s.Add(&r)
	}
	if _, err := s.Result(); err == nil || !strings.Contains(err.Error(), "a, b are all marked baseline") {
		t.Errorf("two baselines: %v", err)
	}
}

func TestSelectFileAndWriteGolden(t *testing.T) {
	dir := t.TempDir()
	var buf bytes.Buffer
	if _, err := atlas.Aggregate(&buf, abRows()...); err != nil {
		t.Fatal(err)
	}
	if err := campaigndir.WriteFile(campaigndir.Abs(dir, campaigndir.Atlas()), buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	c, err := SelectAtlas(context.Background(), campaigndir.Unrecorded(dir), campaigndir.Atlas(), "ab", Options{})
	if err != nil {
		t.Fatal(err)
	}
	rel, err := Write(dir, c)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(campaigndir.Abs(dir, rel))
	testkit.Golden(t, filepath.Join("testdata", "champion.golden.json"), got)
}
