package baseline

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v2"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/analysis/atlas"
	"github.com/perfdag/perfdag/steps/testkit"
)

const fixtureConfig = `version: 1
campaign: weekly
endpoints:
  main: {url: "http://user:pw@vllm.svc:8000/v1?token=x", model: kimi-k2}
cells:
  - id: aa-1k
    workload: {shape: aa-1k}
    concurrencies: [1, 16, 32, 64]
source: {engine: vllm, engine_version: v0.11.2, commit: abc123}
`

// fixtureRow is a measured atlas row whose numbers scale with the concurrency.
func fixtureRow(cell string, c int, scale float64) schema.AtlasRow {
	return schema.AtlasRow{
		Schema: "atlas_v1", Campaign: "weekly", CellID: cell, Concurrency: c,
		Model: "moonshotai/Kimi-K2", Hardware: "B200", Quant: "NVFP4", TensorParallel: 8,
		ParallelStrategy: "EP", MTP: true, Engine: "vllm", EngineVersion: "v0.11.2", Shape: "aa-1k",
		Backend: atlas.BackendPerfdag, GPUs: 8, CellStatus: schema.CellPartial, PlotReady: true,
		NumPrompts: 3 * c, RequestCount: 3 * c, ErrorCount: 0,
		TTFTP50Ms: f(40 * scale), TTFTP95Ms: f(60 * scale), TTFTP99Ms: f(70 * scale),
		ITLP50Ms: f(8 * scale), TokPerSPerUser: f(125 / scale), RequestLatencyP50Ms: f(8000 * scale),
		OutputTokPerS: f(float64(c) * 100 / scale), MeanInputTokens: f(1000), MeanOutputTokens: f(1000),
		Extra: map[string]any{"point_status": atlas.PointOK},
	}
}

// writeCampaign lays out a campaign directory: config.yaml, atlas.jsonl with concurrencies
// 1, 16 and 32 measured (scale multiplies latencies, divides throughput), 64 never run, and
// scrape windows for 1 and 16.
func writeCampaign(t testing.TB, dir string, scale float64) {
	t.Helper()
	must(t, os.MkdirAll(dir, 0o755))
	must(t, os.WriteFile(campaigndir.Config(dir), []byte(fixtureConfig), 0o644))
	var rows []schema.AtlasRow
	for _, c := range []int{1, 16, 32} {
		rows = append(rows, fixtureRow("aa-1k", c, scale))
	}
	missing := fixtureRow("aa-1k", 64, scale)
	missing.TTFTP50Ms, missing.OutputTokPerS, missing.NumPrompts = nil, nil, 0
	missing.Extra["point_status"] = atlas.PointMissing
	rows = append(rows, missing)
	rows[2].ErrorCount = 2
	var buf bytes.Buffer
	if _, err := atlas.Aggregate(&buf, rows...); err != nil {
		t.Fatal(err)
	}
	must(t, os.WriteFile(campaigndir.Abs(dir, campaigndir.Atlas()), buf.Bytes(), 0o644))
	windows := map[int]schema.SpecWindow{
		1: {Schema: "spec_window_v1", Cell: "aa-1k", Concurrency: 1, PrefixCacheHitRatePre: f(0.10),
			PrefixCacheHitRatePost: f(0.12), KVCacheUsagePeak: f(0.05), RunningRequestsPeak: f(1),
			GenerationTokens: f(3000), WindowS: 30},
		16: {Schema: "spec_window_v1", Cell: "aa-1k", Concurrency: 16, PrefixCacheHitRatePre: f(0.12),
			PrefixCacheHitRatePost: f(0.25), KVCacheUsagePeak: f(0.42), RunningRequestsPeak: f(16),
			GenerationTokens: f(48000), WindowS: 30},
	}
	for c, w := range windows {
		_, err := campaigndir.WriteJSON(dir, campaigndir.SpecWindow("aa-1k", schema.Conc(c)), w)
		must(t, err)
	}
}

