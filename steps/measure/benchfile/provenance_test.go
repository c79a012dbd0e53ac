package benchfile

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
)

// edited writes a copy of testdata file src with each old→new replacement applied (each must
// match) and returns its path; an AIPerf aggregate goes into a directory of its own, alone.
func edited(t *testing.T, src string, repl ...string) string {
	t.Helper()
	s := read(t, src)
	for i := 0; i+1 < len(repl); i += 2 {
		if !strings.Contains(s, repl[i]) {
			t.Fatalf("%s holds no %q", src, repl[i])
		}
		s = strings.Replace(s, repl[i], repl[i+1], 1)
	}
	dir := t.TempDir()
	if filepath.Base(src) == AIPerfAggregate {
		writeFile(t, filepath.Join(dir, AIPerfAggregate), s)
		return dir
	}
	f := filepath.Join(dir, filepath.Base(src))
	writeFile(t, f, s)
	return f
}

// TestImportedProvenance: an imported point names the token basis its file states — the source
// tool's counts, never a basis of perfdag's (o200k_base) — and takes its times from the file's
// own wall-clock: AIPerf's epoch-ns timestamps exactly, vLLM's date as stated (local, no zone),
// never a monotonic perf_counter read as 1970; without a wall-clock the times are unknown.
func TestImportedProvenance(t *testing.T) {
	const (
		aiperfAgg = "testdata/aiperf/" + AIPerfAggregate
		vllm      = "testdata/vllm-result-c4.json"
		sglang    = "testdata/sglang-bench_serving.jsonl"
		vllmBasis = "server usage, else tokenizer " + model
		vllmDate  = "2025-06-12T10:15:30" // the file's date 20250612-101530, zone not stated
	)
	for _, tc := range []struct {
		name, format string
		path         func(t *testing.T) string
		counted      string // import.token_basis; the point's is imported:<source> + this
		started      string
		ended        string
		clock        string // a phrase of import.clock
	}{
		{"aiperf records: epoch ns read exactly", SourceAIPerf, func(*testing.T) string { return "testdata/aiperf" },
			"tokenizer " + model, "2025-06-12T10:15:30.123456789Z", "2025-06-12T10:15:30.561389789Z", "request_start_ns"},
		{"aiperf aggregate: min/max timestamps to the microsecond", SourceAIPerf, func(t *testing.T) string { return edited(t, aiperfAgg) },
			"tokenizer " + model, "2025-06-12T10:15:30.123457Z", "2025-06-12T10:15:30.561390Z", "min_request_timestamp"},
		{"aiperf aggregate without timestamps", SourceAIPerf, func(t *testing.T) string {
			return edited(t, aiperfAgg, `"min_request_timestamp"`, `"min_request_timestamp_x"`)
		}, "tokenizer " + model, "", "", "unknown"},
		{"aiperf --use-server-token-count", SourceAIPerf, func(t *testing.T) string {
			return edited(t, aiperfAgg, `"streaming": true,`, `"streaming": true, "use_server_token_count": true,`)
		}, schema.CountedServer, "2025-06-12T10:15:30.123457Z", "2025-06-12T10:15:30.561390Z", "min_request_timestamp"},
		{"aiperf without --tokenizer: the model's own", SourceAIPerf, func(t *testing.T) string {
			return edited(t, aiperfAgg, `"tokenizer": {`, `"tokenizer_unused": {`)
		}, "tokenizer " + model, "2025-06-12T10:15:30.123457Z", "2025-06-12T10:15:30.561390Z", "min_request_timestamp"},
		{"vllm detailed: date, not perf_counter", SourceVLLM, func(*testing.T) string { return vllm },
			vllmBasis, "", vllmDate, "zone not stated"},
		{"vllm aggregate", SourceVLLM, func(t *testing.T) string { return edited(t, vllm, `"start_times"`, `"start_times_dropped"`) },
			vllmBasis, "", vllmDate, "zone not stated"},
		{"vllm --skip-tokenizer-init", SourceVLLM, func(t *testing.T) string {
			return edited(t, vllm, `"tokenizer_id": "`+model+`"`, `"tokenizer_id": null`)
		}, "server usage, else 1 token per request (no tokenizer)", "", vllmDate, "zone not stated"},
		{"vllm without date", SourceVLLM, func(t *testing.T) string { return edited(t, vllm, `"date"`, `"date_x"`) },
			vllmBasis, "", "", "no wall-clock time"},
		{"vllm date in another layout", SourceVLLM, func(t *testing.T) string { return edited(t, vllm, `"20250612-101530"`, `"2025-06-12 10:15"`) },
			vllmBasis, "", "", `"2025-06-12 10:15" is not YYYYmmdd-HHMMSS`},
		{"sglang openai-chat backend", SourceSGLang, func(*testing.T) string { return sglang },
			"server usage, else requested length", "", "", "no wall-clock time"},
		{"sglang native backend", SourceSGLang, func(t *testing.T) string {
			return edited(t, sglang, `"backend": "sglang-oai-chat"`, `"backend": "sglang"`)
		}, schema.CountedServer, "", "", "no wall-clock time"},
		{"sglang truss backend", SourceSGLang, func(t *testing.T) string {
			return edited(t, sglang, `"backend": "sglang-oai-chat"`, `"backend": "truss"`)
		}, schema.CountedRequested, "", "", "no wall-clock time"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Read(tc.format, tc.path(t), Expect{Concurrency: 4}, opts)
			if err != nil {
				t.Fatal(err)
			}
			p := r.Point
			if want := schema.ImportedBasis(tc.format, tc.counted); r.TokenBasis != tc.counted || p.TokenBasis != want {
				t.Errorf("basis: import %q, point %q; want %q, %q", r.TokenBasis, p.TokenBasis, tc.counted, want)
			}
			if p.StartedAt != tc.started || p.EndedAt != tc.ended {
				t.Errorf("started_at %q ended_at %q, want %q %q", p.StartedAt, p.EndedAt, tc.started, tc.ended)
			}
			if !strings.Contains(r.Clock, tc.clock) {
				t.Errorf("clock %q lacks %q", r.Clock, tc.clock)
			}
		})
	}
}

