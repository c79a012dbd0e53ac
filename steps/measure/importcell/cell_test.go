package importcell

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/benchfile"
)

const samples = "../../../testdata/imports"

// Build recognises each format, names the cell after the file, takes the model, the
// concurrency and the token lengths the file states, writes paths relative to BaseDir, and
// keeps the identity it was given.
func TestBuild(t *testing.T) {
	cases := []struct {
		path, format, id, engine, model string
		isl, osl                        int
		stated                          string
	}{
		{"vllm-c4.json", benchfile.SourceVLLM, "vllm-c4", "vllm", "meta-llama/Llama-3.1-8B-Instruct", 550, 16, "vllm-c4.json"},
		{"sglang-c4.jsonl", benchfile.SourceSGLang, "sglang-c4", "sglang", "", 550, 16, "sglang-c4.jsonl"},
		{"aiperf-c4", benchfile.SourceAIPerf, "aiperf-c4", "", "meta-llama/Llama-3.1-8B-Instruct", 550, 16, "aiperf-c4"},
		{"aiperf-c4/profile_export_aiperf.json", benchfile.SourceAIPerf, "aiperf-c4", "", "meta-llama/Llama-3.1-8B-Instruct", 550, 16, "aiperf-c4"},
	}
	for _, tc := range cases {
		t.Run(tc.path, func(t *testing.T) {
			c, pts, err := Build([]string{filepath.Join(samples, tc.path)}, Options{BaseDir: "../../../pipelines",
				Identity: schema.Identity{Hardware: "H100", CacheMode: "warm"}})
			if err != nil {
				t.Fatal(err)
			}
			if c.ID != tc.id || c.Engine != tc.engine || c.Model != tc.model || c.Hardware != "H100" || c.CacheMode != "warm" {
				t.Errorf("cell %s engine %q model %q hardware %q cache %q", c.ID, c.Engine, c.Model, c.Hardware, c.CacheMode)
			}
			if c.Workload.InputTokens != tc.isl || c.Workload.OutputTokens != tc.osl || c.Workload.Shape != "custom" {
				t.Errorf("workload %+v, want custom %d/%d", c.Workload, tc.isl, tc.osl)
			}
			want := schema.ImportPoint{Concurrency: 4, Path: "../testdata/imports/" + tc.stated}
			if c.Import.Format != tc.format || len(c.Import.Points) != 1 || c.Import.Points[0] != want || len(c.Concurrencies) != 1 || c.Concurrencies[0] != 4 {
				t.Errorf("import %+v concurrencies %v, want %s %+v", c.Import, c.Concurrencies, tc.format, want)
			}
			if len(pts) != 1 || pts[0].Result.Source != tc.format {
				t.Errorf("points %+v", pts)
			}
		})
	}
}

// What the files state is checked against the cell's identity and against each other, with
// the file, line and field of the problem.
func TestBuildRefuses(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join(samples, "vllm-c4.json"))
	if err != nil {
		t.Fatal(err)
	}
	again := filepath.Join(dir, "again.json")
	if err := os.WriteFile(again, b, 0o644); err != nil {
		t.Fatal(err)
	}
	vllm, sglang := filepath.Join(samples, "vllm-c4.json"), filepath.Join(samples, "sglang-c4.jsonl")
	cases := []struct {
		name  string
		paths []string
		o     Options
		field string
		line  int
		msg   string
	}{
		{"other model", []string{vllm}, Options{Identity: schema.Identity{Model: "Qwen/Qwen3-8B"}}, "model_id", 1, `file measured model "meta-llama/Llama-3.1-8B-Instruct", the cell names "Qwen/Qwen3-8B"`},
		{"same concurrency twice", []string{vllm, again}, Options{}, "max_concurrency", 1, "concurrency 4 is already imported from"},
		{"wrong format", []string{vllm}, Options{Format: benchfile.SourceSGLang}, "model_id", 1, "this is a vLLM bench serve result"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Build(tc.paths, tc.o)
			var be *benchfile.Error
			if !errors.As(err, &be) {
				t.Fatalf("err %v, want a positioned error", err)
			}
			if be.Field != tc.field || be.Line != tc.line || !strings.Contains(be.Msg, tc.msg) {
				t.Errorf("got %v, want line %d field %s: %s", err, tc.line, tc.field, tc.msg)
			}
		})
	}
	if _, _, err := Build([]string{vllm, sglang}, Options{}); err == nil || !strings.Contains(err.Error(), "one cell imports one format") {
		t.Errorf("mixed formats: %v", err)
	}
	if _, _, err := Build([]string{vllm}, Options{Identity: schema.Identity{CacheMode: "hot"}}); err == nil || !strings.Contains(err.Error(), "want warm or cold") {
		t.Errorf("cache mode hot: %v", err)
	}
}