// finished is a fixture directory as the campaign service would open it: its config, its
// atlas (when there is one) and the spec windows its scrape steps would name.
func finished(t testing.TB, dir string) campaigndir.Finished {
	t.Helper()
	f := campaigndir.Finished{Dir: dir, Spec: &schema.Campaign{}, Files: campaigndir.Unrecorded(dir)}
	if b, err := os.ReadFile(campaigndir.Config(dir)); err == nil {
		must(t, yaml.Unmarshal(b, f.Spec))
	}
	if _, err := os.Stat(campaigndir.Abs(dir, campaigndir.Atlas())); err == nil {
		f.Evidence.Atlas = campaigndir.Atlas()
	}
	for _, c := range []int{1, 16, 32, 64} {
		if _, err := os.Stat(campaigndir.Abs(dir, campaigndir.SpecWindow("aa-1k", schema.Conc(c)))); err == nil {
			f.Evidence.Spec = append(f.Evidence.Spec, campaigndir.SpecFiles{Cell: "aa-1k", Concurrency: c, Window: campaigndir.SpecWindow("aa-1k", schema.Conc(c))})
		}
	}
	return f
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestSnapshotGolden(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "campaign")
	writeCampaign(t, dir, 1)
	doc, err := Snapshot(context.Background(), finished(t, dir), "")
	if err != nil {
		t.Fatal(err)
	}
	// Hand-checked mapping: pre = c1's before-scrape 0.10 → 10 %; post = the last window's
	// (c16) 0.25 → 25 %; KV peak max(0.05, 0.42) → 42 %; running peak 16; generation
	// (3000 + 48000) / (30 + 30) s = 850 tok/s; c64 never ran, so it is in the sweep but
	// not in metrics; conversations 3 + 48 + 96 = 147.
	s := doc.ServerMetricsDelta
	if *s.PrefixCacheHitRatePre != 10 || *s.PrefixCacheHitRatePost != 25 || *s.GPUCacheUsagePercPeak != 42 ||
		*s.NumRequestsRunningPeak != 16 || *s.AvgGenerationThroughputToksPerS != 850 {
		t.Errorf("server delta %+v", s)
	}
	if _, ok := doc.Metrics["64"]; ok || len(doc.Metrics) != 3 || doc.Workload.ConversationNum != 147 {
		t.Errorf("metrics %v, conversations %d", doc.Metrics, doc.Workload.ConversationNum)
	}
	if doc.Deployment.Service != "http://vllm.svc:8000/v1" {
		t.Errorf("service %q: credentials or query leaked", doc.Deployment.Service)
	}
	got, err := campaigndir.EncodeJSON(doc)
	must(t, err)
	testkit.Golden(t, filepath.Join("testdata", "snapshot.golden.json"), got)
}

