package main

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/lake"
	"github.com/perfdag/perfdag/steps/testkit"
	"github.com/perfdag/perfdag/steps/testkit/stepstest"
)

func readChampion(t *testing.T, dir string) schema.Champion {
	t.Helper()
	b, err := os.ReadFile(campaigndir.Abs(dir, campaigndir.Champion()))
	if err != nil {
		t.Fatal(err)
	}
	var c schema.Champion
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

func armOf(c schema.Champion, name string) schema.ChampionArm {
	for _, a := range c.Arms {
		if a.Arm == name {
			return a
		}
	}
	return schema.ChampionArm{}
}

func near(p *float64, want float64) bool {
	return p != nil && math.Abs(*p-want) < 1e-6*math.Max(1, math.Abs(want))
}

// pipelines/variant-ab.yaml — the cells `perfdag import --bundle` wrote for the sample A/B
// bundle — runs with no endpoint at all, and champion-select picks by its rule. Figures by
// hand from the bundle (512/128 tokens, TP 1, output tok/s = total_output_tokens / duration):
//
//	vllm   c1 2048/32 s = 64.0 (TPOT 15.4)  c8 2048/5 s = 409.6 (18.9)  c32 8192/7 s = 1170.29 (26.5)
//	sglang c1 2048/30 s = 68.27 (14.5)      c8 2048/4.6 s = 445.22 (17.6) c32 8192/5.2 s = 1575.38 (55.0)
//
// Under TPOT <= 50 ms sglang's c32 does not count: vllm (the baseline) wins with 1170.29 and
// sglang's best, c8, is 445.22/1170.29 − 1 = −61.96 %. With the SLO at 60 ms sglang's c32
// counts and wins: 1575.38/1170.29 − 1 = +34.62 %, and only champion-select and render re-run.
// Every atlas and lake row names its source tool, version and cache mode.
func TestVariantABCampaign(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a campaign twice")
	}
	root, yaml, dir := runSampleCampaign(t, "variant-ab.yaml")
	ch := readChampion(t, dir)
	v, s := armOf(ch, "vllm"), armOf(ch, "sglang")
	if ch.Champion != "vllm" || ch.Baseline != "vllm" || ch.ArmsConsidered != 2 {
		t.Errorf("champion %q baseline %q arms %d, want vllm, vllm, 2", ch.Champion, ch.Baseline, ch.ArmsConsidered)
	}
	if !near(v.FocusValue, 8192/7.0) || v.Concurrency != 32 || v.Engine != "vllm" || v.EngineVersion != "0.9.1" || v.PointsMeetSLO != 3 {
		t.Errorf("vllm arm %+v, want 1170.29 at c32, 3 points under the SLO", v)
	}
	if !near(s.FocusValue, 2048/4.6) || s.Concurrency != 8 || s.Engine != "sglang" || s.PointsMeetSLO != 2 ||
		!near(s.DeltaVsBaseline, (2048/4.6)/(8192/7.0)*100-100) {
		t.Errorf("sglang arm %+v, want 445.22 at c8 (c32's 55 ms TPOT over the SLO), 2 points under it, -61.96 %%", s)
	}

	want := map[string][3]string{"vllm-sweep": {"vllm-bench", "0.9.1", "vllm"}, "sglang-sweep": {"sglang-bench", "0.4.6", "sglang"}}
	rows := stepstest.AtlasRows(t, dir)
	for _, r := range rows {
		w := want[r.CellID]
		if r.Backend != w[0] || r.Extra["source_version"] != w[1] || r.Engine != w[2] || r.Arm != w[2] || r.CacheMode != "warm" || !r.PlotReady {
			t.Errorf("atlas %s c%d: backend %s source_version %v engine %s arm %s cache_mode %s plot_ready %v", r.CellID, r.Concurrency,
				r.Backend, r.Extra["source_version"], r.Engine, r.Arm, r.CacheMode, r.PlotReady)
		}
	}
	if len(rows) != 6 {
		t.Errorf("%d atlas rows, want 6", len(rows))
	}

	url := "sqlite://" + filepath.Join(root, "lake.db")
	if b, err := perfdagChild("publish", dir, "--no-strict", "--lake", url).CombinedOutput(); err != nil {
		t.Fatalf("publish: %v\n%s", err, b)
	}
	checkLakeSources(t, dir, url, want)

	src, err := os.ReadFile(yaml)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(src), "tpot_slo_ms: 50", "tpot_slo_ms: 60", 1)
	if edited == string(src) {
		t.Fatal("variant-ab.yaml has no tpot_slo_ms: 50 to edit")
	}
	if err := os.WriteFile(yaml, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	before := finalState(t, dir)
	if b, err := perfdagChild("run", yaml, "--out", dir).CombinedOutput(); err != nil {
		t.Fatalf("second run: %v\n%s", err, b)
	}
	ch = readChampion(t, dir)
	s = armOf(ch, "sglang")
	if ch.Champion != "sglang" || s.Concurrency != 32 || !near(s.FocusValue, 8192/5.2) || !near(s.DeltaVsBaseline, (8192/5.2)/(8192/7.0)*100-100) {
		t.Errorf("TPOT SLO 60 ms: champion %q, sglang %+v; want sglang at c32, 1575.38, +34.62 %%", ch.Champion, s)
	}
	after := finalState(t, dir)
	for id, r := range after {
		reran := r.RunID != before[id].RunID
		if wantRerun := id == "champion-select" || id == "render"; reran != wantRerun {
			t.Errorf("%s re-ran: %v, want %v", id, reran, wantRerun)
		}
	}
}

