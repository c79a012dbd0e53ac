package championselect_test

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/engine/run"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	championselect "github.com/perfdag/perfdag/steps/champion-select"
	"github.com/perfdag/perfdag/steps/testkit/stepstest"
)

func campaign(with string) string {
	return `version: 1
campaign: ab
endpoints:
  main: {url: "http://127.0.0.1:9", model: m}
defaults: {hardware: B200, quant: FP8, tensor_parallel: 8}
cells:
  - {id: base, arm: base, baseline: true, engine: vllm, delivery: release, workload: {shape: aa-1k}, concurrencies: [1, 2, 4]}
  - {id: sgl, arm: sgl, engine: sglang, delivery: release, workload: {shape: aa-1k}, concurrencies: [1, 2, 4]}
  - {id: patch, arm: patch, engine: vllm, delivery: infr-patch, workload: {shape: aa-1k}, concurrencies: [1, 2, 4]}
pipeline:
  - {id: run, kind: run-shape}
  - {id: atlas, kind: aggregate, needs: [run]}
  - {id: champion, kind: champion-select, needs: [atlas]` + with + `}
`
}

// arms writes three arms' points: output tok/s/GPU = 50·c × scale; base ×1, sgl ×1.25,
// patch ×1.5 but with a 60 ms TPOT at c4.
func arms(t *testing.T, dir string) {
	for _, a := range []struct {
		cell  string
		scale float64
	}{{"base", 1}, {"sgl", 1.25}, {"patch", 1.5}} {
		for _, c := range []int{1, 2, 4} {
			p := stepstest.OKPoint(a.cell, c)
			p.OutputTokPerSPerGPU *= a.scale
			if a.cell == "patch" && c == 4 {
				p.ITL.Avg = 60
			}
			stepstest.WritePoint(t, dir, p)
		}
	}
}

func TestChampionThroughEngine(t *testing.T) {
	dir := t.TempDir()
	arms(t, dir)
	tests := []struct {
		name, with string
		want       championselect.Result
		outcome    string
	}{
		// TPOT SLO 50 ms: base c4 = 200, sgl c4 = 1.25 × 200 = 250, patch's c4 (TPOT 60)
		// is out, so patch's best is c2 = 1.5 × 100 = 150. Champion sgl: (250 − 200) ÷ 200 = +25 %.
		{"default SLO", "", championselect.Result{Champion: "sgl", Baseline: "base", Delivery: "release",
			FocusMetric: "output_tok_s_per_gpu", FocusValue: 250, DeltaPct: 25, VsBaseline: true, Rigor: "L1", Arms: 3, File: campaigndir.Champion(), Separated: "unknown"}, run.OutRan},
		// TPOT SLO 70 ms admits patch's c4 = 1.5 × 200 = 300: (300 − 200) ÷ 200 = +50 %, and
		// the recommendation is evidence for infr-patch only.
		{"looser SLO", ", with: {tpot_slo_ms: 70}", championselect.Result{Champion: "patch", Baseline: "base", Delivery: "infr-patch",
			FocusMetric: "output_tok_s_per_gpu", FocusValue: 300, DeltaPct: 50, VsBaseline: true, Rigor: "L1", Arms: 3, File: campaigndir.Champion(), Separated: "unknown"}, run.OutRan},
		// Ranking by request throughput (0.5·c req/s for every arm): all arms tie at 2 req/s
		// and the tie goes to the arm name in order: base itself, delta 0.
		{"other metric", ", with: {focus_metric: request_throughput, tpot_slo_ms: 70}", championselect.Result{Champion: "base", Baseline: "base", Delivery: "release",
			FocusMetric: "request_throughput", FocusValue: 2, DeltaPct: 0, VsBaseline: true, Rigor: "L1", Arms: 3, File: campaigndir.Champion(), Separated: "unknown"}, run.OutRan},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, recs := stepstest.Run(t, dir, t.TempDir(), campaign(tc.with), nil)
			if out["champion"] != tc.outcome || out["atlas"] == run.OutFailed {
				t.Fatalf("outcomes %v", out)
			}
			var res championselect.Result
			stepstest.Result(t, recs, "champion", &res)
			res.Warnings = 0 // counted, not compared: their wording belongs to steps/analysis/champion
			if math.Abs(res.DeltaPct-tc.want.DeltaPct) < 1e-9 {
				res.DeltaPct = tc.want.DeltaPct
			}
			if res != tc.want {
				t.Errorf("result\n got %+v\nwant %+v", res, tc.want)
			}
			var ch schema.Champion
			b, err := os.ReadFile(campaigndir.Abs(dir, campaigndir.Champion()))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &ch); err != nil {
				t.Fatal(err)
			}
			if ch.Champion != tc.want.Champion || recs["champion"].Summary != ch.Recommendation {
				t.Errorf("champion.json names %q; summary %q vs recommendation %q", ch.Champion, recs["champion"].Summary, ch.Recommendation)
			}
			if !strings.Contains(ch.Recommendation, "Evidence for delivery "+tc.want.Delivery+" only") {
				t.Errorf("recommendation does not name delivery %s alone: %s", tc.want.Delivery, ch.Recommendation)
			}
			if tc.name != "default SLO" && out["atlas"] != run.OutReused {
				t.Errorf("changing champion params re-ran the atlas (%s)", out["atlas"])
			}
		})
	}
}