func TestRecordResolveDiff(t *testing.T) {
	root := t.TempDir()
	base := filepath.Join(root, "base")
	writeCampaign(t, base, 1)
	reg := filepath.Join(root, "registry")
	now := time.Date(2026, 5, 19, 20, 0, 0, 0, time.UTC)
	ctx := context.Background()

	e1, err := Record(ctx, RecordRequest{Campaign: finished(t, base), Registry: reg, Name: "weekly-aa", Notes: "GPQA=71", Now: now})
	must(t, err)
	if want := filepath.Join(reg, "inference", "weekly-aa", "20260519T200000Z"); e1.Dir != want {
		t.Errorf("entry dir %s, want %s", e1.Dir, want)
	}
	// The same second again gets a suffix, and becomes the latest.
	e2, err := Record(ctx, RecordRequest{Campaign: finished(t, base), Registry: reg, Name: "weekly-aa", Now: now})
	must(t, err)
	if !strings.HasSuffix(e2.Dir, "20260519T200000Z-2") {
		t.Errorf("second entry %s, want a -2 suffix", e2.Dir)
	}
	sum, err := os.ReadFile(filepath.Join(e1.Dir, SumFile))
	must(t, err)
	if string(sum) != e1.Meta.SHA256+"  "+SnapshotFile+"\n" {
		t.Errorf("%s = %q", SumFile, sum)
	}
	leftovers, _ := filepath.Glob(filepath.Join(reg, "inference", "weekly-aa", ".tmp-*"))
	if len(leftovers) > 0 {
		t.Errorf("temp dirs left behind: %v", leftovers)
	}

	byName, err := Resolve(reg, "weekly-aa")
	must(t, err)
	if byName.Dir != e2.Dir {
		t.Errorf("by name: %s, want the latest %s", byName.Dir, e2.Dir)
	}
	byPath, err := Resolve(reg, e1.Dir)
	must(t, err)
	if byPath.Meta.Notes != "GPQA=71" || byPath.Meta.Cell != "aa-1k" {
		t.Errorf("by path: %+v", byPath.Meta)
	}

	// Default name comes from the model.
	e3, err := Record(ctx, RecordRequest{Campaign: finished(t, base), Registry: reg, Now: now})
	must(t, err)
	if e3.Meta.Measurement != "moonshotai-kimi-k2-perfbench-v1" {
		t.Errorf("default name %q", e3.Meta.Measurement)
	}

	// A degraded run: latencies ×1.2, throughput ÷1.2 → RED; the same numbers → GREEN.
	slow := filepath.Join(root, "slow")
	writeCampaign(t, slow, 1.2)
	d, err := DiffDir(ctx, byName, finished(t, slow), "", nil)
	must(t, err)
	if d.Verdict != Red || d.CurrentCell != "aa-1k" || d.BaselineName != "weekly-aa" {
		t.Errorf("degraded: verdict %s cell %s name %s", d.Verdict, d.CurrentCell, d.BaselineName)
	}
	same := filepath.Join(root, "same")
	writeCampaign(t, same, 1)
	d, err = DiffDir(ctx, byName, finished(t, same), "", nil)
	must(t, err)
	if d.Verdict != Green {
		var buf bytes.Buffer
		WriteDiff(&buf, d)
		t.Errorf("identical run: %s\n%s", d.Verdict, buf.String())
	}
}

func TestResolveErrors(t *testing.T) {
	root := t.TempDir()
	base := filepath.Join(root, "base")
	writeCampaign(t, base, 1)
	reg := filepath.Join(root, "registry")
	e, err := Record(context.Background(), RecordRequest{Campaign: finished(t, base), Registry: reg, Name: "weekly-aa"})
	must(t, err)

	_, err = Resolve(reg, "nightly")
	var nf *NotFoundError
	if !errors.As(err, &nf) || !strings.Contains(err.Error(), "registered: weekly-aa") {
		t.Errorf("unknown name: %v", err)
	}
	if _, err := Resolve(reg, "../etc"); err == nil {
		t.Error("a path-like name was accepted")
	}
	// Tampering with the snapshot is detected by its sha256.
	snap := filepath.Join(e.Dir, SnapshotFile)
	b, err := os.ReadFile(snap)
	must(t, err)
	must(t, os.WriteFile(snap, bytes.Replace(b, []byte(`"errors": 0`), []byte(`"errors": 9`), 1), 0o644))
	if _, err := Resolve(reg, "weekly-aa"); err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Errorf("tampered snapshot: %v", err)
	}
	if _, err := Record(context.Background(), RecordRequest{Campaign: finished(t, base), Registry: reg, Name: "a/b"}); err == nil {
		t.Error("a name with a slash was accepted")
	}
	if _, err := Snapshot(context.Background(), finished(t, filepath.Join(root, "nope")), ""); err == nil || !strings.Contains(err.Error(), "has no atlas") {
		t.Errorf("missing campaign: %v", err)
	}
}

