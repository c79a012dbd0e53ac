package smoke

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v2"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/report"
	"github.com/perfdag/perfdag/steps/testkit"
)

// fixtureDir is the checked-in fixture at the repository root.
var fixtureDir = filepath.Join("..", "..", "..", "testdata", "smoke")

func TestAtlasMirrorsTheReferenceLayout(t *testing.T) {
	rows := Atlas()
	cells := map[string]string{}
	evicted := map[string]bool{}
	plotReady := 0
	hw, mbt, strategy, mtp := map[string]bool{}, map[int]bool{}, map[string]bool{}, map[bool]bool{}
	for _, r := range rows {
		cells[r.CellID] = r.CellStatus
		if r.PlotReady {
			plotReady++
		}
		if slices.Contains(r.Flags, report.FlagEvicted) {
			evicted[r.CellID] = true
			if !r.MTP {
				t.Errorf("%s c%d: evicted but not an MTP cell", r.CellID, r.Concurrency)
			}
		}
		hw[r.Hardware+" "+r.Quant] = true
		mbt[r.MaxNumBatchedTokens] = true
		strategy[r.ParallelStrategy] = true
		mtp[r.MTP] = true
		if r.Backend != "fixture" {
			t.Errorf("%s: backend %q, want fixture so nobody mistakes it for a measurement", r.CellID, r.Backend)
		}
	}
	count := func(status string) int {
		n := 0
		for _, s := range cells {
			if s == status {
				n++
			}
		}
		return n
	}
	// The seed's reference coverage: 40 cells, 38 full, 1 partial, 1 failed, 232 points, 20 evicted.
	checks := []struct {
		name      string
		got, want int
	}{
		{"atlas cells", len(cells), 40},
		{"full sweeps", count(schema.CellFull), 38},
		{"partial sweeps", count(schema.CellPartial), 1},
		{"failed cells", count(schema.CellFailed), 1},
		{"plot-ready points", plotReady, 232},
		{"evicted MTP context cells", len(evicted), 20},
		{"hardware/quant pairs", len(hw), 3},
		{"mbt values", len(mbt), 5},
		{"strategies", len(strategy), 2},
		{"MTP settings", len(mtp), 2},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
	for _, want := range []string{"H100 FP8", "B200 NVFP4", "GB300 NVFP4"} {
		if !hw[want] {
			t.Errorf("hardware %s missing", want)
		}
	}
	for _, m := range []int{1024, 2048, 4096, 8192, 16384} {
		if !mbt[m] {
			t.Errorf("mbt %d missing", m)
		}
	}
}

func TestLatencyModelByHand(t *testing.T) {
	// B200 NVFP4 TP8 TP, no MTP, mbt 2048, c=1, no jitter:
	// TTFT = (8192/110000·1000 + ceil(8192/2048)·12) · (1 + 0.08·0·1) = 74.4727… + 48 = 122.4727 ms
	// tok/s/user = 95 / (1 + 0.07·0^0.85) / (1 + 0.000008·2048·1/32) = 95 / 1.000512 = 94.9514
	// ITL = 1000 / 94.9514 = 10.5317 ms; latency = 122.4727 + 1023 · 10.5317 = 10896.4 ms
	// request throughput = 1 / 10.8964 s = 0.091773 req/s
	m := model(variants[4], 2048, 1, 1)
	checks := []struct {
		name      string
		got, want float64
		tol       float64
	}{
		{"ttft", m.ttftMs, 122.4727, 1e-3},
		{"tok/s/user", m.tpsUser, 94.9514, 1e-3},
		{"itl", m.itlMs, 10.5317, 1e-3},
		{"latency", m.latencyMs, 10896.4, 0.1},
		{"req/s", m.reqPerS, 0.091773, 1e-5},
	}
	for _, c := range checks {
		if d := c.got - c.want; d > c.tol || d < -c.tol {
			t.Errorf("%s = %.6f, want %.6f", c.name, c.got, c.want)
		}
	}
}

// TestGoldenFixture fails when testdata/smoke differs from the generator; -update rewrites it.
func TestGoldenFixture(t *testing.T) {
	files, err := Files()
	if err != nil {
		t.Fatal(err)
	}
	if testkit.Update() {
		if err := os.RemoveAll(fixtureDir); err != nil {
			t.Fatal(err)
		}
		if err := WriteDir(fixtureDir); err != nil {
			t.Fatal(err)
		}
	}
	onDisk := map[string]bool{}
	err = filepath.WalkDir(fixtureDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(fixtureDir, p)
		onDisk[filepath.ToSlash(rel)] = true
		return nil
	})
	if err != nil {
		t.Fatalf("read %s: %v (run go test ./steps/report/smoke -update)", fixtureDir, err)
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(fixtureDir, filepath.FromSlash(name)))
		if err != nil {
			t.Errorf("%s: %v (run go test ./steps/report/smoke -update)", name, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("testdata/smoke/%s differs from the generator (run go test ./steps/report/smoke -update)", name)
		}
	}
	for name := range onDisk {
		if _, ok := files[name]; !ok {
			t.Errorf("testdata/smoke/%s is not produced by the generator (run -update to remove it)", name)
		}
	}
}

