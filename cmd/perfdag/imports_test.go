package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/engine/checkpoint"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/report"
	"github.com/perfdag/perfdag/steps/testkit"
	"github.com/perfdag/perfdag/steps/testkit/stepstest"
)

// checkComparisonPage reads the report's text: the side-by-side page is there and names each
// imported source.
func checkComparisonPage(t *testing.T, pdf string) {
	t.Helper()
	bin := testkit.NeedTool(t, "pdftotext")
	out, err := exec.Command(bin, "-layout", pdf, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	text := strings.Join(strings.Fields(string(out)), " ")
	for _, want := range []string{report.TitleCompare, "perfdag", "aiperf (stats", "from per-request",
		"vllm-bench 0.9.1", "sglang-bench (stats", "from aggregate",
		"TTFT p50 (ms)", "Request throughput (req/s)", "Endpoint local, custom 550/16 tokens, concurrency 4"} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(text, "No measured and imported points") {
		t.Error("cover says the comparison page has no data")
	}
}

// runSampleCampaign copies the sample imports and pipelines/ into a temporary root, runs
// pipelines/<name> there into root/c, and returns root, the copied campaign file and the
// campaign directory (a test may edit the copies and run again).
func runSampleCampaign(t *testing.T, name string) (root, yaml, dir string) {
	t.Helper()
	root = t.TempDir()
	testkit.CopyTree(t, "../../testdata/imports", filepath.Join(root, "testdata/imports"))
	testkit.CopyTree(t, "../../pipelines", filepath.Join(root, "pipelines"))
	yaml = filepath.Join(root, "pipelines", name)
	dir = filepath.Join(root, "c")
	if b, err := perfdagChild("run", yaml, "--out", dir).CombinedOutput(); err != nil {
		t.Fatalf("run: %v\n%s", err, b)
	}
	return root, yaml, dir
}

// pipelines/imports.yaml — a measured simulator cell beside AIPerf, vLLM and SGLang imports —
// runs, its atlas marks every row's source, it publishes, and editing one imported file re-runs only that cell's import (and what reads it).
func TestImportsCampaign(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a campaign twice")
	}
	root, yaml, dir := runSampleCampaign(t, "imports.yaml")
	rows := stepstest.AtlasRows(t, dir)
	want := map[string][2]string{"measured": {"perfdag", ""}, "aiperf": {"aiperf", "per-request"},
		"vllm-bench": {"vllm-bench", "per-request"}, "sglang-bench": {"sglang-bench", "aggregate"}}
	for _, r := range rows {
		w, ok := want[r.CellID]
		if !ok {
			t.Errorf("unexpected row %s", r.CellID)
			continue
		}
		delete(want, r.CellID)
		sf, _ := r.Extra["stats_from"].(string)
		if r.Backend != w[0] || sf != w[1] || !r.PlotReady || r.CacheMode != "warm" {
			t.Errorf("%s: backend %s stats_from %q plot_ready %v cache_mode %s", r.CellID, r.Backend, sf, r.PlotReady, r.CacheMode)
		}
		if r.CellID == "vllm-bench" && r.Extra["source_version"] != "0.9.1" {
			t.Errorf("vllm-bench source_version %v", r.Extra["source_version"])
		}
		if r.CellID == "sglang-bench" && (r.RequestThroughput == nil || *r.RequestThroughput < 18.18 || *r.RequestThroughput > 18.19) {
			t.Errorf("sglang request throughput %v, want 8/0.440033 = 18.18", r.RequestThroughput)
		}
		if r.CellID == "sglang-bench" && (r.TTFTP90Ms != nil || r.TTFTP99Ms == nil) {
			t.Errorf("sglang TTFT p90 %v (the file states none: want null), p99 %v", r.TTFTP90Ms, r.TTFTP99Ms)
		}
	}
	for c := range want {
		t.Errorf("no atlas row for %s", c)
	}
	checkComparisonPage(t, campaigndir.Abs(dir, campaigndir.Report()))
	checkImportedProvenance(t, dir, rows)

	lake := filepath.Join(root, "lake.db")
	if b, err := perfdagChild("publish", dir, "--no-strict", "--lake", "sqlite://"+lake).CombinedOutput(); err != nil {
		t.Fatalf("publish: %v\n%s", err, b)
	}
	receipt, err := os.ReadFile(campaigndir.Abs(dir, campaigndir.Receipt()))
	if err != nil {
		t.Fatal(err)
	}
	var rc struct {
		CampaignID string `json:"campaign_id"`
		Tables     []struct {
			Table string `json:"table"`
			Rows  int    `json:"rows"`
		} `json:"tables"`
	}
	if err := json.Unmarshal(receipt, &rc); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(rc.Tables, func(x struct {
		Table string `json:"table"`
		Rows  int    `json:"rows"`
	}) bool {
		return x.Table == "atlas_v1" && x.Rows == 4
	}) {
		t.Errorf("publish receipt %s: want 4 atlas_v1 rows", receipt)
	}
	checkLakeBases(t, "sqlite://"+lake, rc.CampaignID)

	before := finalState(t, dir)
	f := filepath.Join(root, "testdata/imports/sglang-c4.jsonl")
	b, _ := os.ReadFile(f)
	if err := os.WriteFile(f, []byte(strings.Replace(string(b), `"duration": 0.440033`, `"duration": 0.450033`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := perfdagChild("run", yaml, "--out", dir).CombinedOutput(); err != nil {
		t.Fatalf("second run: %v\n%s", err, b)
	}
	after := finalState(t, dir)
	reran := map[string]bool{"import[sglang-bench/c4]": true, "aggregate": true, "render": true}
	for id, r := range after {
		old := before[id]
		if old == nil || r.Status != old.Status {
			t.Errorf("%s: not recorded before, or its status changed to %s", id, r.Status)
			continue
		}
		if changed := r.RunID != old.RunID; changed != reran[id] && r.Status == checkpoint.Succeeded {
			t.Errorf("%s re-ran: %v, want %v", id, changed, reran[id])
		}
	}
}