// TestEpochNs: an epoch-ns timestamp is read exactly when an integer, rounded when a float
// (AIPerf's aggregate writes 1.7497233301234568e+18), 0 when null; anything else is a type
// error that names the field, as a float64 field's was.
func TestEpochNs(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		bad  bool
	}{
		{"1749723330123456789", 1749723330123456789, false},
		{"1.7497233301234568e+18", 1749723330123456768, false},
		{"null", 0, false},
		{`"soon"`, 0, true},
		{"1e400", 0, true},
		{"[1]", 0, true},
	} {
		var v struct {
			Ns epochNs `json:"request_start_ns"`
		}
		err := json.Unmarshal([]byte(`{"request_start_ns":`+tc.in+`}`), &v)
		var te *json.UnmarshalTypeError
		switch {
		case tc.bad && (!errors.As(err, &te) || te.Field != "request_start_ns"):
			t.Errorf("%s: error %v, want a type error naming request_start_ns", tc.in, err)
		case !tc.bad && (err != nil || int64(v.Ns) != tc.want):
			t.Errorf("%s: %d, %v; want %d", tc.in, v.Ns, err, tc.want)
		}
	}
}

// TestImportedProvenanceDetails: a point recomputed from a file's per-request lists names the
// source's basis and keeps the file's own times as an aggregate one does: vLLM --save-detailed
// ends at its date (its start_times a monotonic clock, never a 1970 instant); SGLang
// --output-details records no wall-clock at all, so both times are unknown.
func TestImportedProvenanceDetails(t *testing.T) {
	for _, tc := range []struct {
		format, file string
		conc         int
		counted      string
		ended, clock string
	}{
		{SourceVLLM, "testdata/vllm-result-c4.json", 4, "server usage, else tokenizer " + model, "2025-06-12T10:15:30", "zone not stated"},
		{SourceSGLang, "testdata/sglang-details.jsonl", 2, "server usage, else requested length", "", "no wall-clock time"},
	} {
		t.Run(tc.format, func(t *testing.T) {
			r, err := Read(tc.format, tc.file, Expect{Concurrency: tc.conc}, opts)
			if err != nil {
				t.Fatal(err)
			}
			p := r.Point
			if r.StatsFrom != StatsPerRequest || len(r.Records) == 0 {
				t.Fatalf("stats from %s with %d records, want per-request", r.StatsFrom, len(r.Records))
			}
			if want := schema.ImportedBasis(tc.format, tc.counted); p.TokenBasis != want {
				t.Errorf("point basis %q, want %q", p.TokenBasis, want)
			}
			if p.StartedAt != "" || p.EndedAt != tc.ended {
				t.Errorf("started_at %q ended_at %q, want unknown and %q", p.StartedAt, p.EndedAt, tc.ended)
			}
			if !strings.Contains(r.Clock, tc.clock) {
				t.Errorf("clock %q lacks %q", r.Clock, tc.clock)
			}
		})
	}
}