// checkLakeSources reads the published atlas_v1 rows: backend (the source tool), cache_mode
// and the source version in extra_json.
func checkLakeSources(t *testing.T, dir, url string, want map[string][3]string) {
	t.Helper()
	b, err := os.ReadFile(campaigndir.Abs(dir, campaigndir.Receipt()))
	if err != nil {
		t.Fatal(err)
	}
	var rc schema.PublishReceipt
	if err := json.Unmarshal(b, &rc); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	l, err := lake.Open(ctx, url, "")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close(ctx)
	rows, err := l.Read(ctx, "atlas_v1", rc.CampaignID)
	if err != nil {
		t.Fatal(err)
	}
	tbl, _ := lake.TableNamed("atlas_v1")
	col := func(name string) int {
		return slices.IndexFunc(tbl.Columns, func(c lake.Column) bool { return c.Name == name })
	}
	cell, backend, cache, extra := col("cell_id"), col("backend"), col("cache_mode"), col("extra_json")
	if len(rows) != 6 || cell < 0 || backend < 0 || cache < 0 || extra < 0 {
		t.Fatalf("%d lake rows, columns %d %d %d %d", len(rows), cell, backend, cache, extra)
	}
	for _, r := range rows {
		w := want[r[cell].(string)]
		var ex map[string]any
		if s, ok := r[extra].(string); !ok || json.Unmarshal([]byte(s), &ex) != nil {
			t.Errorf("extra_json %v is not a JSON object", r[extra])
		}
		if r[backend] != w[0] || r[cache] != "warm" || ex["source_version"] != w[1] || ex["stats_from"] != "aggregate" {
			t.Errorf("lake row %v: backend %v cache_mode %v source_version %v stats_from %v", r[cell], r[backend], r[cache], ex["source_version"], ex["stats_from"])
		}
	}
}

// The cells of pipelines/variant-ab.yaml are exactly what `perfdag import --bundle` writes
// with the command line its header quotes.
func TestVariantABIsWhatImportWrites(t *testing.T) {
	root := t.TempDir()
	testkit.CopyTree(t, "../../testdata/imports/variant-ab", filepath.Join(root, "testdata/imports/variant-ab"))
	want, err := os.ReadFile("../../pipelines/variant-ab.yaml")
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(want), "\ncells:\n")
	if i < 0 {
		t.Fatal("variant-ab.yaml has no cells: line")
	}
	file := filepath.Join(root, "pipelines/variant-ab.yaml")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, want[:i+len("\ncells:\n")], 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut strings.Builder
	code := Main([]string{"import", "--bundle", filepath.Join(root, "testdata/imports/variant-ab"), "--into", file,
		"--tp", "1", "--hardware", "H100", "--quant", "BF16", "--cache-mode", "warm"}, strings.NewReader(""), &out, &errOut)
	if code != 0 {
		t.Fatalf("import exit %d: %s", code, errOut.String())
	}
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("perfdag import --bundle wrote\n%s\nvariant-ab.yaml holds\n%s", got, want)
	}
	if !strings.Contains(out.String(), "added cell vllm-sweep") || !strings.Contains(out.String(), "added cell sglang-sweep") {
		t.Errorf("stdout %q", out.String())
	}
}
