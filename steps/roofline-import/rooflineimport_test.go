package rooflineimport_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/engine/diag"
	"github.com/perfdag/perfdag/engine/run"
	"github.com/perfdag/perfdag/schema/campaigndir"
	rooflineimport "github.com/perfdag/perfdag/steps/roofline-import"
	"github.com/perfdag/perfdag/steps/testkit"
	"github.com/perfdag/perfdag/steps/testkit/stepstest"
)

const header = `version: 1
campaign: roof
kind: throughput
endpoints:
  main: {url: "http://127.0.0.1:9", model: m}
cells:
  - {id: a, workload: {shape: aa-1k}, concurrencies: [1]}
pipeline:
`

// bundle copies steps/analysis/roofline's documented example bundle (Llama-3.1-70B, H100 TP4, BF16:
// decode c1/c8/c32, prefill ISL 512/2048/8192, DCGM for all six) under base/name.
func bundle(t *testing.T, base, name string) string {
	t.Helper()
	dst := filepath.Join(base, name)
	testkit.CopyDir(t, filepath.Join("..", "analysis", "roofline", "testdata", "bundle"), dst)
	return dst
}

func TestImportThroughEngine(t *testing.T) {
	dir, base := t.TempDir(), t.TempDir()
	bundle(t, base, "bundle")
	src := header + "  - {id: roofline, kind: roofline-import, with: {bundle: bundle, id: h100-tp4, cache_mode: cold}}\n"
	var log bytes.Buffer
	out, recs := stepstest.Run(t, dir, base, src, &log)
	if out["roofline"] != run.OutRan {
		t.Fatalf("roofline: %s", out["roofline"])
	}
	var res rooflineimport.Result
	stepstest.Result(t, recs, "roofline", &res)
	// Ridge of H100 at BF16 = 989 TFLOP/s ÷ 3.35 TB/s = 295.22 FLOP/byte (catalog figures).
	want := rooflineimport.Result{ImportID: "h100-tp4", DecodeCell: "h100-tp4-decode", PrefillCell: "h100-tp4-prefill",
		DecodePoints: 3, PrefillPoints: 3, UndercountCells: 1, DCGMPoints: 6, Warnings: 1, Ridge: res.Ridge,
		Model: "meta-llama/Llama-3.1-70B-Instruct", Hardware: "H100", Quant: "BF16", TensorParallel: 4}
	res.Cells = nil
	if !reflect.DeepEqual(res, want) {
		t.Errorf("result\n got %+v\nwant %+v", res, want)
	}
	if d := res.Ridge - 989.0/3.35; d > 1e-9 || d < -1e-9 {
		t.Errorf("ridge %v, want 989/3.35 = 295.22", res.Ridge)
	}
	if s := recs["roofline"].Summary; !strings.Contains(s, "WARNING steady_window_undercount (num_prompts < 2c) at decode c32") {
		t.Errorf("summary lacks the undercount warning: %s", s)
	}
	if !strings.Contains(log.String(), "warning: roofline import h100-tp4:") || !strings.Contains(log.String(), "concurrency 32") {
		t.Errorf("log lacks the undercount warning:\n%s", log.String())
	}
	var outputs []string
	for f := range recs["roofline"].Outputs {
		outputs = append(outputs, f)
	}
	slices.Sort(outputs)
	wantOut := []string{campaigndir.Normalized("h100-tp4-decode"), campaigndir.RooflineSweep("h100-tp4-decode"), campaigndir.CellStatus("h100-tp4-decode"),
		campaigndir.Normalized("h100-tp4-prefill"), campaigndir.CellStatus("h100-tp4-prefill")}
	if !slices.Equal(outputs, wantOut) {
		t.Errorf("outputs %v, want %v", outputs, wantOut)
	}
}