func TestID(t *testing.T) {
	for in, want := range map[string]string{"SGLang 0.4.6": "sglang-0.4.6", "vllm_v1/A": "vllm_v1-a", "--": "imported", "x": "x"} {
		if got := ID(in); got != want {
			t.Errorf("ID(%q) = %q, want %q", in, got, want)
		}
	}
}

// One SGLang JSONL of three runs is a cell sweeping their concurrencies, each point the same
// file, each checked at its own run.
func TestBuildSeveralRuns(t *testing.T) {
	var all []byte
	for _, c := range []string{"1", "8", "32"} {
		b, err := os.ReadFile(filepath.Join(bundle, "sglang", "bench_serving_c"+c+".jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	dir := t.TempDir()
	f := filepath.Join(dir, "sweep.jsonl")
	if err := os.WriteFile(f, all, 0o644); err != nil {
		t.Fatal(err)
	}
	c, pts, err := Build([]string{f}, Options{BaseDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Concurrencies) != 3 || c.Concurrencies[2] != 32 || len(c.Import.Points) != 3 || c.Import.Points[1] != (schema.ImportPoint{Concurrency: 8, Path: "sweep.jsonl"}) {
		t.Errorf("cell %v %+v", c.Concurrencies, c.Import.Points)
	}
	if len(pts) != 3 || pts[1].Result.Point.RequestCount != 16 || pts[2].Result.Point.RequestCount != 64 {
		t.Errorf("points read at the wrong runs: %+v", pts)
	}
}

// A cell's workload is named by the prompt and output lengths its files state or measured;
// when those are below one token, the refusal blames the field that makes them so and
// quotes it — not total_input_tokens whatever the cause.
func TestBuildBlamesTheLengthField(t *testing.T) {
	vllm, err := os.ReadFile(filepath.Join(samples, "vllm-c4.json"))
	if err != nil {
		t.Fatal(err)
	}
	aggOnly := string(vllm)
	for _, k := range []string{"input_lens", "output_lens", "ttfts", "itls", "start_times", "generated_texts", "errors"} {
		aggOnly = strings.Replace(aggOnly, `"`+k+`"`, `"dropped_`+k+`"`, 1)
	}
	details, err := os.ReadFile("../benchfile/testdata/sglang-details.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	silent := strings.SplitAfter(string(details), "\n")[1] // c2: 4 ok, 2 failed
	silent = strings.NewReplacer(`"output_lens": [4, 5, 0, 3, 0, 2]`, `"output_lens": [0, 0, 0, 0, 0, 0]`,
		`"total_output_tokens": 14`, `"total_output_tokens": 0`, `"random_output_len": 4`, `"random_output_len": 0`).Replace(silent)
	for _, tc := range []struct {
		name, file, text, field, msg string
	}{
		{"a request count too large for its tokens", "r.json", strings.Replace(aggOnly, `"completed": 8`, `"completed": 1e8`, 1), "completed",
			"holds 1e8: 4400 prompt tokens (total_input_tokens) over that many requests is 4.4e-05 a request, below one"},
		{"no input tokens", "r.json", strings.Replace(aggOnly, `"total_input_tokens": 4400`, `"total_input_tokens": 0`, 1), "total_input_tokens",
			"holds 0: no prompt tokens"},
		{"every answer empty", "r.jsonl", silent, "output_lens", "the 4 successful requests average 0 output tokens, below one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), tc.file)
			if err := os.WriteFile(f, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			_, _, err := Build([]string{f}, Options{})
			var be *benchfile.Error
			if !errors.As(err, &be) || be.Field != tc.field || be.Line != 1 || !strings.Contains(be.Msg, tc.msg) {
				t.Errorf("%v\nwant %s:1: %s: ...%s", err, f, tc.field, tc.msg)
			}
			if strings.Contains(err.Error(), "total_input_tokens") && tc.field != "total_input_tokens" && !strings.Contains(tc.msg, "total_input_tokens") {
				t.Errorf("%v blames total_input_tokens", err)
			}
		})
	}
}
