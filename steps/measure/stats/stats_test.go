package stats

import (
	"encoding/json"
	"math"
	"path/filepath"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/testkit"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestPercentile(t *testing.T) {
	cases := []struct {
		values []float64
		q      float64
		want   float64
	}{
		{[]float64{7}, 99, 7},
		{[]float64{1, 2, 3, 4}, 50, 2.5},   // rank 0.5 × 3 = 1.5 → 2 + 0.5 × (3 − 2)
		{[]float64{1, 2, 3, 4}, 25, 1.75},  // rank 0.75 → 1 + 0.75 × (2 − 1)
		{[]float64{1, 2, 3, 4}, 99, 3.97},  // rank 2.97 → 3 + 0.97 × (4 − 3)
		{[]float64{1, 2, 3, 4}, 1, 1.03},   // rank 0.03 → 1 + 0.03
		{[]float64{10, 20}, 90, 19},        // rank 0.9 → 10 + 0.9 × 10
		{[]float64{0, 100, 200}, 100, 200}, // rank 2 → the maximum
		{[]float64{0, 100, 200}, 0, 0},     // rank 0 → the minimum
	}
	for _, c := range cases {
		if got := Percentile(c.values, c.q); !near(got, c.want) {
			t.Errorf("Percentile(%v, %v) = %v, want %v", c.values, c.q, got, c.want)
		}
	}
	if !math.IsNaN(Percentile(nil, 50)) {
		t.Error("Percentile of nothing must be NaN")
	}
}

func TestSummarize(t *testing.T) {
	// 2 4 4 4 5 5 7 9: mean 40/8 = 5; squared deviations 9 1 1 1 0 0 4 16 = 32; population
	// variance 32/8 = 4, std 2 (a sample std would be √(32/7) ≈ 2.14).
	// p50: rank 3.5 → 4 + 0.5 × (5 − 4) = 4.5; p90: rank 6.3 → 7 + 0.3 × (9 − 7) = 7.6;
	// p10: rank 0.7 → 2 + 0.7 × (4 − 2) = 3.4.
	s := Summarize([]float64{9, 4, 5, 2, 4, 7, 4, 5}, UnitMs)
	want := schema.Stat{Unit: "ms", Count: 8, Avg: 5, Min: 2, Max: 9, P50: 4.5, P90: 7.6, P10: 3.4, Std: 2}
	if s.Unit != want.Unit || s.Count != want.Count || !near(s.Avg, want.Avg) || s.Min != want.Min || s.Max != want.Max ||
		!near(s.P50, want.P50) || !near(s.P90, want.P90) || !near(s.P10, want.P10) || !near(s.Std, want.Std) {
		t.Errorf("Summarize = %+v, want %+v", *s, want)
	}
	if Summarize(nil, UnitMs) != nil {
		t.Error("Summarize of nothing must be nil (null in JSON)")
	}
}

