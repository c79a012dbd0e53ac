package benchfile

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/perfdag/perfdag/engine/bounded"
	"github.com/perfdag/perfdag/steps/measure/stats"
)

const model = "meta-llama/Llama-3.1-8B-Instruct"

var opts = stats.Options{Cell: "c", Shape: "chat", Mode: "stream", GPUs: 2}

func near(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-6*math.Max(1, math.Abs(want)) {
		t.Errorf("%s = %.9g, want %.9g", what, got, want)
	}
}

// TTFTs of the 8 synthetic requests, ms, sorted: 32.521 35.382 37.732 38.698 56.334
// 64.171 66.96 70.531. p90: rank 0.9×7 = 6.3 → 66.96 + 0.3×(70.531−66.96) = 68.0313;
// p50: rank 3.5 → (38.698+56.334)/2 = 47.516. Window: last end − first start = 0.437933 s.
func TestAIPerfRecomputed(t *testing.T) {
	r, err := ReadAIPerf("testdata/aiperf", Expect{Model: model, Concurrency: 4, ISL: 550, OSL: 16}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if r.StatsFrom != StatsPerRequest || len(r.Records) != 8 || r.Source != SourceAIPerf {
		t.Fatalf("stats from %s, %d records, source %s", r.StatsFrom, len(r.Records), r.Source)
	}
	p := r.Point
	near(t, "ttft p90", p.TTFT.P90, 68.0313)
	near(t, "ttft p50", p.TTFT.P50, 47.516)
	near(t, "window", p.WindowS, 0.437933)
	near(t, "request throughput", p.RequestThroughput, 8/0.437933)
	near(t, "output throughput", p.OutputTokenThroughput, 128/0.437933)
	near(t, "per gpu", p.OutputTokPerSPerGPU, 128/0.437933/2)
	near(t, "mean isl", p.MeanISL, 550)
	// the first record's chunks: first token at 56.334 ms, then 15 gaps summing to 156.215 ms
	c := r.Records[0].ChunkNs
	if len(c) != 16 || c[15]-r.Records[0].StartNs != 212549000 {
		t.Errorf("chunk times %d, last at %d ns", len(c), c[15]-r.Records[0].StartNs)
	}
	if r.TokenBasis != "tokenizer "+model || p.Concurrency != 4 || p.Status != "ok" {
		t.Errorf("basis %q concurrency %d status %s", r.TokenBasis, p.Concurrency, p.Status)
	}
}

func TestAIPerfAggregateOnly(t *testing.T) {
	dir := t.TempDir()
	copyFile(t, "testdata/aiperf/"+AIPerfAggregate, filepath.Join(dir, AIPerfAggregate))
	r, err := ReadAIPerf(dir, Expect{}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if r.StatsFrom != StatsAggregate || r.Records != nil {
		t.Fatalf("stats from %s", r.StatsFrom)
	}
	// benchmark_duration 0.437933 sec → 437.933 ms → window 0.437933 s; 8 requests
	near(t, "window", r.Point.WindowS, 0.437933)
	near(t, "request throughput", r.Point.RequestThroughput, 18.267634546837073)
	near(t, "ttft p90", r.Point.TTFT.P90, 68.0313)
}

func TestVLLMDetailed(t *testing.T) {
	r, err := ReadVLLM("testdata/vllm-result-c4.json", Expect{Model: model, Concurrency: 4, ISL: 550}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if r.StatsFrom != StatsPerRequest || len(r.Records) != 8 {
		t.Fatalf("stats from %s, %d records", r.StatsFrom, len(r.Records))
	}
	// ttfts[0] = 0.056334 s → 56.334 ms
	near(t, "ttft[0] ms", float64(r.Records[0].FirstTokenNs-r.Records[0].StartNs)/1e6, 56.334)
	near(t, "ttft p90", r.Point.TTFT.P90, 68.0313)
	// recomputed window: start_times[7]+latencies[7] − start_times[0] = 0.437933 s; the file's
	// own duration (0.440033 s) includes the client's overhead around the requests
	near(t, "request throughput", r.Point.RequestThroughput, 8/0.437933)
	near(t, "e2e p99", r.Point.RequestLatency.P99, 236.16049)
}

func TestVLLMAggregateOnly(t *testing.T) {
	data, err := os.ReadFile("testdata/vllm-result-c4.json")
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "r.json")
	writeFile(t, f, withoutDetails(string(data)))
	r, err := ReadVLLM(f, Expect{}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if r.StatsFrom != StatsAggregate {
		t.Fatalf("stats from %s", r.StatsFrom)
	}
	near(t, "request throughput", r.Point.RequestThroughput, 8/0.440033)
	near(t, "ttft p90", r.Point.TTFT.P90, 68.0313)
	near(t, "tpot avg", r.Point.ITL.Avg, 10.905116666666666)
}

func TestSGLang(t *testing.T) {
	r, err := ReadSGLang("testdata/sglang-bench_serving.jsonl", Expect{Concurrency: 4, ISL: 550, OSL: 16}, opts)
	if err != nil {
		t.Fatal(err)
	}
	p := r.Point
	if r.StatsFrom != StatsAggregate || r.Source != SourceSGLang || p.Concurrency != 4 {
		t.Fatalf("%+v", r)
	}
	// 8 completed over duration 0.440033 s; 128 output tokens
	near(t, "request throughput", p.RequestThroughput, 8/0.440033)
	near(t, "output throughput", p.OutputTokenThroughput, 128/0.440033)
	near(t, "ttft p99", p.TTFT.P99, 70.28103)
	near(t, "e2e median", p.RequestLatency.P50, 209.813)
	near(t, "itl p95", p.ICL.P95, 12.33445)
}

func TestBadFiles(t *testing.T) {
	aiperfJSON := read(t, "testdata/aiperf/"+AIPerfAggregate)
	aiperfJSONL := read(t, "testdata/aiperf/"+AIPerfRecords)
	vllm := read(t, "testdata/vllm-result-c4.json")
	sglang := read(t, "testdata/sglang-bench_serving.jsonl")
	lines := strings.SplitAfter(aiperfJSONL, "\n")
	for _, tc := range []struct {
		name, format, json, jsonl string
		line                      int
		field                     string
	}{
		{"aiperf missing field", "aiperf", strings.Replace(aiperfJSON, `"benchmark_duration"`, `"benchmark_duration_x"`, 1), aiperfJSONL, 1, "benchmark_duration"},
		{"aiperf wrong unit", "aiperf", strings.Replace(aiperfJSON, "\"unit\": \"ms\",\n    \"avg\": 50.29", "\"unit\": \"tokens\",\n    \"avg\": 50.29", 1), aiperfJSONL, 27, "time_to_first_token.unit"},
		{"aiperf truncated line", "aiperf", aiperfJSON, lines[0] + lines[1] + lines[2][:200] + "\n" + strings.Join(lines[3:], ""), 3, "(line)"},
		{"aiperf record missing ttft", "aiperf", aiperfJSON, lines[0] + strings.Replace(lines[1], `"time_to_first_token"`, `"ttft"`, 1) + strings.Join(lines[2:], ""), 2, "metrics.time_to_first_token"},
		{"aiperf record wrong unit", "aiperf", aiperfJSON, strings.Replace(aiperfJSONL, `"request_latency":{"value":212.849,"unit":"ms"}`, `"request_latency":{"value":212.849,"unit":"tokens"}`, 1), 1, "metrics.request_latency.unit"},
		{"aiperf dir holding a vllm file", "aiperf", vllm, "", 1, "backend"},
		{"aiperf jsonl holding sglang", "aiperf", aiperfJSON, sglang, 1, "metadata"},
		{"aiperf other model", "aiperf", strings.Replace(aiperfJSON, `"meta-llama/Llama-3.1-8B-Instruct"
      ]`, `"Qwen/Qwen3-8B"
      ]`, 1), aiperfJSONL, 184, "input_config.endpoint.model_names"},
		{"vllm missing field", "vllm", strings.Replace(vllm, `"completed"`, `"done"`, 1), "", 1, "completed"},
		{"vllm wrong unit", "vllm", strings.Replace(vllm, `"p99_ttft_ms"`, `"p99_ttft_s"`, 1), "", 1, "p99_ttft_s"},
		{"vllm ttfts in ms", "vllm", strings.Replace(vllm, `"ttfts": [0.056334`, `"ttfts": [56.334`, 1), "", 1, "ttfts[0]"},
		{"vllm other concurrency", "vllm", strings.Replace(vllm, `"max_concurrency": 4`, `"max_concurrency": 8`, 1), "", 1, "max_concurrency"},
		{"vllm given sglang", "vllm", sglang, "", 1, "model_id"},
		{"vllm given aiperf jsonl", "vllm", aiperfJSONL, "", 1, "metadata"},
		{"sglang truncated line", "sglang", sglang + sglang[:120] + "\n", "", 2, "(line)"},
		{"sglang missing field", "sglang", strings.Replace(sglang, `"duration"`, `"dur"`, 1), "", 1, "duration"},
		{"sglang given vllm", "sglang", vllm, "", 1, "model_id"},
		{"sglang other isl", "sglang", strings.Replace(sglang, `"random_input_len": 550`, `"random_input_len": 2048`, 1), "", 1, "random_input_len"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var err error
			var file string
			switch tc.format {
			case "aiperf":
				file = filepath.Join(dir, AIPerfAggregate)
				writeFile(t, file, tc.json)
				if tc.jsonl != "" {
					writeFile(t, filepath.Join(dir, AIPerfRecords), tc.jsonl)
				}
				_, err = ReadAIPerf(dir, Expect{Model: model, Concurrency: 4, ISL: 550, OSL: 16}, opts)
			case "vllm":
				file = filepath.Join(dir, "r.json")
				writeFile(t, file, tc.json)
				_, err = ReadVLLM(file, Expect{Model: model, Concurrency: 4, ISL: 550}, opts)
			case "sglang":
				file = filepath.Join(dir, "r.jsonl")
				writeFile(t, file, tc.json)
				_, err = ReadSGLang(file, Expect{Concurrency: 4, ISL: 550, OSL: 16}, opts)
			}
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("error %v, want a positioned *Error", err)
			}
			if filepath.Dir(pe.File) != dir || pe.Line != tc.line || pe.Field != tc.field {
				t.Errorf("got %s:%d field %q, want line %d field %q (%v)", pe.File, pe.Line, pe.Field, tc.line, tc.field, err)
			}
			if !strings.Contains(err.Error(), pe.File) || !strings.HasPrefix(tc.field, "(") && !strings.Contains(err.Error(), tc.field) {
				t.Errorf("message %q does not name file and field", err)
			}
			if strings.Contains(err.Error(), ": (") {
				t.Errorf("message %q shows a placeholder field such as (line)", err)
			}
		})
	}
}

func TestPythonJSON(t *testing.T) {
	got := string(pythonJSON([]byte(`{"a": Infinity, "b": "Infinity NaN", "c": -Infinity, "d": NaN}`)))
	want := `{"a": "Infinity", "b": "Infinity NaN", "c": "-Infinity", "d": "NaN"}`
	if got != want {
		t.Errorf("got %s", got)
	}
}

func read(t testing.TB, f string) string {
	t.Helper()
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeFile(t *testing.T, f, s string) {
	t.Helper()
	if err := os.WriteFile(f, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, from, to string) { writeFile(t, to, read(t, from)) }

// withoutDetails is a vLLM result as `bench serve` writes it without --save-detailed: the
// per-request lists renamed out of the way (latencies stay: vLLM keeps them).
func withoutDetails(s string) string {
	for _, k := range []string{"input_lens", "output_lens", "ttfts", "itls", "start_times", "generated_texts", "errors"} {
		s = strings.Replace(s, `"`+k+`"`, `"dropped_`+k+`"`, 1)
	}
	return s
}

// TestImportedFilesAreBounded: every file an import reads is a regular file of at most
// MaxFileBytes — a FIFO is refused at once instead of blocking the import, a file one byte
// past the limit is refused before it is read (a sparse file: nothing is written), and an
// AIPerf records file that cannot be read is an error, never an aggregate-only import.
func TestImportedFilesAreBounded(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "r.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	if _, err := ReadVLLM(fifo, Expect{}, opts); !errors.Is(err, bounded.ErrNotRegular) {
		t.Errorf("vLLM result that is a FIFO: %v, want not_regular_file", err)
	}
	if _, _, err := Detect(fifo); !errors.Is(err, bounded.ErrNotRegular) {
		t.Errorf("detecting a FIFO: %v, want not_regular_file", err)
	}
	// one byte past the limit is refused before a byte is read (the boundary itself, at the
	// limit read and past it refused, is engine/bounded's table test at 100 bytes: reading
	// 256 MiB here cost 4–44 s of CI)
	big := filepath.Join(dir, "big.jsonl")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxFileBytes + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := ReadSGLang(big, Expect{}, opts); !errors.Is(err, bounded.ErrTooLarge) {
		t.Errorf("SGLang file of %d bytes: %v, want too_large", MaxFileBytes+1, err)
	}
	aip := t.TempDir()
	copyFile(t, "testdata/aiperf/"+AIPerfAggregate, filepath.Join(aip, AIPerfAggregate))
	if err := os.Mkdir(filepath.Join(aip, AIPerfRecords), 0o755); err != nil {
		t.Fatal(err)
	}
	if r, err := ReadAIPerf(aip, Expect{}, opts); !errors.Is(err, bounded.ErrNotRegular) {
		t.Errorf("AIPerf records that are a directory: %v (result %v), want not_regular_file", err, r != nil)
	}
}

func TestErrorWording(t *testing.T) {
	for _, tc := range []struct {
		e    Error
		want string
	}{
		{Error{File: "d", Field: "(directory)", Msg: "holds no x"}, "d: holds no x"},
		{Error{File: "f", Line: 3, Field: "(line)", Msg: "bad JSON"}, "f:3: bad JSON"},
		{Error{File: "f", Line: 3, Field: "ttft", Msg: "missing"}, "f:3: ttft: missing"},
		{Error{File: "f", Field: "model", Msg: "differs"}, "f: model: differs"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.e, got, tc.want)
		}
	}
}
