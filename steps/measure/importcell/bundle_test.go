package importcell

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/testkit"
)

const bundle = samples + "/variant-ab"

// With its manifest, the sample bundle gives one cell per arm, tagged with the manifest's
// engines and versions, the baseline on vllm's, the SGLang arm given the model the vLLM arm
// states.
func TestBuildBundleManifest(t *testing.T) {
	cells, err := BuildBundle(bundle, BundleOptions{Options: Options{Identity: schema.Identity{TensorParallel: 1, CacheMode: "warm"}}})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ id, arm, engine, version, format string }{
		{"vllm-sweep", "vllm", "vllm", "0.9.1", "vllm-bench"},
		{"sglang-sweep", "sglang", "sglang", "0.4.6", "sglang-bench"},
	}
	if len(cells) != len(want) {
		t.Fatalf("%d cells, want %d", len(cells), len(want))
	}
	for i, w := range want {
		c := cells[i]
		if c.ID != w.id || c.Arm != w.arm || c.Engine != w.engine || c.EngineVersion != w.version || c.Import.Format != w.format ||
			c.Import.SourceVersion != w.version || c.Baseline != (w.arm == "vllm") || c.Model != "meta-llama/Llama-3.1-8B-Instruct" ||
			c.TensorParallel != 1 || c.CacheMode != "warm" {
			t.Errorf("cell %d: %+v %+v, want %+v", i, c.Identity, c.Import, w)
		}
		if len(c.Concurrencies) != 3 || c.Concurrencies[0] != 1 || c.Concurrencies[2] != 32 || c.Workload.InputTokens != 512 || c.Workload.OutputTokens != 128 {
			t.Errorf("cell %s: concurrencies %v workload %+v", c.ID, c.Concurrencies, c.Workload)
		}
	}
}

// Without a manifest the sub-directories are the arms, engine-tagged by their names; the
// baseline comes from the option.
func TestBuildBundleDirectories(t *testing.T) {
	dir := t.TempDir()
	testkit.CopyTree(t, filepath.Join(bundle, "vllm"), filepath.Join(dir, "vllm-main"))
	testkit.CopyTree(t, filepath.Join(bundle, "sglang"), filepath.Join(dir, "sglang-0.4.6"))
	if err := os.WriteFile(filepath.Join(dir, "sglang-0.4.6", "README.txt"), []byte("notes"), 0o644); err != nil {
		t.Fatal(err)
	}
	cells, err := BuildBundle(dir, BundleOptions{Baseline: "vllm-main", Options: Options{BaseDir: dir}})
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 2 || cells[0].ID != "sglang-0.4.6-sweep" || cells[0].Engine != "sglang" || cells[0].Baseline ||
		cells[1].ID != "vllm-main-sweep" || cells[1].Engine != "vllm" || !cells[1].Baseline {
		t.Fatalf("cells %+v", cells)
	}
	if p := cells[1].Import.Points[0].Path; p != "vllm-main/vllm-c1.json" {
		t.Errorf("path %q, want vllm-main/vllm-c1.json (relative to BaseDir)", p)
	}

	if _, err := BuildBundle(dir, BundleOptions{Baseline: "vllm"}); err == nil || !strings.Contains(err.Error(), `baseline arm "vllm" is not one of its arms (sglang-0.4.6, vllm-main)`) {
		t.Errorf("unknown baseline: %v", err)
	}
	one := t.TempDir()
	testkit.CopyTree(t, filepath.Join(bundle, "vllm"), filepath.Join(one, "vllm"))
	if _, err := BuildBundle(one, BundleOptions{}); err == nil || !strings.Contains(err.Error(), "bundle "+one+": 1 arm: ") {
		t.Errorf("one arm: %v", err)
	}
	aip := t.TempDir()
	testkit.CopyTree(t, filepath.Join(bundle, "vllm"), filepath.Join(aip, "vllm"))
	testkit.CopyTree(t, filepath.Join(samples, "aiperf-c4"), filepath.Join(aip, "candidate", "c4"))
	if _, err := BuildBundle(aip, BundleOptions{}); err == nil || !strings.Contains(err.Error(), "arm candidate: its aiperf outputs do not name the engine") {
		t.Errorf("AIPerf arm without an engine: %v", err)
	}
	empty := t.TempDir()
	testkit.CopyTree(t, filepath.Join(bundle, "vllm"), filepath.Join(empty, "vllm"))
	if err := os.MkdirAll(filepath.Join(empty, "sglang"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := BuildBundle(empty, BundleOptions{}); err == nil || !strings.Contains(err.Error(), "holds no benchmark outputs") {
		t.Errorf("empty arm: %v", err)
	}
}

// A hostile manifest is refused while it is lexed: billion-laughs aliases (which would expand
// to gigabytes), any alias at all, and brackets nested past the campaign file's limit; the
// refusal names the manifest's line and column.
func TestBundleManifestRefusesExpansion(t *testing.T) {
	laughs := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	for i := 'b'; i <= 'j'; i++ {
		prev := string(i - 1)
		laughs += string(i) + ": &" + string(i) + " [*" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev +
			", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + "]\n"
	}
	laughs += "baseline: vllm\narms: [*j]\n"
	for name, tc := range map[string]struct{ manifest, want string }{
		"billion laughs": {laughs, "bundle.yaml:1:4: an anchor or alias"},
		"one alias":      {"baseline: &b vllm\narms:\n  - {arm: *b, engine: vllm}\n  - {arm: sglang}\n", "bundle.yaml:1:11: an anchor or alias"},
		"deep":           {"arms: " + strings.Repeat("[", 5000) + "\n", "nesting deeper than the limit"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			testkit.CopyTree(t, bundle, dir)
			if err := os.WriteFile(filepath.Join(dir, ManifestFile), []byte(tc.manifest), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := BuildBundle(dir, BundleOptions{Options: Options{BaseDir: dir}})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want one containing %q", err, tc.want)
			}
		})
	}
}