func TestChooseCell(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "two")
	writeCampaign(t, dir, 1)
	// Add a second cell to the atlas: now a cell must be chosen.
	var buf bytes.Buffer
	rows := []schema.AtlasRow{fixtureRow("aa-1k", 16, 1), fixtureRow("aa-10k", 16, 1)}
	_, err := atlas.Aggregate(&buf, rows...)
	must(t, err)
	must(t, os.WriteFile(campaigndir.Abs(dir, campaigndir.Atlas()), buf.Bytes(), 0o644))
	ctx := context.Background()
	if _, err := Snapshot(ctx, finished(t, dir), ""); err == nil || !strings.Contains(err.Error(), "choose one with --cell") {
		t.Errorf("two cells without --cell: %v", err)
	}
	doc, err := Snapshot(ctx, finished(t, dir), "aa-10k")
	must(t, err)
	if doc.Workload.Cell != "aa-10k" {
		t.Errorf("cell %s", doc.Workload.Cell)
	}
	if _, err := Snapshot(ctx, finished(t, dir), "aa-100k"); err == nil || !strings.Contains(err.Error(), `no cell "aa-100k"`) {
		t.Errorf("unknown cell: %v", err)
	}
}

func TestBandAndHeadline(t *testing.T) {
	for in, want := range map[int]string{0: "", 512: "512", 1000: "1k", 1500: "1.5k", 2000: "2k", 10000: "10k", 100000: "100k", 8192: "8.2k"} {
		if got := Band(in); got != want {
			t.Errorf("Band(%d) = %q, want %q", in, got, want)
		}
	}
	d := doc(map[string]schema.PerfBenchPoint{"8": point(1, 1, 0), "24": point(2, 2, 0), "64": point(3, 3, 0)})
	// 16 is absent; 8 and 24 are both 8 away: the lower one wins.
	if c, _, exact, ok := Headline(d, 16); c != 8 || exact || !ok {
		t.Errorf("Headline = %d exact=%v ok=%v, want 8 false true", c, exact, ok)
	}
	if c, _, exact, _ := Headline(d, 64); c != 64 || !exact {
		t.Errorf("Headline(64) = %d exact=%v", c, exact)
	}
	if _, _, _, ok := Headline(doc(nil), 16); ok {
		t.Error("empty document has a headline")
	}
}

// TestRecordRefusesAFailingCampaign: promoting a baseline acts on a pass, so a campaign with a
// fail verdict standing is refused with the refusal's exit code, naming the gate and its value.
func TestRecordRefusesAFailingCampaign(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "campaign")
	writeCampaign(t, dir, 1)
	f := finished(t, dir)
	f.Verdicts = []schema.GateVerdict{
		{Gate: "fast", Node: "run-shape[aa-1k/c16]", Severity: schema.SeverityWarn, Rule: "ttft_p50_ms < 10"},
		{Gate: "fast-enough", Node: "run-shape[aa-1k/c16]", Severity: schema.SeverityFail, Rule: "ttft_p50_ms < 40", Value: "ttft_p50_ms=50"},
	}
	_, err := Record(context.Background(), RecordRequest{Campaign: f, Registry: t.TempDir(), Name: "weekly"})
	var refusal *engine.Refusal
	if !errors.As(err, &refusal) || refusal.Code() != 4 || !strings.Contains(err.Error(), "fast-enough on run-shape[aa-1k/c16] (ttft_p50_ms=50)") || strings.Contains(err.Error(), "gate fast on") {
		t.Fatalf("record of a failing campaign: %v", err)
	}
	f.Verdicts = f.Verdicts[:1] // a warn verdict does not stop it
	if _, err := Record(context.Background(), RecordRequest{Campaign: f, Registry: t.TempDir(), Name: "weekly"}); err != nil {
		t.Fatalf("warn verdict refused: %v", err)
	}
}
