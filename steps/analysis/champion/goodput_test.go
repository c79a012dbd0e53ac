package champion

import (
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
)

// goodputRows: vllm-base's c64 has the most output tok/s/GPU but a mean TPOT of 70 ms (out
// under tpot_slo_ms 50) and 6 good requests/s on 2 GPUs (3 per GPU); sglang-a's c32 has less
// throughput and a mean TPOT of 45, but 8 good requests/s on 2 GPUs (4 per GPU, interval 3.5–4.5).
func goodputRows() []schema.AtlasRow {
	g := func(r schema.AtlasRow, goodput, att float64) schema.AtlasRow {
		r.GPUs, r.GoodputReqS, r.SLOAttainment = 2, schema.F(goodput), schema.F(att)
		r.Intervals = schema.Intervals{"goodput_req_s": {Lo: goodput - 1, Hi: goodput + 1, Method: "batch-means", N: 10}}
		return r
	}
	return []schema.AtlasRow{
		g(pt("vllm-base", "vllm", "release", true, 32, 900, 48), 5, 0.99),
		g(pt("vllm-base", "vllm", "release", true, 64, 1200, 70), 6, 0.7),
		g(pt("sglang-a", "sglang", "overlay", false, 32, 990, 45), 8, 0.995),
	}
}

// With the arms' cells under one per-request slo, champion-select ranks them by goodput per GPU
// at their best point — every point counts (the per-request targets are inside goodput, the mean
// TPOT filter is not applied), so vllm-base's c64 is its best — and says so in champion.json and
// the recommendation; the focus interval is the goodput's ÷ GPUs. Without the slo the same rows
// rank by output tok/s/GPU under the TPOT SLO.
func TestRankByGoodputUnderSLO(t *testing.T) {
	slo := &schema.SLO{TTFTMs: schema.F(2000), TPOTMs: schema.F(50)}
	c := selectRows(t, Options{SLO: slo}, goodputRows())
	if c.FocusMetric != "goodput_req_s_per_gpu" || c.SLO == nil || c.Champion != "sglang-a" {
		t.Fatalf("focus %s slo %v champion %s", c.FocusMetric, c.SLO, c.Champion)
	}
	byArm := map[string]schema.ChampionArm{}
	for _, a := range c.Arms {
		byArm[a.Arm] = a
	}
	base, win := byArm["vllm-base"], byArm["sglang-a"]
	if *base.FocusValue != 3 || base.Concurrency != 64 || base.PointsMeetSLO != 2 || *win.FocusValue != 4 || *win.DeltaVsBaseline < 33.3 || *win.DeltaVsBaseline > 33.4 {
		t.Errorf("base %+v, winner %+v", base, win)
	}
	if win.GoodputReqS == nil || *win.GoodputReqS != 8 || *win.SLOAttainment != 0.995 {
		t.Errorf("winner goodput %v attainment %v", win.GoodputReqS, win.SLOAttainment)
	}
	if iv := win.FocusInterval; iv == nil || iv.Lo != 3.5 || iv.Hi != 4.5 || !strings.Contains(iv.Method, "goodput_req_s ÷ 2 GPUs") {
		t.Errorf("focus interval %+v", win.FocusInterval)
	}
	for _, want := range []string{"Ship arm sglang-a", "4 goodput_req_s_per_gpu at c32 (cell sglang-a-cell, SLO attainment 99.5 %)",
		"meets the per-request SLO (TTFT <= 2000 ms, TPOT <= 50 ms)", "+33.3% against the baseline arm vllm-base"} {
		if !strings.Contains(c.Recommendation, want) {
			t.Errorf("recommendation %q lacks %q", c.Recommendation, want)
		}
	}
	c = selectRows(t, Options{}, goodputRows())
	if c.FocusMetric != "output_tok_s_per_gpu" || c.SLO != nil || c.Champion != "sglang-a" || c.Arms[0].Concurrency != 32 {
		t.Errorf("without slo: focus %s, slo %v, champion %s, baseline best c%d", c.FocusMetric, c.SLO, c.Champion, c.Arms[0].Concurrency)
	}
	// an arm none of whose requests met the targets has no goodput point: unranked
	rows := goodputRows()
	rows[2].GoodputReqS = schema.F(0)
	c = selectRows(t, Options{SLO: slo}, rows)
	if c.Champion != "vllm-base" || c.Arms[1].Rank != 0 || !strings.Contains(c.Arms[1].RigorNote, "no point has a request meeting the per-request SLO") {
		t.Errorf("sglang-a without a good request: champion %s, arm %+v", c.Champion, c.Arms[1])
	}
}

func TestArmsSLO(t *testing.T) {
	a, b := &schema.SLO{TPOTMs: schema.F(50)}, &schema.SLO{TPOTMs: schema.F(40)}
	cell := func(id, arm string, s *schema.SLO) schema.Cell {
		c := schema.Cell{ID: id, SLO: s}
		c.Arm = arm
		return c
	}
	if s, note := ArmsSLO([]schema.Cell{cell("x", "1", a), cell("y", "2", a), cell("z", "", nil)}); s != a || note != "" {
		t.Errorf("same slo: %v %q", s, note)
	}
	if s, note := ArmsSLO([]schema.Cell{cell("x", "1", nil), cell("y", "2", nil)}); s != nil || note != "" {
		t.Errorf("no slo: %v %q", s, note)
	}
	if s, note := ArmsSLO([]schema.Cell{cell("x", "1", a), cell("y", "2", nil)}); s != nil || !strings.Contains(note, "cells x declare a per-request slo and cells y do not") {
		t.Errorf("mixed: %v %q", s, note)
	}
	if s, note := ArmsSLO([]schema.Cell{cell("x", "1", a), cell("y", "2", b)}); s != nil || !strings.Contains(note, "different per-request slo targets") {
		t.Errorf("different: %v %q", s, note)
	}
}