func TestAdjusted(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	cases := []struct {
		name   string
		values []float64
		failed int
		want   schema.AdjStat
	}{
		// n = 4: p50 rank 1.5 → half to even 2 → 30; p90 rank 2.7 → 3 → the failure: null.
		{"one failure in four", []float64{10, 20, 30}, 1, schema.AdjStat{P50: f(30)}},
		// n = 10: p50 rank 4.5 → 4 → 5; p90 rank 8.1 → 8 → 9; p95 rank 8.55 → 9 → null.
		{"one failure in ten", []float64{9, 8, 7, 6, 5, 4, 3, 2, 1}, 1, schema.AdjStat{P50: f(5), P90: f(9)}},
		// No failure: nearest ranks of 1..5: p50 rank 2 → 3; p90 rank 3.6 → 4 → 5; p99 3.96 → 5.
		{"no failure", []float64{1, 2, 3, 4, 5}, 0, schema.AdjStat{P50: f(3), P90: f(5), P95: f(5), P99: f(5)}},
		{"all failed", nil, 3, schema.AdjStat{}},
	}
	eq := func(a, b *float64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
	for _, c := range cases {
		got := Adjusted(c.values, c.failed)
		if !eq(got.P50, c.want.P50) || !eq(got.P90, c.want.P90) || !eq(got.P95, c.want.P95) || !eq(got.P99, c.want.P99) {
			b, _ := json.Marshal(got)
			w, _ := json.Marshal(c.want)
			t.Errorf("%s: got %s, want %s", c.name, b, w)
		}
	}
	if Adjusted(nil, 0) != nil {
		t.Error("nothing to rank must give nil")
	}
}

// base is an arbitrary Unix time; the point records below are written relative to it in ms.
const base = int64(1_700_000_000_000_000_000)

func at(msOffset float64) int64 { return base + int64(msOffset*1e6) }

func pointRecords() []schema.RequestRecord {
	ten, one := 10, 1
	return []schema.RequestRecord{
		// r0: answer only, 4 tokens in 4 chunks, TTFT 100, latency 400, ITL (400 − 100)/3 = 100.
		{Index: 0, Phase: "profiling", StartNs: at(0), FirstTokenNs: at(100), FirstOutputNs: at(100), LastContentNs: at(400), EndNs: at(401),
			ChunkNs: []int64{at(100), at(200), at(300), at(400)}, InputTokens: 10, OutputTokens: 4, UsageComplete: &ten, UsageMismatch: true},
		// r1: starts at 50; reasoning first (TTFT 100), answer at 250 (TTFO 200), last at 450 (latency 400);
		// OSL 2 + 1 = 3 → ITL (400 − 100)/2 = 150.
		{Index: 1, Phase: "profiling", StartNs: at(50), FirstTokenNs: at(150), FirstOutputNs: at(250), LastContentNs: at(450), EndNs: at(452),
			ChunkNs: []int64{at(150), at(250), at(450)}, InputTokens: 20, OutputTokens: 2, ReasoningTok: 1, ReasoningField: "reasoning_content"},
		// r2: failed with HTTP 500.
		{Index: 2, Phase: "profiling", StartNs: at(10), EndNs: at(20), Status: 500, ErrorClass: schema.ErrorHTTP},
		// r3: warm-up: excluded from everything.
		{Index: 3, Phase: "warmup", StartNs: at(-500), FirstTokenNs: at(-400), FirstOutputNs: at(-400), LastContentNs: at(-300), EndNs: at(-300), InputTokens: 999, OutputTokens: 999},
		// r4: never answered: one reasoning token at 300 (TTFT 200, latency 200), no ITL.
		{Index: 4, Phase: "profiling", StartNs: at(100), FirstTokenNs: at(300), LastContentNs: at(300), EndNs: at(301),
			ChunkNs: []int64{at(300)}, InputTokens: 30, ReasoningTok: 1, ReasoningField: "reasoning_content", UsageComplete: &one},
	}
}

func TestComputePoint(t *testing.T) {
	p := Compute(pointRecords(), Options{Cell: "aa-1k", Concurrency: 2, Shape: "aa-1k", Mode: "synthetic", GPUs: 2})
	checks := []struct {
		name      string
		got, want float64
	}{
		{"num_prompts (profiling only)", float64(p.NumPrompts), 4},
		{"request_count", float64(p.RequestCount), 3},
		{"error_count", float64(p.ErrorCount), 1},
		{"ttft avg: (100 + 100 + 200)/3", p.TTFT.Avg, 400.0 / 3},
		{"ttft p50", p.TTFT.P50, 100},
		{"ttfo avg over answered: (100 + 200)/2", p.TTFO.Avg, 150},
		{"ttfo count", float64(p.TTFO.Count), 2},
		{"ttfo_coverage: 2 answered / 3 valid", p.TTFOCoverage, 2.0 / 3},
		{"latency avg: (400 + 400 + 200)/3", p.RequestLatency.Avg, 1000.0 / 3},
		{"itl avg: (100 + 150)/2", p.ITL.Avg, 125},
		{"itl count: OSL ≥ 2 only", float64(p.ITL.Count), 2},
		{"tps/user avg: (1000/100 + 1000/150)/2", p.TPSUser.Avg, (10 + 1000.0/150) / 2},
		{"inter-chunk avg: gaps 100 100 100 100 200", p.ICL.Avg, 120},
		{"inter-chunk count", float64(p.ICL.Count), 5},
		{"mean isl: (10 + 20 + 30)/3", p.MeanISL, 20},
		{"mean osl: (4 + 3 + 1)/3", p.MeanOSL, 8.0 / 3},
		{"window: last content 450 − first start 0", p.WindowS, 0.45},
		{"request throughput: 3 / 0.45 s", p.RequestThroughput, 3 / 0.45},
		{"output token throughput: 8 / 0.45 s", p.OutputTokenThroughput, 8 / 0.45},
		{"total token throughput: (60 + 8) / 0.45 s", p.TotalTokenThroughput, 68 / 0.45},
		{"output tok/s/GPU: over 2 GPUs", p.OutputTokPerSPerGPU, 8 / 0.45 / 2},
		{"total tok/s/GPU", p.TotalTokPerSPerGPU, 68 / 0.45 / 2},
		{"AA output speed: (3 + 2) / (0.3 + 0.3) s", p.AAOutputSpeed, 5 / 0.6},
		{"usage mismatches", float64(p.UsageMismatches), 1},
		{"reasoning tokens avg: (0 + 1 + 1)/3", p.ReasoningTok.Avg, 2.0 / 3},
		{"adj ttft p50: rank 1.5 → 2 → 200", *p.AdjTTFT.P50, 200},
	}
	for _, c := range checks {
		if !near(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if p.AdjTTFT.P90 != nil {
		t.Errorf("adj ttft p90 = %v, want null (rank 2.7 → 3 lands on the failure)", *p.AdjTTFT.P90)
	}
	if p.Status != "partial" || p.ErrorsByClass[schema.ErrorHTTP] != 1 || len(p.ErrorsByClass) != 1 {
		t.Errorf("status %q, errors %v; want partial with one http_status", p.Status, p.ErrorsByClass)
	}
	if !p.Reasoning || p.ReasoningField != "reasoning_content" || p.ReasoningParserSuspect || p.SteadyWindowUndercount {
		t.Errorf("reasoning %v field %q suspect %v undercount %v", p.Reasoning, p.ReasoningField, p.ReasoningParserSuspect, p.SteadyWindowUndercount)
	}
	if p.StartedAt != "2023-11-14T22:13:20Z" || p.EndedAt != "2023-11-14T22:13:20.452Z" {
		t.Errorf("started %s ended %s", p.StartedAt, p.EndedAt)
	}
	golden(t, "point.golden.json", p)
}

func TestComputeFlags(t *testing.T) {
	valid := func(start, first, output int64) schema.RequestRecord {
		return schema.RequestRecord{Phase: "profiling", StartNs: at(float64(start)), FirstTokenNs: at(float64(first)),
			FirstOutputNs: at(float64(output)), LastContentNs: at(float64(first + 10)), OutputTokens: 3}
	}
	cases := []struct {
		name       string
		records    []schema.RequestRecord
		opts       Options
		wantStatus string
		wantFlag   func(schema.Point) bool
	}{
		{"all valid is ok", []schema.RequestRecord{valid(0, 5, 5), valid(1, 6, 6)}, Options{Concurrency: 1}, "ok",
			func(p schema.Point) bool {
				return !p.SteadyWindowUndercount && p.ReasoningField == "none" && !p.Reasoning
			}},
		{"no valid request is failed", []schema.RequestRecord{{Phase: "profiling", ErrorClass: schema.ErrorTimeout}}, Options{}, "failed",
			func(p schema.Point) bool {
				return p.TTFT == nil && p.WindowS == 0 && p.ErrorsByClass[schema.ErrorTimeout] == 1
			}},
		{"fewer prompts than 2 × concurrency", []schema.RequestRecord{valid(0, 5, 5), valid(0, 5, 5), valid(0, 5, 5)}, Options{Concurrency: 2}, "ok",
			func(p schema.Point) bool { return p.SteadyWindowUndercount }},
		{"reasoning model whose TTFT equals TTFO everywhere", []schema.RequestRecord{valid(0, 5, 5), valid(0, 7, 7)}, Options{ReasoningModel: true}, "ok",
			func(p schema.Point) bool { return p.ReasoningParserSuspect }},
		{"reasoning model that streams reasoning", []schema.RequestRecord{valid(0, 5, 9)}, Options{ReasoningModel: true}, "ok",
			func(p schema.Point) bool { return !p.ReasoningParserSuspect }},
		{"success without a token counts as empty", []schema.RequestRecord{valid(0, 5, 5), {Phase: "profiling", StartNs: at(0), EndNs: at(1)}}, Options{}, "partial",
			func(p schema.Point) bool { return p.ErrorsByClass[schema.ErrorEmpty] == 1 && p.RequestCount == 1 }},
		{"timestamps out of order are invalid", []schema.RequestRecord{valid(0, 5, 5), valid(9, 5, 5)}, Options{}, "partial",
			func(p schema.Point) bool { return p.ErrorsByClass[ErrorInvalid] == 1 }},
		{"no profiling record", []schema.RequestRecord{{Phase: "burn-in", StartNs: at(0), FirstTokenNs: at(1), LastContentNs: at(2)}}, Options{}, "failed",
			func(p schema.Point) bool { return p.NumPrompts == 0 && p.AdjTTFT == nil }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := Compute(c.records, c.opts)
			if p.Status != c.wantStatus || !c.wantFlag(p) {
				b, _ := json.MarshalIndent(p, "", " ")
				t.Errorf("status %q (want %q) or flags wrong:\n%s", p.Status, c.wantStatus, b)
			}
		})
	}
}

// golden compares v's JSON with testdata/name (rewritten with -update).
func golden(t *testing.T, name string, v any) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	testkit.Golden(t, filepath.Join("testdata", name), append(got, '\n'))
}
