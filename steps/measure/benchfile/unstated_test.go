package benchfile

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/stats"
)

// A statistic the file does not state is not zero: the point says so (Stated false) and its
// point.json holds null. SGLang states mean/median/std/p99 of TTFT (no p90, min, max); a vLLM
// aggregate-only result the percentiles of --metric-percentiles (50, 90, 99 here: no p95);
// AIPerf drops min/max/std when null (here removed from time_to_first_token). A statistic
// recomputed from per-request records is always stated.
func TestUnstatedStatisticsAreNull(t *testing.T) {
	dir := t.TempDir()
	aggOnly := filepath.Join(dir, "aiperf")
	agg := read(t, "testdata/aiperf/"+AIPerfAggregate)
	i := strings.Index(agg, `"time_to_first_token"`)
	j := i + strings.Index(agg[i:], "}")
	ttft := agg[i:j]
	for _, k := range []string{"min", "max", "std"} {
		at := strings.Index(ttft, `"`+k+`"`)
		if at < 0 {
			t.Fatalf("sample time_to_first_token has no %s", k)
		}
		end := at + strings.IndexAny(ttft[at:], ",\n")
		ttft = ttft[:at] + `"x_` + k + `"` + ttft[at+len(k)+2:end] + ttft[end:]
	}
	if err := os.MkdirAll(aggOnly, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(aggOnly, AIPerfAggregate), agg[:i]+ttft+agg[j:])
	vllmAgg := filepath.Join(dir, "vllm.json")
	writeFile(t, vllmAgg, withoutDetails(read(t, "testdata/vllm-result-c4.json")))

	cases := []struct {
		name            string
		read            func() (*Result, error)
		stated, missing []string
	}{
		{"sglang", func() (*Result, error) { return ReadSGLang("testdata/sglang-bench_serving.jsonl", Expect{}, opts) },
			[]string{"avg", "p50", "std", "p99"}, []string{"min", "max", "p1", "p90", "p95"}},
		{"vllm aggregate", func() (*Result, error) { return ReadVLLM(vllmAgg, Expect{}, opts) },
			[]string{"avg", "p50", "p90", "p99", "std"}, []string{"min", "max", "p95"}},
		{"aiperf aggregate", func() (*Result, error) { return ReadAIPerf(aggOnly, Expect{}, opts) },
			[]string{"avg", "p1", "p50", "p90", "p99"}, []string{"min", "max", "std"}},
		{"aiperf per-request", func() (*Result, error) { return ReadAIPerf("testdata/aiperf", Expect{}, opts) },
			[]string{"avg", "min", "max", "p1", "p90", "p95", "p99", "std"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := tc.read()
			if err != nil {
				t.Fatal(err)
			}
			ttft := r.Point.TTFT
			for _, s := range tc.stated {
				if v, ok := ttft.Value(s); !ok || v <= 0 {
					t.Errorf("TTFT %s = %v (stated %v), want a stated positive value", s, v, ok)
				}
			}
			for _, s := range tc.missing {
				if ttft.Stated(s) {
					t.Errorf("TTFT %s stated, the file does not state it (unstated: %v)", s, ttft.Unstated())
				}
			}
			if len(tc.missing) == 0 && len(ttft.Unstated()) > 0 {
				t.Errorf("recomputed TTFT leaves %v unstated", ttft.Unstated())
			}
			b, err := json.Marshal(r.Point)
			if err != nil {
				t.Fatal(err)
			}
			var raw struct {
				TTFT map[string]any `json:"ttft_ms"`
			}
			if err := json.Unmarshal(b, &raw); err != nil {
				t.Fatal(err)
			}
			for _, s := range tc.missing {
				if v, ok := raw.TTFT[s]; !ok || v != nil {
					t.Errorf("point.json ttft_ms.%s = %v, want null", s, v)
				}
			}
			for _, s := range tc.stated {
				if v, ok := raw.TTFT[s].(float64); !ok || v <= 0 {
					t.Errorf("point.json ttft_ms.%s = %v, want the stated number", s, raw.TTFT[s])
				}
			}
			var back schema.Point
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			for _, s := range tc.missing {
				if back.TTFT.Stated(s) {
					t.Errorf("point.json read back states %s", s)
				}
			}
		})
	}
}

// A file of several runs (SGLang appends a line per run; vLLM --append-result an object per
// run) is read at the run of the expected concurrency: the variant-ab sglang lines c1, c8, c32
// give 16/30, 16/4.6 and 64/5.2 req/s. Without an expected concurrency the last run is read;
// with one no run has, the concurrency check names the last run's line.
func TestSeveralRuns(t *testing.T) {
	var all string
	for _, c := range []string{"1", "8", "32"} {
		all += read(t, "../../../testdata/imports/variant-ab/sglang/bench_serving_c"+c+".jsonl")
	}
	f := filepath.Join(t.TempDir(), "sweep.jsonl")
	writeFile(t, f, all)
	runs, err := Runs(SourceSGLang, f)
	if err != nil || len(runs) != 3 || runs[0] != schema.Conc(1) || runs[1] != schema.Conc(8) || runs[2] != schema.Conc(32) {
		t.Fatalf("Runs = %v, %v", runs, err)
	}
	for c, rps := range map[int]float64{1: 16 / 30.0, 8: 16 / 4.6, 32: 64 / 5.2, 0: 64 / 5.2} {
		r, err := ReadSGLang(f, Expect{Concurrency: c}, opts)
		if err != nil {
			t.Fatalf("c%d: %v", c, err)
		}
		near(t, "request throughput", r.Point.RequestThroughput, rps)
	}
	_, err = ReadSGLang(f, Expect{Concurrency: 4}, opts)
	var be *Error
	if !errors.As(err, &be) || be.Line != 3 || be.Field != "max_concurrency" {
		t.Errorf("c4 from a c1/c8/c32 file: %v, want line 3 max_concurrency", err)
	}
	if runs, err := Runs(SourceAIPerf, "testdata/aiperf"); err != nil || runs != nil {
		t.Errorf("AIPerf runs %v %v, want none listed", runs, err)
	}
}

// A vLLM or SGLang run without a fixed concurrency (max_concurrency null: a request-rate run)
// is refused with that reason, even when no concurrency is expected.
func TestNoFixedConcurrency(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, file string
		read       func(string, Expect, stats.Options) (*Result, error)
	}{
		{"vllm", "testdata/vllm-result-c4.json", ReadVLLM},
		{"sglang", "testdata/sglang-bench_serving.jsonl", ReadSGLang},
	} {
		f := filepath.Join(dir, tc.name)
		writeFile(t, f, strings.Replace(read(t, tc.file), `"max_concurrency": 4`, `"max_concurrency": null`, 1))
		_, err := tc.read(f, Expect{}, opts)
		var be *Error
		if !errors.As(err, &be) || be.Field != "max_concurrency" || !strings.Contains(be.Msg, "fixed-concurrency run") {
			t.Errorf("%s with max_concurrency null: %v, want a max_concurrency error saying a fixed-concurrency run is needed", tc.name, err)
		}
	}
}