// TestReadReadsTheCheckedInFixture proves the report reads back everything the generator holds.
func TestReadReadsTheCheckedInFixture(t *testing.T) {
	want, err := Input()
	if err != nil {
		t.Fatal(err)
	}
	got, err := report.Read(context.Background(), campaigndir.Unrecorded(fixtureDir), Evidence(want))
	if err != nil {
		t.Fatal(err)
	}
	got.Dir = ""
	var info campaigndir.Info
	if b, err := os.ReadFile(campaigndir.RunInfo(fixtureDir)); err != nil || json.Unmarshal(b, &info) != nil {
		t.Fatalf("run record: %v", err)
	}
	got.Run = &info
	var cfg schema.Campaign
	if b, err := os.ReadFile(campaigndir.Config(fixtureDir)); err != nil || yaml.Unmarshal(b, &cfg) != nil {
		t.Fatalf("config: %v", err)
	}
	got.Campaign = &cfg
	parts := []struct {
		name      string
		got, want any
	}{
		{"config", got.Campaign, want.Campaign}, {"atlas", got.Atlas, want.Atlas}, {"tpm", got.TPM, want.TPM},
		{"dcgm", got.DCGM, want.DCGM}, {"roofline", got.Roofline, want.Roofline}, {"champion", got.Champion, want.Champion},
		{"run", got.Run, want.Run},
	}
	for _, p := range parts {
		g, _ := json.Marshal(p.got)
		w, _ := json.Marshal(p.want)
		if !bytes.Equal(g, w) {
			t.Errorf("%s read back differs from the generator", p.name)
		}
	}
}

func TestSmokeRenderReadsBack(t *testing.T) {
	bin := testkit.NeedTool(t, "pdftotext")
	out := filepath.Join(t.TempDir(), "smoke.pdf")
	if err := Render(context.Background(), out); err != nil {
		t.Fatal(err)
	}
	raw, err := exec.Command(bin, "-layout", out, "-").Output()
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(raw)), " ")
	want := []string{
		report.TitleCover, report.TitleScatter, report.TitleHeatmap, report.TitleAA, report.TitleTPM,
		report.TitleDCGM, report.TitleRoofline, report.TitleChampion, report.TitleSpec, report.TitleCompare,
		"Coverage: 40 atlas cells | 38 full sweeps | 1 partial sweep | 1 failed cell | 232 plot-ready concurrency points",
		"Evicted context: 20 cells (120 points)",
		"Settle discipline: used",
		"Concurrency C = 8", "Concurrency C = 16", "Concurrency C = 32",
		"mbt 1024 mbt 2048 mbt 4096 mbt 8192 mbt 16384",
		"S1 GB300 TP4 NVFP4 KV fp8 vllm",
		report.TitleDCGM + " (continued)", // a table that runs over keeps its page title
		"page 1 of",
		"The 8 of 40 rows with the highest peak output tok/s/GPU", // the cover stays one page
		"Failed, not plotted: h100-fp8-tp16-ep-mbt16384. Partly plotted: b200-nvfp4-tp8-tp-mbt16384 (2 of 6 points missing).",
	}
	// Numbers from the atlas: the failed H100 cell and the partial B200 TP cell at C=16 in the heatmap.
	rows := Atlas()
	var h100 []string
	for _, r := range rows {
		if r.CellID == cellID(variants[0], 8192) && r.Concurrency == 32 {
			h100 = append(h100, report.FormatNumber(r.OutputTokPerSPerGPU))
		}
	}
	want = append(want, "failed", h100[0])
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("smoke report lacks %q", w)
		}
	}
	// The reference layout: one cover page, five mbt rows of panes on one page, three heatmaps
	// on one page.
	for _, title := range []string{report.TitleCover, report.TitleScatter, report.TitleHeatmap} {
		if strings.Contains(text, title+" (continued)") {
			t.Errorf("%s runs over one page", title)
		}
	}
	for _, line := range []string{"No DCGM data", "No roofline sweep", "No TPM summary", "No champion", "No speculative-decoding data"} {
		if strings.Contains(text, line) {
			t.Errorf("smoke report says %q: the fixture should fill that page", line)
		}
	}
}

// BenchmarkSmoke times the whole smoke render: fixture generation, charts and PDF.
func BenchmarkSmoke(b *testing.B) {
	out := filepath.Join(b.TempDir(), "smoke.pdf")
	for b.Loop() {
		if err := Render(context.Background(), out); err != nil {
			b.Fatal(err)
		}
	}
}
