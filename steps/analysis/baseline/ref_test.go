package baseline

import (
	"strings"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/perfdag/perfdag/schema"
)

// A point decided against this baseline gives its rows their verdicts: a clause decided
// beyond the tolerance is RED even where the fixed-sample rule says NOTE (within noise), one
// decided inside is GREEN even where the estimate alone lies beyond the tolerance; a clause
// decided against other values (another tolerance) and an unknown clause leave the row alone.
func TestDiffTakesDecidedVerdicts(t *testing.T) {
	iv := func(v, hw float64) schema.Interval {
		return schema.Interval{Lo: v - hw, Hi: v + hw, Method: "batch-means", N: 10}
	}
	base := doc(map[string]schema.PerfBenchPoint{"4": {TTFTP50Ms: f(100), ITLP50Ms: f(20), TPSPerUser: f(50),
		Intervals: schema.Intervals{"ttft_p50_ms": iv(100, 1), "itl_p50_ms": iv(20, 0.1), "tps_per_user": iv(50, 0.5)}}})
	dec := &schema.Decision{Verdict: schema.VerdictMisses, Reference: "baseline ref sha256:ab", Clauses: []schema.DecisionClause{
		{Baseline: "ttft_p50_ms", Metric: "ttft_p50_ms", Op: "<=", Threshold: 105, Verdict: schema.ClauseFails, Clause: "ttft_p50_ms <= 105 (baseline 100 +5 %)"},
		{Baseline: "itl_p50_ms", Metric: "itl_p50_ms", Op: "<=", Threshold: 20.6, Verdict: schema.ClauseHolds, Clause: "itl_p50_ms <= 20.6 (baseline 20 +3 %)"},
		{Baseline: "tps_per_user", Metric: "tok_s_per_user", Op: ">=", Threshold: 47, Verdict: schema.ClauseFails, Clause: "another tolerance"},
	}}
	cur := doc(map[string]schema.PerfBenchPoint{"4": {TTFTP50Ms: f(106), ITLP50Ms: f(20.7), TPSPerUser: f(48), Decision: dec,
		Intervals: schema.Intervals{"ttft_p50_ms": iv(106, 6), "itl_p50_ms": iv(20.7, 0.1), "tps_per_user": iv(48, 5)}}})
	d, err := Diff(base, cur, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"ttft_p50_ms": Red, "itl_p50_ms": Green, "tps_per_user": WithinNoise}
	for _, r := range d.Rows {
		v, ok := want[r.Metric]
		if !ok || r.Concurrency != 4 {
			continue
		}
		if r.Verdict != v {
			t.Errorf("%s: %s (%s), want %s", r.Metric, r.Verdict, r.Note, v)
		}
		if decided := strings.HasPrefix(r.Note, "decided"); decided != (r.Metric != "tps_per_user") {
			t.Errorf("%s: note %q", r.Metric, r.Note)
		}
	}
	if d.Verdict != Red {
		t.Errorf("verdict %s, want RED (ttft_p50_ms decided beyond)", d.Verdict)
	}
}

// Ref holds what the diff judges with an interval on the baseline's side (and the error count),
// at the campaign's tolerances, for the baseline's cell; WithRef appends it to the file's text
// as a block the loader reads back.
func TestRefOfASnapshot(t *testing.T) {
	e := &Entry{Meta: schema.BaselineEntry{Measurement: "ref", Cell: "small", SHA256: "ab"}, Doc: doc(map[string]schema.PerfBenchPoint{
		"4": {TTFTP50Ms: f(100), TTFTP95Ms: f(180), ITLP50Ms: f(20), Errors: 1,
			Intervals: schema.Intervals{"ttft_p50_ms": {Lo: 99, Hi: 101}, "itl_p50_ms": {Lo: 20, Hi: 20}}}})}
	spec := &schema.Campaign{Campaign: "c", Cells: []schema.Cell{{ID: "small"}}}
	ref, err := Ref(e, spec, Tolerances{"ttft_p50_ms": 8})
	if err != nil {
		t.Fatal(err)
	}
	p := ref.Points["4"]
	if ref.Cell != "small" || len(p) != 3 || p["ttft_p50_ms"] != (schema.BaselineRefValue{Value: 100, HalfWidth: 1, Tolerance: 8, Unit: "%", Direction: HigherIsWorse}) ||
		p["errors"].Value != 1 || p["errors"].Unit != UnitCount || p["itl_p50_ms"].Tolerance != 3 {
		t.Errorf("ref %+v: want ttft_p50_ms (8 %%), itl_p50_ms and errors, not ttft_p95_ms (no interval)", ref)
	}
	src, err := WithRef([]byte("version: 1"), ref)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Version int                 `yaml:"version"`
		Ref     *schema.BaselineRef `yaml:"baseline_ref"`
	}
	if err := yaml.Unmarshal(src, &back); err != nil || back.Version != 1 || back.Ref == nil || back.Ref.Points["4"]["ttft_p50_ms"].HalfWidth != 1 {
		t.Errorf("WithRef wrote\n%s\nread back %+v (%v)", src, back, err)
	}
	if _, err := Ref(e, &schema.Campaign{Cells: []schema.Cell{{ID: "a"}, {ID: "b"}}}, nil); err == nil {
		t.Error("a campaign of two cells, neither the baseline's: no error")
	}
}
