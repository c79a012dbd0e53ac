package aggregate_test

import (
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/engine/run"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/aggregate"
	"github.com/perfdag/perfdag/steps/testkit"
	"github.com/perfdag/perfdag/steps/testkit/stepstest"
)

// frozen is a dcgm_frozen_v1 capture for two GPUs at c1 and c2: means SM 0.5, DRAM 0.4,
// NVLink 2e9 B/s and 400 W per GPU, so every point is byte-grounded.
const frozen = `schema: dcgm_frozen_v1
units: {ratio: ratio, bandwidth: bytes/s, power: W}
points:
  - concurrency: 1
    gpus:
      - {gpu: 0, means: {sm_active: 0.4, dram_active: 0.3, nvlink_bytes_s: 1.0e9, power_w: 300}}
      - {gpu: 1, means: {sm_active: 0.6, dram_active: 0.5, nvlink_bytes_s: 3.0e9, power_w: 500}}
  - concurrency: 2
    gpus:
      - {gpu: 0, means: {sm_active: 0.4, dram_active: 0.3, nvlink_bytes_s: 1.0e9, power_w: 300}}
      - {gpu: 1, means: {sm_active: 0.6, dram_active: 0.5, nvlink_bytes_s: 3.0e9, power_w: 500}}
`

func twoCells(hardwareA string, concsA string) string {
	return `version: 1
campaign: rerun
endpoints:
  main: {url: "http://127.0.0.1:9", model: m}
defaults: {quant: FP8, tensor_parallel: 2, parallel_strategy: TP, hardware: B200}
cells:
  - {id: a, hardware: ` + hardwareA + `, workload: {shape: aa-1k}, concurrencies: ` + concsA + `}
  - {id: b, workload: {shape: aa-1k}, concurrencies: [1, 2]}
pipeline:
  - {id: run, kind: run-shape}
  - {id: dcgm, kind: dcgm-correlate, needs: [run], with: {source: frozen, file: "dcgm/{cell}.yaml"}}
  - {id: atlas, kind: aggregate, needs: [run, dcgm]}
`
}

// TestEditReRunsWhatItTouches edits one cell's hardware label: the atlas re-runs and carries
// the new label, while no DCGM correlation re-runs (hardware is not among their inputs). Adding
// a concurrency to cell a re-runs a's correlation, not b's.
func TestEditReRunsWhatItTouches(t *testing.T) {
	dir, base := t.TempDir(), t.TempDir()
	for _, cell := range []string{"a", "b"} {
		testkit.WriteFile(t, filepath.Join(base, "dcgm", cell+".yaml"), frozen)
		for _, c := range []int{1, 2} {
			stepstest.WritePoint(t, dir, stepstest.OKPoint(cell, c))
		}
	}
	out, recs := stepstest.Run(t, dir, base, twoCells("B200", "[1, 2]"), nil)
	for _, n := range []string{"dcgm[a]", "dcgm[b]", "atlas"} {
		if out[n] != run.OutRan {
			t.Fatalf("first run: %s %s", n, out[n])
		}
	}
	var res aggregate.Result
	stepstest.Result(t, recs, "atlas", &res)
	if res.DCGMGroundedCells != 2 || res.AtlasCells != 2 || res.PlotReadyPoints != 4 {
		t.Fatalf("first run result %+v: want 2 grounded cells, 4 plot-ready points", res)
	}

	out, _ = stepstest.Run(t, dir, base, twoCells("H200", "[1, 2]"), nil)
	want := map[string]string{"dcgm[a]": run.OutReused, "dcgm[b]": run.OutReused, "atlas": run.OutRan}
	for n, w := range want {
		if out[n] != w {
			t.Errorf("after editing a's hardware: %s %s, want %s", n, out[n], w)
		}
	}
	for _, r := range stepstest.AtlasRows(t, dir) {
		if w := map[string]string{"a": "H200", "b": "B200"}[r.CellID]; r.Hardware != w {
			t.Errorf("row %s/c%d hardware %s, want %s", r.CellID, r.Concurrency, r.Hardware, w)
		}
	}

	stepstest.WritePoint(t, dir, stepstest.OKPoint("a", 4))
	out, recs = stepstest.Run(t, dir, base, twoCells("H200", "[1, 2, 4]"), nil)
	want = map[string]string{"dcgm[a]": run.OutRan, "dcgm[b]": run.OutReused, "atlas": run.OutRan}
	for n, w := range want {
		if out[n] != w {
			t.Errorf("after adding a/c4: %s %s, want %s", n, out[n], w)
		}
	}
	// The frozen file has no c4: cell a is no longer grounded.
	stepstest.Result(t, recs, "atlas", &res)
	if res.DCGMGroundedCells != 1 || res.Rows != 5 {
		t.Errorf("after adding a/c4: %+v, want 1 grounded cell and 5 rows", res)
	}
}

