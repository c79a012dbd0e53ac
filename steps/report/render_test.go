package report_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/report"
	"github.com/perfdag/perfdag/steps/report/smoke"
	"github.com/perfdag/perfdag/steps/testkit"
)

// pdfText renders pdf to text with pdftotext -layout and collapses runs of whitespace, so
// phrases match however the layout spaced them.
func pdfText(t *testing.T, pdf string) string {
	t.Helper()
	bin := testkit.NeedTool(t, "pdftotext")
	out, err := exec.Command(bin, "-layout", pdf, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext %s: %v", pdf, err)
	}
	return strings.Join(strings.Fields(string(out)), " ")
}

func mustContain(t *testing.T, text string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("report text lacks %q", w)
		}
	}
}

var allTitles = []string{report.TitleCover, report.TitleScatter, report.TitleHeatmap, report.TitleAA, report.TitleTPM,
	report.TitleDCGM, report.TitleRoofline, report.TitleChampion, report.TitleSpec, report.TitleCompare}

func f(x float64) *float64 { return &x }

// partialInput is a small AA campaign with a failed cell and neither DCGM, TPM, roofline,
// champion nor spec-decode data.
func partialInput() report.Input {
	base := schema.AtlasRow{Schema: "atlas_v1", Campaign: "aa-partial", Model: "moonshotai/Kimi-K2.6", Hardware: "B200", Quant: "NVFP4",
		TensorParallel: 8, ParallelStrategy: "EP", MaxNumBatchedTokens: 8192, Engine: "vllm", EngineVersion: "v0.11.2",
		Delivery: "overlay", CacheMode: "cold", Backend: "perfdag", GPUs: 8, SolRigor: "L1"}
	ok := func(cell, shape string, c int, ttft, ttfo, cov, speed, thr float64) schema.AtlasRow {
		r := base
		r.CellID, r.Shape, r.Concurrency, r.CellStatus, r.PlotReady = cell, shape, c, "full", true
		r.NumPrompts, r.RequestCount = 3*c+10, 3*c+10
		r.TTFTAvgMs, r.TTFOAvgMs, r.TTFOCoverage, r.AAOutputSpeed, r.OutputTokPerS = f(ttft), f(ttfo), f(cov), f(speed), f(thr)
		r.RequestThroughput, r.OutputTokPerSPerGPU, r.TokPerSPerUser = f(thr/1000), f(thr/8), f(speed)
		r.MeanInputTokens, r.MeanOutputTokens = f(1000), f(1000)
		r.ReasoningField = "reasoning_content"
		r.Extra = map[string]any{"point_status": "ok"}
		return r
	}
	failed := func(c int) schema.AtlasRow {
		r := base
		r.CellID, r.Shape, r.Concurrency, r.CellStatus = "aa-100k", "aa-100k", c, "failed"
		r.NumPrompts, r.ErrorCount = 10, 10
		r.Extra = map[string]any{"point_status": "failed"}
		return r
	}
	return report.Input{
		Campaign: &schema.Campaign{Version: 1, Campaign: "aa-partial", Kind: "latency",
			Endpoints: map[string]schema.Endpoint{"main": {URL: "http://vllm.svc:8000", Model: "moonshotai/Kimi-K2.6", APIKeyEnv: "INFERENCE_API_KEY"}}},
		Atlas: []schema.AtlasRow{
			ok("aa-1k", "aa-1k", 1, 412.3, 3987.6, 0.85, 88.1, 86.2),
			ok("aa-1k", "aa-1k", 10, 655.1, 4410.2, 0.8, 71.4, 690.7),
			ok("aa-10k", "aa-10k", 1, 1234.5, 5311.9, 1, 80.3, 79.9),
			ok("aa-10k", "aa-10k", 10, 2345.6, 6022.4, 0.95, 60.2, 580.4),
			failed(1), failed(10),
		},
	}
}

