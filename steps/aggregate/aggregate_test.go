package aggregate_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/engine/run"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/aggregate"
	"github.com/perfdag/perfdag/steps/testkit/stepstest"
)

const coverage40 = "Coverage: 40 atlas cells | 38 full sweeps | 1 partial sweep | 1 failed cell | 232 plot-ready concurrency points"

// fixture40 writes the seed's synthetic 40-cell campaign — hardware {H100, B200} × strategy
// {EP, TP} × MTP {on, off} × max_num_batched_tokens {1024..16384}, six concurrencies each — as
// a campaign YAML plus the point.json files run-shape would have written. Cell 17 loses c32
// (missing) and c16 (failed) and is partial; cell 29 fails every point. Plot-ready points:
// 38 full cells × 6 + the partial cell's 4 = 232.
func fixture40(t *testing.T, dir string) string {
	var b strings.Builder
	b.WriteString(`version: 1
campaign: glm51-multihw
kind: throughput
endpoints:
  main: {url: "sim://", model: zai-org/GLM-5.1}
defaults: {quant: FP8, tensor_parallel: 8, engine: vllm, delivery: release, cache_mode: warm}
pipeline:
  - {id: run, kind: run-shape}
  - {id: atlas, kind: aggregate, needs: [run]}
cells:
`)
	concs := []int{1, 2, 4, 8, 16, 32}
	n := 0
	for _, hw := range []string{"H100", "B200"} {
		for _, strat := range []string{"EP", "TP"} {
			for _, mtp := range []bool{true, false} {
				for _, mbt := range []int{1024, 2048, 4096, 8192, 16384} {
					id := fmt.Sprintf("%s-%s-mtp%v-mbt%d", strings.ToLower(hw), strings.ToLower(strat), mtp, mbt)
					fmt.Fprintf(&b, "  - {id: %s, hardware: %s, parallel_strategy: %s, mtp: %v, max_num_batched_tokens: %d, workload: {shape: aa-1k}, concurrencies: [1, 2, 4, 8, 16, 32]}\n",
						id, hw, strat, mtp, mbt)
					for _, c := range concs {
						p := stepstest.OKPoint(id, c)
						switch {
						case n == 17 && c == 32:
							continue
						case n == 17 && c == 16, n == 29:
							p.RequestCount, p.ErrorCount, p.Status = 0, p.NumPrompts, "failed"
						}
						stepstest.WritePoint(t, dir, p)
					}
					n++
				}
			}
		}
	}
	return b.String()
}

func TestFixture40CoverageLine(t *testing.T) {
	dir := t.TempDir()
	src := fixture40(t, dir)
	out, recs := stepstest.Run(t, dir, t.TempDir(), src, nil)
	if out["atlas"] != run.OutRan {
		t.Fatalf("atlas: %s", out["atlas"])
	}
	if got := recs["atlas"].Summary; got != coverage40 {
		t.Fatalf("summary\n got %s\nwant %s", got, coverage40)
	}
	var res aggregate.Result
	stepstest.Result(t, recs, "atlas", &res)
	// 2 hardware × 2 strategies × 2 MTP settings = 8 TPM groups (max_num_batched_tokens is not
	// part of the key); every ok point has TTFT ≤ 132 ms and ITL 20 ms, inside the default SLA.
	want := aggregate.Result{AtlasCells: 40, FullSweeps: 38, PartialSweeps: 1, FailedCells: 1, PlotReadyPoints: 232,
		Rows: 240, TPMGroups: 8, TPMSLAGroups: 8, Coverage: coverage40}
	res.Files = campaigndir.Evidence{}
	if !reflect.DeepEqual(res, want) {
		t.Errorf("result\n got %+v\nwant %+v", res, want)
	}
	if n := countLines(t, campaigndir.Abs(dir, campaigndir.Atlas())); n != 240 {
		t.Errorf("atlas.jsonl has %d rows, want 240", n)
	}
	status, err := os.ReadFile(campaigndir.Abs(dir, campaigndir.CellStatus("h100-tp-mtpfalse-mbt4096")))
	if err != nil || string(status) != "partial\n" {
		t.Errorf("cell 17 status %q (%v), want partial", status, err)
	}
	outputs := recs["atlas"].Outputs
	for _, f := range []string{campaigndir.Atlas(), campaigndir.TPMJSON(), campaigndir.TPMCSV(), campaigndir.TPMMarkdown(), campaigndir.Normalized("b200-ep-mtptrue-mbt1024")} {
		if _, ok := outputs[f]; !ok {
			t.Errorf("outputs lack %s", f)
		}
	}
	if len(outputs) != 40*2+4 {
		t.Errorf("%d outputs, want 84 (normalized.json and status.txt per cell, atlas, 3 TPM files)", len(outputs))
	}
	md, err := os.ReadFile(campaigndir.Abs(dir, campaigndir.TPMMarkdown()))
	if err != nil || !strings.Contains(string(md), "warm") {
		t.Errorf("tpm_summary.md lacks the warm/cold caveat: %v\n%s", err, md)
	}
	// A second run with nothing changed retries the failed points (never reused) and so
	// rebuilds the atlas; every point that succeeded is reused.
	out, _ = stepstest.Run(t, dir, t.TempDir(), src, nil)
	if out["atlas"] != run.OutRan || out["run[h100-tp-mtpfalse-mbt4096/c16]"] != run.OutFailed || out["run[h100-tp-mtpfalse-mbt4096/c8]"] != run.OutReused {
		t.Errorf("unchanged re-run: %v", out)
	}
}

