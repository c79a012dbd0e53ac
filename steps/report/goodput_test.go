package report_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/report"
)

// goodputInput is partialInput with a per-request slo on cell aa-1k: c1 all good, c10 99.5 %
// (one TTFT miss, one failed request), and a search whose knee c10 carries the goodput.
func goodputInput() report.Input {
	in := partialInput()
	slo := schema.SLO{TTFTMs: f(2000), TPOTMs: f(50)}
	for i := range in.Atlas {
		r := &in.Atlas[i]
		if r.CellID != "aa-1k" {
			continue
		}
		switch r.Concurrency {
		case 1:
			r.Goodput = &schema.Goodput{SLO: slo, Requests: 13, Good: 13}
			r.SLOAttainment, r.GoodputReqS = f(1), f(0.0862)
		case 10:
			r.Goodput = &schema.Goodput{SLO: slo, Requests: 400, Good: 398, Failed: 1, MissedTTFT: 1, NoTPOT: 2}
			r.SLOAttainment, r.GoodputReqS = f(0.995), f(0.687)
			r.Intervals = schema.Intervals{"slo_attainment": {Lo: 0.985, Hi: 1, Method: "batch-means+wilson", N: 10},
				"goodput_req_s": {Lo: 0.65, Hi: 0.72, Method: "batch-means", N: 10}}
		}
	}
	in.Sweeps = []schema.SweepResult{{Schema: schema.SchemaSweep, Cell: "aa-1k", Mode: schema.SweepSearch, SLO: "slo_attainment >= 0.99", From: 1, To: 10, Bound: 6,
		Knee: 10, KneeOutputTokS: f(690.7), KneeRequestThroughput: f(0.69), KneeGoodputReqS: f(0.687), KneeSLOAttainment: f(0.995),
		Probes: []schema.SweepProbe{{Concurrency: 1, Met: true, Status: "ok", Throughput: f(86.2)}, {Concurrency: 10, Met: true, Status: "ok", Throughput: f(690.7)}}}}
	in.Champion = &schema.Champion{Schema: schema.SchemaChampion, Campaign: "aa-partial", FocusMetric: "goodput_req_s_per_gpu", TPOTSLOMs: 50, TopX: 3,
		SLO: &slo, Champion: "a", ArmsConsidered: 2, Delivery: "overlay",
		Recommendation: "Best arm a (vllm): 0.0859 goodput_req_s_per_gpu at c10 (cell aa-1k, SLO attainment 99.5 %) meets the per-request SLO (" + slo.String() + ").",
		Arms: []schema.ChampionArm{{Arm: "a", Engine: "vllm", Delivery: "overlay", Rank: 1, Points: 2, PointsMeetSLO: 2, FocusValue: f(0.0859),
			CellID: "aa-1k", Concurrency: 10, TPOTMs: f(12), GoodputReqS: f(0.687), SLOAttainment: f(0.995), SolRigor: "L1"}}}
	return in
}

// A cell with a per-request slo gets the goodput page (targets, each point's goodput and
// attainment with ±, misses by target) in the PDF and the HTML, and the frontier table shows
// the real goodput at the knee beside the knee's throughput; a campaign without slo has no
// goodput page and its frontier table no goodput column.
func TestGoodputPageAndFrontierColumn(t *testing.T) {
	in := goodputInput()
	out := filepath.Join(t.TempDir(), "r.pdf")
	if err := report.Render(context.Background(), in, out); err != nil {
		t.Fatal(err)
	}
	text := pdfText(t, out)
	mustContain(t, text, report.TitleGoodput, "aa-1k: TTFT <= 2000 ms, TPOT <= 50 ms", "400 (1)", "398", "99.5 % ± 0.8 %",
		"0.687 ± 0.035", "0.0862", "0.0859", "Attained", "Knee tok/s", "Goodput req/s", "0.69 (99.5 %)", "a one-token answer has none",
		"Focus metric goodput_req_s_per_gpu (goodput: requests per second that met every per-request target of the cells' slo, TTFT <= 2000 ms, TPOT <= 50 ms;",
		"meets the per-request SLO (TTFT <= 2000 ms, TPOT <= 50 ms)")
	page, err := report.BuildHTML(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if doc := string(page); !strings.Contains(doc, "<h2>"+report.TitleGoodput+"</h2>") || !strings.Contains(doc, "99.5 % ± 0.8 %") {
		t.Error("the HTML lacks the goodput page")
	}

	plain := partialInput()
	plain.Sweeps = in.Sweeps
	plain.Sweeps[0].KneeGoodputReqS, plain.Sweeps[0].KneeSLOAttainment = nil, nil
	if err := report.Render(context.Background(), plain, out); err != nil {
		t.Fatal(err)
	}
	text = pdfText(t, out)
	if strings.Contains(text, report.TitleGoodput) || strings.Contains(text, "Goodput req/s") {
		t.Error("a campaign without slo shows goodput")
	}
	mustContain(t, text, "Knee tok/s")
}