func TestCheckRejectsBadParams(t *testing.T) {
	tests := []struct {
		name, src, want string
		line            int
	}{
		{"focus metric", campaign(", with: {focus_metric: ttft}"), `focus_metric "ttft" is not a metric`, 13},
		{"negative slo", campaign(", with: {tpot_slo_ms: -5}"), "with.tpot_slo_ms must be between 0 and 60000, got -5", 13},
		{"negative top_x", campaign(", with: {top_x: -1}"), "with.top_x must be between 0 and 100, got -1", 13},
		{"no aggregate needed", strings.Replace(campaign(""), "needs: [atlas]", "needs: []", 1), "does not need an aggregate step", 13},
		{"no arms", strings.NewReplacer("arm: base, baseline: true, ", "", "arm: sgl, ", "", "arm: patch, ", "").Replace(campaign("")), "no cell has an arm", 7},
		{"two baselines", strings.Replace(campaign(""), "arm: sgl,", "arm: sgl, baseline: true,", 1), "arm base is the baseline already", 8},
		{"baseline without arm", strings.Replace(campaign(""), "arm: sgl,", "baseline: true,", 1), "is marked baseline but has no arm", 8},
		{"goodput without slo", campaign(", with: {focus_metric: goodput_req_s}"), "focus_metric goodput_req_s counts requests meeting the cells' per-request slo, but no arm's cell declares one", 13},
		{"goodput under mixed slo", strings.Replace(campaign(", with: {focus_metric: goodput_req_s_per_gpu}"), "concurrencies: [1, 2, 4]}", "concurrencies: [1, 2, 4], slo: {tpot_ms: 50}}", 1),
			"but cells base declare a per-request slo and cells sgl, patch do not", 13},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if d := stepstest.OneProblem(t, tc.src); d.Line != tc.line || !strings.Contains(d.Message, tc.want) {
				t.Errorf("got %s, want line %d: %s", d.Error(), tc.line, tc.want)
			}
		})
	}
	if err := stepstest.Validate(t, campaign(", with: {focus_metric: tokens_per_watt, tpot_slo_ms: 40, top_x: 2}")); err != nil {
		t.Errorf("valid campaign rejected: %v", err)
	}
}

// TestNoAtlasNamesTheFix runs the kind by hand in a directory without atlas.jsonl.
func TestNoAtlasNamesTheFix(t *testing.T) {
	dir := t.TempDir()
	task := &engine.Task{Node: "champion", Step: "champion", Campaign: &schema.Campaign{Campaign: "ab"}, Params: &championselect.Params{}, Dir: dir}
	_, err := championselect.Kind.Run(context.Background(), task)
	if err == nil || !strings.Contains(err.Error(), "no atlas among its inputs") || !strings.Contains(err.Error(), "needs: [aggregate]") {
		t.Errorf("error %v", err)
	}
	if _, err := os.Stat(campaigndir.Abs(dir, campaigndir.Champion())); err == nil {
		t.Error("champion.json written without an atlas")
	}
}

// TestChampionByGoodputThroughEngine: when every arm's cells declare the same per-request slo,
// champion-select ranks by goodput per GPU without being told: patch has the most throughput
// (1.5 × base) but the fewest good requests, sgl the most (c4: 3 req/s on 8 GPUs); champion.json
// names the slo and each arm's goodput and attainment.
func TestChampionByGoodputThroughEngine(t *testing.T) {
	dir := t.TempDir()
	for _, a := range []struct {
		cell    string
		scale   float64
		goodput float64 // at c4; c1, c2 have a quarter, a half
	}{{"base", 1, 2}, {"sgl", 1.25, 3}, {"patch", 1.5, 1}} {
		for _, c := range []int{1, 2, 4} {
			p := stepstest.OKPoint(a.cell, c)
			p.OutputTokPerSPerGPU *= a.scale
			g, att := a.goodput*float64(c)/4, 0.9
			p.GoodputReqS, p.SLOAttainment = &g, &att
			p.Goodput = &schema.Goodput{SLO: schema.SLO{TPOTMs: schema.F(50)}, Requests: p.NumPrompts, Good: int(0.9 * float64(p.NumPrompts))}
			stepstest.WritePoint(t, dir, p)
		}
	}
	src := strings.ReplaceAll(campaign(""), "concurrencies: [1, 2, 4]}", "concurrencies: [1, 2, 4], slo: {tpot_ms: 50}}")
	out, recs := stepstest.Run(t, dir, t.TempDir(), src, nil)
	if out["champion"] != run.OutRan {
		t.Fatalf("outcomes %v", out)
	}
	var res championselect.Result
	stepstest.Result(t, recs, "champion", &res)
	if res.Champion != "sgl" || res.FocusMetric != "goodput_req_s_per_gpu" || res.FocusValue != 3.0/8 || math.Abs(res.DeltaPct-50) > 1e-9 {
		t.Errorf("result %+v, want sgl by goodput_req_s_per_gpu 0.375, +50 %%", res)
	}
	var ch schema.Champion
	b, err := os.ReadFile(campaigndir.Abs(dir, campaigndir.Champion()))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &ch); err != nil {
		t.Fatal(err)
	}
	if ch.SLO == nil || ch.SLO.String() != "TPOT <= 50 ms" || ch.Arms[1].GoodputReqS == nil || *ch.Arms[1].GoodputReqS != 3 || *ch.Arms[1].SLOAttainment != 0.9 {
		t.Errorf("champion.json slo %v, arm %+v", ch.SLO, ch.Arms[1])
	}
}
