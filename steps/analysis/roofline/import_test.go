package roofline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/perfdag/perfdag/engine/bounded"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/analysis/atlas"
	"github.com/perfdag/perfdag/steps/testkit"
)

const exampleBundle = "testdata/bundle"

func TestImportExampleBundle(t *testing.T) {
	dir := t.TempDir()
	imp, err := Import(context.Background(), dir, exampleBundle, Options{Campaign: "camp", ID: "h100-tp4", CacheMode: "cold"})
	if err != nil {
		t.Fatal(err)
	}
	if imp.DecodeCell != "h100-tp4-decode" || imp.PrefillCell != "h100-tp4-prefill" || len(imp.Rows) != 6 {
		t.Fatalf("cells %q %q, %d rows", imp.DecodeCell, imp.PrefillCell, len(imp.Rows))
	}
	// c32 ran 48 prompts < 2·32: flagged and warned; nothing else warns.
	if len(imp.Warnings) != 1 || !strings.Contains(imp.Warnings[0], "decode concurrency 32") {
		t.Errorf("warnings %q", imp.Warnings)
	}
	var c8 *schema.RooflineRow
	for i := range imp.Sweep.Rows {
		if r := &imp.Sweep.Rows[i]; r.Phase == schema.RooflinePhaseDecode && r.Concurrency == 8 {
			c8 = r
		}
	}
	if c8 == nil {
		t.Fatal("no decode c8 row")
	}
	// Hand computation in TestDeliveredHBMAndAchieved: context = 1000 + 48/2 = 1024; AI 7.99985;
	// delivered HBM 42.2956 %; DRAM_ACTIVE proxy 0.41 → 41 %; achieved 11.33502 TFLOP/s/GPU;
	// ridge 989/3.35 = 295.22 → memory-bound.
	if c8.Context != 1024 || !approx(c8.ArithmeticIntensity, 7.99985199, 1e-8) ||
		!approx(*c8.HBMBWDeliveredPct, 42.29564324, 1e-8) || !approx(*c8.DRAMActivePct, 41, 1e-12) ||
		!approx(*c8.AchievedTFLOPsPerGPU, 11.33502267, 1e-8) || c8.Bound != "memory" ||
		!approx(c8.RidgeFLOPPerByte, 989/3.35, 1e-12) {
		t.Errorf("c8 row %+v", *c8)
	}
	for _, r := range imp.Rows {
		if r.Backend != schema.RooflineBackend || !r.DCGMGrounded || r.SolRigor != schema.RigorL3 ||
			r.CellStatus != schema.CellFull || r.Hardware != "H100" || r.TensorParallel != 4 || r.CacheMode != "cold" ||
			r.Delivery != "release" || r.Model != "meta-llama/Llama-3.1-70B-Instruct" {
			t.Errorf("row %s/c%d: %+v", r.CellID, r.Concurrency, r)
		}
		undercount := slices.Contains(r.Flags, schema.FlagSteadyWindowUndercount)
		if undercount != (r.CellID == imp.DecodeCell && r.Concurrency == 32) {
			t.Errorf("row %s/c%d flags %v", r.CellID, r.Concurrency, r.Flags)
		}
	}
	// tokens_per_watt for decode c8 = 320 ÷ (470 W × 4 GPUs) = 0.170213
	if tpw := imp.Rows[1].TokensPerWatt; tpw == nil || !approx(*tpw, 320.0/1880, 1e-12) {
		t.Errorf("decode c8 tokens_per_watt %v", tpw)
	}
	// The files are where the atlas expects them, and they aggregate.
	wantCells := []campaigndir.CellFiles{
		{Cell: "h100-tp4-decode", Normalized: campaigndir.Normalized("h100-tp4-decode"), Status: campaigndir.CellStatus("h100-tp4-decode"),
			Sweep: campaigndir.RooflineSweep("h100-tp4-decode"), Source: "roofline-import"},
		{Cell: "h100-tp4-prefill", Normalized: campaigndir.Normalized("h100-tp4-prefill"), Status: campaigndir.CellStatus("h100-tp4-prefill"), Source: "roofline-import"},
	}
	if !slices.Equal(imp.Cells, wantCells) {
		t.Errorf("cells %+v", imp.Cells)
	}
	cov, err := atlas.AggregateDir(context.Background(), campaigndir.Unrecorded(dir), campaigndir.Atlas(), imp.Cells)
	if err != nil {
		t.Fatal(err)
	}
	// Decode rows carry TTFT and request throughput (plot-ready); prefill rows have no output rate.
	if cov.String() != "Coverage: 2 atlas cells | 2 full sweeps | 0 partial sweeps | 0 failed cells | 3 plot-ready concurrency points" {
		t.Errorf("coverage %s", cov)
	}
	got, err := os.ReadFile(campaigndir.Abs(dir, imp.Cells[0].Sweep))
	if err != nil {
		t.Fatal(err)
	}
	got = bytes.ReplaceAll(got, []byte(exampleBundle), []byte("BUNDLE"))
	testkit.Golden(t, filepath.Join("testdata", "roofline_sweep.golden.json"), got)
	var sweep schema.RooflineSweep
	if err := json.Unmarshal(got, &sweep); err != nil || sweep.Model.ActiveParams != 69_501_714_432 || len(sweep.Rows) != 6 {
		t.Errorf("sweep round trip: %v", err)
	}
}

