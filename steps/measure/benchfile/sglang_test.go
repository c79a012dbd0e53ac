package benchfile

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
)

// The fixture testdata/sglang-details.jsonl is two bench_serving runs: c1 without
// --output-details, c2 with them — six requests, two failed:
//
//	i  input  output  ttft s  itls s                     error
//	0  100    4       0.050   0.010 0.012 0.014
//	1  110    5       0.080   0.020 0.020 0.020 0.020
//	2  120    0       0       -                          Internal Server Error
//	3  90     3       0.040   0.030 0.010
//	4  100    0       0.060   0.010                      Traceback ... ServerDisconnectedError
//	5  100    2       0.070   0.016
//
// duration 0.5 s, completed 4, total_input_tokens 400, total_output_tokens 14. Its stated
// aggregates are SGLang's (e2e to the stream's end, 2 ms past the last content): the point
// must not copy them. By hand, over the 4 successful requests (numpy-linear percentiles,
// rank q/100 × (n−1); population std):
//
//	TTFT ms       40 50 70 80          avg 60, p50 60, p90 70+0.7×10 = 77, p99 79.7, std √250
//	latency ms    ttft+Σitls: 86 160 80 86 → 80 86 86 160: avg 103, p50 86, p90 86+0.7×74 = 137.8
//	ITL ms        (latency−ttft)/(output−1): 12 20 20 16 → avg 17, p50 18, p90 20
//	ICL ms        the 10 gaps 10 10 12 14 16 20 20 20 20 30: avg 17.2, p50 18, p90 21, p95 25.5
//	ISL           100 110 90 100: avg 100;  OSL 4 5 3 2: avg 3.5, p90 4+0.7 = 4.7
//	window        the file's duration, 0.5 s (SGLang records no send times):
//	              8 req/s, 14/0.5 = 28 output tok/s, (400+14)/0.5 = 828 total tok/s
func TestSGLangDetails(t *testing.T) {
	plain := read(t, "testdata/sglang-details.jsonl")
	lines := strings.SplitAfter(plain, "\n")
	nested := lines[0] + nestDetails(t, lines[1])
	for _, tc := range []struct{ name, text string }{{"top-level lists", plain}, {"lists under details", nested}} {
		t.Run(tc.name, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "run.jsonl")
			writeFile(t, f, tc.text)
			r, err := ReadSGLang(f, Expect{Concurrency: 2, ISL: 100, OSL: 4}, opts)
			if err != nil {
				t.Fatal(err)
			}
			p := r.Point
			if r.StatsFrom != StatsPerRequest || len(r.Records) != 6 || p.Concurrency != 2 {
				t.Fatalf("stats from %s, %d records, concurrency %d", r.StatsFrom, len(r.Records), p.Concurrency)
			}
			if p.RequestCount != 4 || p.ErrorCount != 2 || p.NumPrompts != 6 || p.ErrorsByClass[ErrorImported] != 2 || p.Status != "partial" {
				t.Errorf("requests %d, errors %d (%v), prompts %d, status %s; want 4 ok, 2 imported_error, 6, partial",
					p.RequestCount, p.ErrorCount, p.ErrorsByClass, p.NumPrompts, p.Status)
			}
			if e := r.Records[4]; e.ErrorClass != ErrorImported || !strings.Contains(e.Error, "ServerDisconnectedError") {
				t.Errorf("record 4 (failed after its first token): class %q, error %q", e.ErrorClass, e.Error)
			}
			for _, c := range []struct {
				what string
				st   *schema.Stat
				stat string
				want float64
			}{
				{"ttft", p.TTFT, "avg", 60}, {"ttft", p.TTFT, "p50", 60}, {"ttft", p.TTFT, "p90", 77}, {"ttft", p.TTFT, "p99", 79.7},
				{"ttft", p.TTFT, "min", 40}, {"ttft", p.TTFT, "max", 80}, {"ttft", p.TTFT, "std", 15.811388300841896},
				{"latency", p.RequestLatency, "avg", 103}, {"latency", p.RequestLatency, "p50", 86}, {"latency", p.RequestLatency, "p90", 137.8},
				{"itl", p.ITL, "avg", 17}, {"itl", p.ITL, "p50", 18}, {"itl", p.ITL, "p90", 20},
				{"icl", p.ICL, "avg", 17.2}, {"icl", p.ICL, "p50", 18}, {"icl", p.ICL, "p90", 21}, {"icl", p.ICL, "p95", 25.5},
				{"isl", p.ISL, "avg", 100}, {"osl", p.OSL, "avg", 3.5}, {"osl", p.OSL, "p90", 4.7},
			} {
				v, ok := c.st.Value(c.stat)
				if !ok {
					t.Errorf("%s %s unstated", c.what, c.stat)
					continue
				}
				near(t, c.what+" "+c.stat, v, c.want)
			}
			if p.TTFT.Count != 4 || p.ICL.Count != 10 {
				t.Errorf("ttft over %d requests, icl over %d gaps; want 4 and 10", p.TTFT.Count, p.ICL.Count)
			}
			near(t, "window", p.WindowS, 0.5)
			near(t, "request throughput", p.RequestThroughput, 8)
			near(t, "output throughput", p.OutputTokenThroughput, 28)
			near(t, "total throughput", p.TotalTokenThroughput, 828)
			near(t, "mean osl", p.MeanOSL, 3.5)
			if p.StartedAt != "" || p.EndedAt != "" {
				t.Errorf("started %q ended %q: the file states no wall-clock time", p.StartedAt, p.EndedAt)
			}
		})
	}
}

// A run without --output-details keeps its aggregates as stated and says which statistics
// it cannot know.
func TestSGLangAggregateUnknown(t *testing.T) {
	r, err := ReadSGLang("testdata/sglang-details.jsonl", Expect{Concurrency: 1}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if r.StatsFrom != StatsAggregate || r.Records != nil || r.Point.ErrorCount != 0 {
		t.Fatalf("stats from %s, %d records", r.StatsFrom, len(r.Records))
	}
	near(t, "ttft avg", r.Point.TTFT.Avg, 45)
	unknown := r.Unknown()
	for _, want := range []string{"ttft_ms p90", "itl_ms p90", "request_latency_ms p90", "isl", "osl"} {
		if !slices.Contains(unknown, want) {
			t.Errorf("unknown %v lacks %q", unknown, want)
		}
	}
	if slices.Contains(unknown, "ttft_ms p99") || slices.Contains(unknown, "ttft_ms avg") {
		t.Errorf("unknown %v names a statistic the file states", unknown)
	}
	d, err := ReadSGLang("testdata/sglang-details.jsonl", Expect{Concurrency: 2}, opts)
	if err != nil || d.Unknown() != nil {
		t.Errorf("a per-request point knows every statistic: unknown %v (%v)", d.Unknown(), err)
	}
}

// nestDetails moves a bench_serving line's per-request lists under "details", as
// sglang.benchmark's save_results writes them.
func nestDetails(t *testing.T, line string) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(pythonJSON([]byte(line)), &m); err != nil {
		t.Fatal(err)
	}
	det := map[string]json.RawMessage{}
	for _, k := range []string{"input_lens", "output_lens", "ttfts", "itls", "generated_texts", "errors"} {
		det[k] = m[k]
		delete(m, k)
	}
	b, err := json.Marshal(det)
	if err != nil {
		t.Fatal(err)
	}
	m["details"] = b
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(out) + "\n"
}