const rooflineCampaign = `version: 1
campaign: roof
kind: throughput
endpoints:
  main: {url: "http://127.0.0.1:9", model: m}
defaults: {hardware: H100, quant: BF16, tensor_parallel: 4}
cells:
  - {id: a, workload: {shape: aa-1k}, concurrencies: [1]}
pipeline:
  - {id: run, kind: run-shape}
  - {id: roofline, kind: roofline-import, with: {bundle: bundle, id: h100-tp4, cache_mode: cold}}
  - {id: atlas, kind: aggregate, needs: [run, roofline]}
`

// TestRooflineCellsJoinTheAtlas imports the documented example bundle (3 decode + 3 prefill
// points; decode c32 has 48 prompts < 2 × 32 and is flagged) beside one measured cell.
func TestRooflineCellsJoinTheAtlas(t *testing.T) {
	dir, base := t.TempDir(), t.TempDir()
	testkit.CopyDir(t, filepath.Join("..", "analysis", "roofline", "testdata", "bundle"), filepath.Join(base, "bundle"))
	stepstest.WritePoint(t, dir, stepstest.OKPoint("a", 1))
	out, recs := stepstest.Run(t, dir, base, rooflineCampaign, nil)
	if out["atlas"] != run.OutRan || out["roofline"] != run.OutRan {
		t.Fatalf("outcomes %v", out)
	}
	var res aggregate.Result
	stepstest.Result(t, recs, "atlas", &res)
	want := aggregate.Result{AtlasCells: 3, FullSweeps: 3, PlotReadyPoints: res.PlotReadyPoints, Rows: 7, ImportedCells: 2,
		TPMGroups: res.TPMGroups, TPMSLAGroups: res.TPMSLAGroups, Coverage: res.Coverage, DCGMGroundedCells: 2, SteadyWindowUndercount: 1}
	res.Files = campaigndir.Evidence{}
	if !reflect.DeepEqual(res, want) {
		t.Errorf("result\n got %+v\nwant %+v", res, want)
	}
	if got := cellsOf(stepstest.AtlasRows(t, dir)); !slices.Equal(got, []string{"a", "h100-tp4-decode", "h100-tp4-prefill"}) {
		t.Errorf("atlas cells %v", got)
	}
	// Editing the bundle re-imports and re-aggregates.
	testkit.WriteFile(t, filepath.Join(base, "bundle", "NOTES.md"), "recaptured\n")
	out, _ = stepstest.Run(t, dir, base, rooflineCampaign, nil)
	if out["roofline"] != run.OutRan || out["atlas"] != run.OutRan {
		t.Errorf("after editing the bundle: %v, want both to run", out)
	}
}

func TestCheckAggregateNeedsRooflineImport(t *testing.T) {
	src := strings.Replace(rooflineCampaign, "needs: [run, roofline]", "needs: [run]", 1)
	d := stepstest.OneProblem(t, src)
	if d.Line != 12 || !strings.Contains(d.Message, "aggregates the files roofline-import step roofline writes, but does not need it") || !strings.Contains(d.Hint, "add roofline to needs") {
		t.Errorf("problem %s (hint %q), want line 12: ... does not need it", d.Error(), d.Hint)
	}
	if err := stepstest.Validate(t, rooflineCampaign); err != nil {
		t.Errorf("valid campaign rejected: %v", err)
	}
}

// TestCheckAggregateNeedsEveryWriter: in the explicit pipeline of DESIGN.md the spec scrape
// brackets run-shape, so needing run-shape does not wait for its after-scrape; aggregate must
// need it too.
func TestCheckAggregateNeedsEveryWriter(t *testing.T) {
	pipeline := func(atlasNeeds string) string {
		return `version: 1
campaign: design
endpoints:
  main: {url: "sim://", model: m}
cells:
  - {id: a, workload: {shape: aa-1k}, concurrencies: [1]}
pipeline:
  - {id: spec, kind: scrape-spec, foreach: point, brackets: run}
  - {id: run, kind: run-shape, foreach: point}
  - {id: dcgm, kind: dcgm-correlate, foreach: cell, needs: [run]}
  - {id: atlas, kind: aggregate, needs: ` + atlasNeeds + `}
`
	}
	tests := []struct{ needs, want string }{
		{"[run, dcgm, spec]", ""},
		{"[dcgm, spec]", ""}, // run-shape is reached through dcgm
		{"[run, dcgm]", "aggregates the files scrape-spec step spec writes"},
		{"[spec]", "aggregates the files run-shape step run writes"},
	}
	for _, tc := range tests {
		err := stepstest.Validate(t, pipeline(tc.needs))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("needs %s rejected: %v", tc.needs, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("needs %s: %v, want %q", tc.needs, err, tc.want)
		}
	}
}

func TestCheckRooflineImportIsADirectNeed(t *testing.T) {
	src := strings.Replace(rooflineCampaign, "  - {id: atlas, kind: aggregate, needs: [run, roofline]}\n",
		"  - {id: wait, kind: exec, needs: [roofline], with: {command: [\"true\"]}}\n  - {id: atlas, kind: aggregate, needs: [run, wait]}\n", 1)
	err := stepstest.Validate(t, src)
	if err == nil || !strings.Contains(err.Error(), "reaches roofline-import step roofline only through other steps") {
		t.Errorf("got %v", err)
	}
}