func TestImportSeveralConfigsAndReimport(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	if _, err := Import(ctx, dir, exampleBundle, Options{Campaign: "camp", ID: "tp4"}); err != nil {
		t.Fatal(err)
	}
	imp, err := Import(ctx, dir, exampleBundle, Options{Campaign: "camp", ID: "tp8", TensorParallel: 8, Quant: "FP8"})
	if err != nil {
		t.Fatal(err)
	}
	if len(imp.Warnings) != 3 || !strings.Contains(imp.Warnings[0], "overrides") {
		t.Errorf("override warnings %q", imp.Warnings)
	}
	if _, err := Import(ctx, dir, exampleBundle, Options{Campaign: "camp", ID: "tp4"}); err != nil {
		t.Fatalf("re-import: %v", err)
	}
	for _, id := range []string{"tp4-decode", "tp4-prefill", "tp8-decode", "tp8-prefill"} {
		if _, err := os.Stat(campaigndir.Abs(dir, campaigndir.Normalized(id))); err != nil {
			t.Errorf("cell %s: %v", id, err)
		}
	}
}

// copyBundle copies the example bundle so a test can break one file.
func copyBundle(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	testkit.CopyDir(t, exampleBundle, dst)
	return dst
}

func editFile(t *testing.T, path, old, new string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(old)) {
		t.Fatalf("%s does not contain %q", path, old)
	}
	if err := os.WriteFile(path, bytes.Replace(b, []byte(old), []byte(new), 1), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestImportBadBundles(t *testing.T) {
	tests := []struct {
		name    string
		corrupt func(t *testing.T, b string)
		opt     Options
		want    []string
	}{
		{"missing decode.json", func(t *testing.T, b string) { os.Remove(filepath.Join(b, DecodeFile)) }, Options{}, []string{DecodeFile, "missing file"}},
		{"config missing field", func(t *testing.T, b string) {
			editFile(t, filepath.Join(b, ConfigFile), `"num_hidden_layers": 80,`, "")
		}, Options{}, []string{ConfigFile, "field num_hidden_layers"}},
		{"decode point missing output", func(t *testing.T, b string) {
			editFile(t, filepath.Join(b, DecodeFile), `"output_tok_s": 320, `, "")
		}, Options{}, []string{DecodeFile, "points[1].output_tok_s: missing"}},
		{"dcgm not a ratio", func(t *testing.T, b string) {
			editFile(t, filepath.Join(b, DCGMFile), `"dram_active": 0.41`, `"dram_active": 41`)
		}, Options{}, []string{DCGMFile, "points[1].dram_active", "ratio"}},
		{"unknown field", func(t *testing.T, b string) {
			editFile(t, filepath.Join(b, PrefillFile), `"isl": 512,`, `"isl": 512, "islx": 1,`)
		}, Options{}, []string{PrefillFile, "islx"}},
		{"provenance without delivery", func(t *testing.T, b string) {
			editFile(t, filepath.Join(b, ProvenanceFile), `"delivery": "release",`, "")
		}, Options{}, []string{ProvenanceFile, "field delivery"}},
		{"no hardware anywhere", func(t *testing.T, b string) {
			editFile(t, filepath.Join(b, ProvenanceFile), `"hardware": "H100",`, "")
		}, Options{}, []string{ProvenanceFile, "field hardware"}},
		{"unknown hardware", func(t *testing.T, b string) {}, Options{Hardware: "TPUv5"}, []string{"TPUv5", "catalog"}},
		{"bad id", func(t *testing.T, b string) {}, Options{ID: "../x"}, []string{`id "../x"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := copyBundle(t)
			tt.corrupt(t, b)
			camp := t.TempDir()
			opt := tt.opt
			opt.Campaign = "camp"
			if opt.ID == "" {
				opt.ID = "bad"
			}
			_, err := Import(context.Background(), camp, b, opt)
			if err == nil {
				t.Fatal("bad bundle imported")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err %q does not name %q", err, w)
				}
			}
			if entries, _ := os.ReadDir(camp); len(entries) != 0 {
				t.Errorf("a failed import wrote %v", entries)
			}
		})
	}
}

func TestImportMissingDCGMWindow(t *testing.T) {
	b := copyBundle(t)
	editFile(t, filepath.Join(b, DCGMFile), `"isl": 8192,`, `"isl": 4096,`)
	imp, err := Import(context.Background(), t.TempDir(), b, Options{Campaign: "camp", ID: "x"})
	if err != nil {
		t.Fatal(err)
	}
	last := imp.Rows[len(imp.Rows)-1]
	if last.DCGMGrounded || last.SolRigor != schema.RigorL1 || last.DRAMActive != nil {
		t.Errorf("prefill 8192 without DCGM: grounded %v rigor %s", last.DCGMGrounded, last.SolRigor)
	}
	if !slices.ContainsFunc(imp.Warnings, func(w string) bool { return strings.Contains(w, "prefill concurrency 1 isl 8192") }) {
		t.Errorf("warnings %q", imp.Warnings)
	}
}

func TestImportModelConfigAndKVOverride(t *testing.T) {
	imp, err := Import(context.Background(), t.TempDir(), exampleBundle, Options{
		Campaign: "camp", ID: "ds", ModelConfig: deepseekConfig, Quant: "FP8", KVCacheDtype: "fp8",
	})
	if err != nil {
		t.Fatal(err)
	}
	s := imp.Sweep
	if s.Model.Attention != "mla" || s.Model.Source != deepseekConfig || s.WeightBytes != 1 || s.KVBytes != 1 || s.Provenance.KVCacheDtype != "fp8" {
		t.Errorf("model %s from %s, b_w %v b_kv %v", s.Model.Attention, s.Model.Source, s.WeightBytes, s.KVBytes)
	}
	// DeepSeek-V3 FP8 weights and FP8 KV, decode B = 1 at context 1000 + 48/2 = 1024 (8 experts):
	//   FLOP  = 73,249,193,984 + 16,990,208·1024 = 73,249,193,984 + 17,397,972,992 = 90,647,166,976
	//   bytes = 36,624,596,992 + 1024·35,136 + 35,136 = 36,624,596,992 + 35,979,264 + 35,136 = 36,660,611,392
	r := s.Rows[0]
	if r.Concurrency != 1 || r.FLOPPerStep != 90_647_166_976 || r.BytesPerStep != 36_660_611_392 {
		t.Errorf("c1 FLOP %.0f bytes %.0f", r.FLOPPerStep, r.BytesPerStep)
	}
	if _, err := Import(context.Background(), t.TempDir(), exampleBundle, Options{Campaign: "camp", ID: "x", KVCacheDtype: "int3"}); err == nil ||
		!strings.Contains(err.Error(), "kv_cache_dtype") {
		t.Errorf("bad kv dtype: %v", err)
	}
}

// Every bundle file is read only when regular and at most MaxBundleFileBytes.
func TestImportBoundedFiles(t *testing.T) {
	pad := func(t *testing.T, path string, size int) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		b = append(b, strings.Repeat(" ", size-len(b))...) // JSON allows trailing whitespace
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name    string
		corrupt func(t *testing.T, b string)
		want    error // nil: imports
	}{
		{"decode.json at the limit", func(t *testing.T, b string) { pad(t, filepath.Join(b, DecodeFile), MaxBundleFileBytes) }, nil},
		{"decode.json one byte past", func(t *testing.T, b string) { pad(t, filepath.Join(b, DecodeFile), MaxBundleFileBytes+1) }, bounded.ErrTooLarge},
		{"config.json past the limit", func(t *testing.T, b string) { pad(t, filepath.Join(b, ConfigFile), MaxBundleFileBytes+1) }, bounded.ErrTooLarge},
		{"dcgm.json is a FIFO", func(t *testing.T, b string) {
			os.Remove(filepath.Join(b, DCGMFile))
			if err := syscall.Mkfifo(filepath.Join(b, DCGMFile), 0o644); err != nil {
				t.Fatal(err)
			}
		}, bounded.ErrNotRegular},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := copyBundle(t)
			tt.corrupt(t, b)
			_, err := Import(context.Background(), t.TempDir(), b, Options{Campaign: "camp", ID: "bounded"})
			if tt.want == nil && err != nil || tt.want != nil && !errors.Is(err, tt.want) {
				t.Fatalf("Import: %v, want %v", err, tt.want)
			}
		})
	}
}