// TestSeveralImportsAndReimport imports two configurations into one campaign, then shows that
// only the import whose bundle (or model config) changed runs again.
func TestSeveralImportsAndReimport(t *testing.T) {
	dir, base := t.TempDir(), t.TempDir()
	bundle(t, base, "tp4")
	bundle(t, base, "tp8")
	cfg, err := os.ReadFile(filepath.Join("..", "analysis", "roofline", "testdata", "llama-3.1-70b.config.json"))
	if err != nil {
		t.Fatal(err)
	}
	testkit.WriteFile(t, filepath.Join(base, "models", "llama.json"), string(cfg))
	src := header + `  - {id: tp4, kind: roofline-import, with: {bundle: tp4}}
  - {id: tp8, kind: roofline-import, with: {bundle: tp8, tensor_parallel: 8, kv_cache_dtype: fp8, model_config: models/llama.json}}
`
	out, recs := stepstest.Run(t, dir, base, src, nil)
	if out["tp4"] != run.OutRan || out["tp8"] != run.OutRan {
		t.Fatalf("outcomes %v", out)
	}
	var r8 rooflineimport.Result
	stepstest.Result(t, recs, "tp8", &r8)
	if r8.TensorParallel != 8 || r8.DecodeCell != "tp8-decode" || r8.Warnings != 2 {
		t.Errorf("tp8 %+v: want TP 8 (with a warning that it overrides provenance's 4) and cell tp8-decode", r8)
	}
	for _, cell := range []string{"tp4-decode", "tp4-prefill", "tp8-decode", "tp8-prefill"} {
		if _, err := os.Stat(campaigndir.Abs(dir, campaigndir.Normalized(cell))); err != nil {
			t.Errorf("cell %s: %v", cell, err)
		}
	}
	steps := []struct {
		name string
		edit func()
		want map[string]string
	}{
		{"nothing changed", func() {}, map[string]string{"tp4": run.OutReused, "tp8": run.OutReused}},
		{"tp4 bundle edited", func() { testkit.WriteFile(t, filepath.Join(base, "tp4", "NOTES.md"), "re-captured\n") },
			map[string]string{"tp4": run.OutRan, "tp8": run.OutReused}},
		{"model config edited", func() { testkit.WriteFile(t, filepath.Join(base, "models", "llama.json"), string(cfg)+"\n") },
			map[string]string{"tp4": run.OutReused, "tp8": run.OutRan}},
	}
	for _, s := range steps {
		s.edit()
		out, _ := stepstest.Run(t, dir, base, src, nil)
		for n, w := range s.want {
			if out[n] != w {
				t.Errorf("%s: %s %s, want %s", s.name, n, out[n], w)
			}
		}
	}
}

// TestBadBundleWritesNothing removes decode.json: the node fails naming the file, and no cell
// of the import appears.
func TestBadBundleWritesNothing(t *testing.T) {
	dir, base := t.TempDir(), t.TempDir()
	b := bundle(t, base, "bundle")
	if err := os.Remove(filepath.Join(b, "decode.json")); err != nil {
		t.Fatal(err)
	}
	out, recs := stepstest.Run(t, dir, base, header+"  - {id: roofline, kind: roofline-import, with: {bundle: bundle}}\n", nil)
	if out["roofline"] != run.OutFailed {
		t.Fatalf("roofline %s, want failed", out["roofline"])
	}
	if msg := recs["roofline"].Error; !strings.Contains(msg, "decode.json") {
		t.Errorf("error does not name decode.json: %s", msg)
	}
	if entries, _ := os.ReadDir(campaigndir.Abs(dir, campaigndir.Cells())); len(entries) != 0 {
		t.Errorf("a failed import left %d cell dirs behind", len(entries))
	}
}

func TestCheckRejectsBadParams(t *testing.T) {
	tests := []struct {
		name, steps, want string
		line              int
	}{
		{"no bundle", "  - {id: r, kind: roofline-import, with: {hardware: H100}}\n", "with.bundle is required", 9},
		{"unknown hardware", "  - {id: r, kind: roofline-import, with: {bundle: b, hardware: H900}}\n", `hardware "H900" is not in the GPU catalog`, 9},
		{"negative tp", "  - {id: r, kind: roofline-import, with: {bundle: b, tensor_parallel: -4}}\n", "with.tensor_parallel must be between 0 and 1024, got -4", 9},
		{"unknown quant", "  - {id: r, kind: roofline-import, with: {bundle: b, quant: INT3}}\n", "quant:", 9},
		{"cache mode", "  - {id: r, kind: roofline-import, with: {bundle: b, cache_mode: hot}}\n", `with.cache_mode: "hot" is not one of warm, cold`, 9},
		{"bad id", "  - {id: r, kind: roofline-import, with: {bundle: b, id: Bad_ID}}\n", `id "Bad_ID" is not a valid id`, 9},
		{"id equal to a cell id is fine", "  - {id: r, kind: roofline-import, with: {bundle: b, id: a}}\n  - {id: s, kind: exec, with: {command: [\"true\"]}}\n", "", 0},
		{"duplicate ids", "  - {id: r, kind: roofline-import, with: {bundle: b, id: x}}\n  - {id: s, kind: roofline-import, with: {bundle: c, id: x}}\n", `both import as "x"`, 9},
		{"unknown key", "  - {id: r, kind: roofline-import, with: {bundel: b}}\n", `unknown key "bundel"`, 9},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := stepstest.Validate(t, header+tc.steps)
			if tc.want == "" {
				if err != nil { // cells a-decode/a-prefill do not collide with cell a
					t.Fatalf("valid campaign rejected: %v", err)
				}
				return
			}
			var l diag.List
			if !errors.As(err, &l) || len(l) == 0 {
				t.Fatalf("want a problem, got %v", err)
			}
			if d := l[0]; d.Line != tc.line || !strings.Contains(d.Message, tc.want) {
				t.Errorf("got %s, want line %d: %s", d.Error(), tc.line, tc.want)
			}
		})
	}
	src := strings.Replace(header, "id: a,", "id: imp-decode,", 1) + "  - {id: r, kind: roofline-import, with: {bundle: b, id: imp}}\n"
	if err := stepstest.Validate(t, src); err == nil || !strings.Contains(err.Error(), "writes cell imp-decode, which is already a cell of the campaign") {
		t.Errorf("collision with a campaign cell: %v", err)
	}
}