// TestTPMAndCostBlocks proves the campaign's tpm: and cost: blocks reach the TPM summary.
func TestTPMAndCostBlocks(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []int{1, 2, 4} {
		p := stepstest.OKPoint("a", c)
		if c == 4 {
			p.ITL.Avg = 60 // over the 50 ms TPOT SLA: c4 is the peak but not the SLA point
		}
		stepstest.WritePoint(t, dir, p)
	}
	src := `version: 1
campaign: tpm
endpoints:
  main: {url: "sim://", model: m}
defaults: {hardware: H100, quant: FP8, tensor_parallel: 8, parallel_strategy: TP}
cells:
  - {id: a, workload: {shape: aa-1k}, concurrencies: [1, 2, 4]}
tpm: {tpot_sla_ms: 50, gpus_per_node: 4}
cost: {usd_per_gpu_hour: {H100: 3.6}}
pipeline:
  - {id: run, kind: run-shape}
  - {id: atlas, kind: aggregate, needs: [run]}
`
	out, _ := stepstest.Run(t, dir, t.TempDir(), src, nil)
	if out["atlas"] != run.OutRan {
		t.Fatalf("atlas: %s", out["atlas"])
	}
	var s schema.TPMSummary
	b, err := os.ReadFile(campaigndir.Abs(dir, campaigndir.TPMJSON()))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Groups) != 1 || s.GPUsPerNode != 4 || s.TPOTSLAMs != 50 || s.TTFTSLAMs != 2000 {
		t.Fatalf("summary %+v", s)
	}
	g := s.Groups[0]
	if g.SLA == nil || g.SLACost == nil {
		t.Fatalf("no SLA point: %s", g.SLANote)
	}
	// Peak = c4: 50·4 = 200 output tok/s/GPU, 400 total.
	//   TPM/GPU = 200 × 60 = 12,000; /replica = × TP 8 = 96,000; /node = × 4 = 48,000.
	//   $/1M output = 3.6 ÷ (200 × 3600) × 1e6 = 5.0; $/1M total = 3.6 ÷ (400 × 3600) × 1e6 = 2.5.
	// SLA = c2 (c4's ITL 60 > 50): 100 tok/s/GPU → TPM/GPU 6,000; $/1M output = 3.6 ÷ 360,000 × 1e6 = 10.
	checks := []struct {
		name      string
		got, want float64
	}{
		{"peak concurrency", float64(g.Peak.Concurrency), 4},
		{"peak TPM/GPU", g.Peak.OutputTPMPerGPU, 12000},
		{"peak TPM/replica", g.Peak.OutputTPMPerReplica, 96000},
		{"peak TPM/node", g.Peak.OutputTPMPerNode, 48000},
		{"peak $/1M output", deref(g.PeakCost.USDPer1MOutput), 5},
		{"peak $/1M total", deref(g.PeakCost.USDPer1MTotal), 2.5},
		{"peak rate", deref(g.PeakCost.USDPerGPUHour), 3.6},
		{"sla concurrency", float64(g.SLA.Concurrency), 2},
		{"sla TPM/GPU", g.SLA.OutputTPMPerGPU, 6000},
		{"sla $/1M output", deref(g.SLACost.USDPer1MOutput), 10},
	}
	for _, c := range checks {
		if math.Abs(c.got-c.want) > 1e-9*math.Max(1, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if !strings.HasPrefix(g.PeakCost.RateSource, "campaign") {
		t.Errorf("rate source %q, want campaign (the cost: block)", g.PeakCost.RateSource)
	}
}

func deref(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

func countLines(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		n++
	}
	return n
}

func cellsOf(rows []schema.AtlasRow) []string {
	var ids []string
	for _, r := range rows {
		if !slices.Contains(ids, r.CellID) {
			ids = append(ids, r.CellID)
		}
	}
	return ids
}