func TestRenderWithPartialDataSaysWhatIsMissing(t *testing.T) {
	in := partialInput()
	in.Campaign.Report = &schema.Report{HeatmapConcurrencies: []int{1, 10}}
	out := filepath.Join(t.TempDir(), "out.pdf")
	if err := report.Render(context.Background(), in, out); err != nil {
		t.Fatalf("render with partial data: %v", err)
	}
	text := pdfText(t, out)
	mustContain(t, text, allTitles...)
	mustContain(t, text,
		// 3 cells: aa-1k and aa-10k full, aa-100k failed; 4 plot-ready points.
		"Coverage: 3 atlas cells | 2 full sweeps | 0 partial sweeps | 1 failed cell | 4 plot-ready concurrency points",
		"No DCGM data in this campaign.",
		"No roofline sweep in this campaign.",
		"No TPM summary (tpm_summary.json) in this campaign.",
		"No champion selection (champion.json) in this campaign.",
		"No speculative-decoding data in this campaign.",
		"Settle discipline: NOT used",
		"Cache mode: cold prefix cache",
		"ISL/OSL aa-1k: declared 1,000/1,000 tokens",
		// AA table: TTFT, TTFO, coverage, output speed and throughput of the aa-1k c1 row.
		"aa-1k aa-1k 1 412 3,988 85.0 % 88.1 86.2 reasoning_content",
		"aa-100k aa-100k 1 failed n/a n/a",
		// heatmap_concurrencies [1, 10]: the failed aa-100k cell is grey "failed" at C=10.
		"Concurrency C = 1", "Concurrency C = 10", "B200 NVFP4 TP8 EP aa-100k failed failed",
		"Evidence scope These numbers are evidence for delivery overlay only",
	)
	// The contents table on the cover marks every page without data; an optional page of a
	// feature the campaign does not use is not listed at all.
	for _, p := range report.Contents(in) {
		if !p.HasData && p.Listed() && !strings.Contains(text, "no data: "+p.Missing) {
			t.Errorf("cover does not say %q lacks data", p.Title)
		}
		if !p.Listed() && strings.Contains(text, p.Title) {
			t.Errorf("cover lists %q although the campaign has no such feature", p.Title)
		}
	}
}

func TestContents(t *testing.T) {
	got := map[string]bool{}
	for _, p := range report.Contents(partialInput()) {
		got[p.Title] = p.HasData
	}
	want := map[string]bool{report.TitleCover: true, report.TitleScatter: true, report.TitleHeatmap: true, report.TitleAA: true,
		report.TitleTPM: false, report.TitleDCGM: false, report.TitleRoofline: false, report.TitleChampion: false, report.TitleSpec: false,
		report.TitleCompare: false}
	for title, has := range want {
		if got[title] != has {
			t.Errorf("%s: HasData = %v, want %v", title, got[title], has)
		}
	}
}

func TestRenderEmptyCampaign(t *testing.T) {
	out := filepath.Join(t.TempDir(), "empty.pdf")
	if err := report.Render(context.Background(), report.Input{}, out); err != nil {
		t.Fatalf("render of nothing: %v", err)
	}
	text := pdfText(t, out)
	mustContain(t, text, allTitles...)
	mustContain(t, text, "Coverage: 0 atlas cells", "No plot-ready points in this campaign.", "No atlas rows in this campaign.")
}

func TestRenderNeverShowsTheAPIKey(t *testing.T) {
	const secret = "sk-live-9f8e7d6c5b4a"
	t.Setenv("INFERENCE_API_KEY", secret)
	in := partialInput()
	in.Campaign.Description = "campaign run with key " + secret
	in.Campaign.Endpoints = map[string]schema.Endpoint{"main": {
		URL: "https://bench:hunter2-password@api.example.com/v1?api_key=" + secret, Model: "m", APIKeyEnv: "INFERENCE_API_KEY"}}
	in.Run = &campaigndir.Info{Source: &schema.Source{Patch: "applied with token " + secret}}
	out := filepath.Join(t.TempDir(), "out.pdf")
	if err := report.Render(context.Background(), in, out); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	text := pdfText(t, out)
	for _, leak := range []string{secret, "hunter2-password"} {
		if strings.Contains(text, leak) || strings.Contains(string(raw), leak) {
			t.Errorf("report contains %q", leak)
		}
	}
	mustContain(t, text, "read from $INFERENCE_API_KEY", "https://bench@api.example.com/v1", "[redacted]")
}

func TestRenderIsAtomic(t *testing.T) {
	dir := t.TempDir()
	out := campaigndir.Abs(dir, campaigndir.Report())
	if err := os.WriteFile(out, []byte("old report"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A cancelled render leaves the previous report untouched and no temp file behind.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := report.Render(ctx, partialInput(), out); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled render: err = %v, want context.Canceled", err)
	}
	if b, _ := os.ReadFile(out); string(b) != "old report" {
		t.Errorf("cancelled render replaced the report")
	}
	if err := report.Render(context.Background(), partialInput(), out); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil || !strings.HasPrefix(string(b), "%PDF-") {
		t.Fatalf("report is not a PDF (err %v)", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only report.pdf (temp files left behind?)", len(entries))
	}
	// An unwritable destination is an error naming the path.
	bad := filepath.Join(dir, "missing-dir", "out.pdf")
	if err := report.Render(context.Background(), partialInput(), bad); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("render into a missing directory: err = %v, want one naming %s", err, bad)
	}
}

func TestRenderRejectsADuplicatedAtlasRow(t *testing.T) {
	in := partialInput()
	in.Atlas = append(in.Atlas, in.Atlas[0])
	err := report.Render(context.Background(), in, filepath.Join(t.TempDir(), "r.pdf"))
	if err == nil || !strings.Contains(err.Error(), "aa-1k/c1") {
		t.Errorf("duplicate atlas row: err = %v, want one naming aa-1k/c1", err)
	}
}

func TestRenderSmokeFixture(t *testing.T) {
	in, err := smoke.Input()
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "smoke.pdf")
	if err := report.Render(context.Background(), in, out); err != nil {
		t.Fatal(err)
	}
	text := pdfText(t, out)
	mustContain(t, text, allTitles...)
	mustContain(t, text, "Coverage: 40 atlas cells | 38 full sweeps | 1 partial sweep | 1 failed cell | 232 plot-ready concurrency points")
	for _, p := range report.Contents(in) {
		// the fixture is synthetic throughout: it holds no measured-beside-imported point
		if !p.HasData && p.Title != report.TitleAA && p.Title != report.TitleCompare && p.Listed() {
			t.Errorf("smoke fixture: %s has no data", p.Title)
		}
	}
	// Numbers from the data: the heatmap's GB300 EP MTP row at C=8 and the champion.
	byMBT := map[int]string{}
	for _, r := range in.Atlas {
		if r.Hardware == "GB300" && r.MTP && r.Concurrency == 8 {
			byMBT[r.MaxNumBatchedTokens] = report.FormatNumber(r.OutputTokPerSPerGPU)
		}
	}
	var vals []string
	for _, mbt := range []int{1024, 2048, 4096, 8192, 16384} {
		vals = append(vals, byMBT[mbt])
	}
	mustContain(t, text, "GB300 NVFP4 TP4 EP MTP "+strings.Join(vals, " "))
	mustContain(t, text, "Champion: "+in.Champion.Champion, in.TPM.Caveat[:60])
}

func TestRenderContinuesLongPagesUnderTheirTitle(t *testing.T) {
	in := partialInput()
	// Eight mbt values (more scatter rows than one page holds) and 30 cells at C=8 (a long AA table).
	var rows []schema.AtlasRow
	for i := range 30 {
		for _, c := range []int{1, 8} {
			r := in.Atlas[0]
			r.CellID = "cell-" + string(rune('a'+i%26)) + string(rune('a'+i/26))
			r.Concurrency = c
			r.MaxNumBatchedTokens = 256 << (i % 8)
			r.TTFTAvgMs = f(100 + float64(i*c))
			rows = append(rows, r)
		}
	}
	in.Atlas = rows
	out := filepath.Join(t.TempDir(), "long.pdf")
	if err := report.Render(context.Background(), in, out); err != nil {
		t.Fatal(err)
	}
	text := pdfText(t, out)
	mustContain(t, text, report.TitleScatter+" (continued)", report.TitleAA+" (continued)", "mbt 32768")
}

func TestCoverAnswersAtAGlance(t *testing.T) {
	in := partialInput()
	in.Gates = []schema.GateVerdict{
		{Gate: "ttft", Node: "run-shape[aa-1k/c1]", Severity: schema.SeverityFail, Passed: false, Message: "TTFT p50 412 ms > 400 ms"},
		{Gate: "ttft", Node: "run-shape[aa-1k/c10]", Severity: schema.SeverityFail, Passed: true},
	}
	out := filepath.Join(t.TempDir(), "out.pdf")
	if err := report.Render(context.Background(), in, out); err != nil {
		t.Fatal(err)
	}
	text := pdfText(t, out)
	mustContain(t, text,
		"Verdict: FAIL (1 gate check failed, 0 warned, 1 passed); 1 cell incomplete.",
		"Headline numbers", "Peak output tok/s/GPU", "TTFT p50 (ms), lowest C",
		"B200 NVFP4 TP8 EP aa-1k 86.3 at C=10",
		"Request errors: 20 of 126 requests failed, on 2 points",
		"Grounding: none of the 4 plot-ready points is DCGM byte-grounded",
		// statistic names on axes and columns: p50 where the CLI and gates use it, mean where AA defines it
		"TTFT p50 (ms)", "TTFT mean", "TTFO mean",
	)
	if strings.Contains(text, "TTFT avg") {
		t.Error("an unlabelled 'avg' statistic is still printed")
	}
}
