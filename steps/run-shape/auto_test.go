package runshape

import (
	"strings"
	"testing"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/engine/fingerprint"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/autostop"
	"github.com/perfdag/perfdag/steps/measure/loadgen"
)

// An auto count is part of the point: each of its fields changes the fingerprint, so editing
// the metric, the precision or a bound re-measures; a fixed count keeps the fingerprint it
// had before auto existed (the bare count).
func TestAutoSpecEntersTheFingerprint(t *testing.T) {
	sum := func(c schema.Count) string {
		t.Helper()
		cell := &schema.Cell{ID: "a", Workload: schema.Workload{Shape: "aa-1k"}, RequestsPerPoint: c}
		b, err := fingerprint.Canonical(inputs(&engine.Task{Cell: cell, Endpoint: &schema.Endpoint{URL: "sim://", Model: "m"}, Load: schema.Conc(4)}))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	base := schema.AutoCount{Metric: "ttft_p50_ms", RelCI: 0.02}
	seen := map[string]string{}
	for name, a := range map[string]schema.AutoCount{
		"base":   base,
		"metric": {Metric: "ttft_avg_ms", RelCI: 0.02},
		"rel_ci": {Metric: "ttft_p50_ms", RelCI: 0.03},
		"min":    {Metric: "ttft_p50_ms", RelCI: 0.02, Min: 500},
		"max":    {Metric: "ttft_p50_ms", RelCI: 0.02, Max: 5000},
	} {
		fp := sum(schema.Count{Auto: &a})
		if other, dup := seen[fp]; dup {
			t.Errorf("auto %s and %s share a fingerprint", name, other)
		}
		seen[fp] = name
	}
	if fp := sum(schema.Count{N: 30}); seen[fp] != "" {
		t.Errorf("a fixed count of 30 shares the fingerprint of auto %s", seen[fp])
	}
	if got := requestsInput(&schema.Cell{RequestsPerPoint: schema.Count{Multiple: 3}}, 4, nil); got != 12 {
		t.Errorf("3x at c4 enters the fingerprint as %v, want the bare count 12", got)
	}
}

// A decided point's requests depend on the SLO it decides, so the SLO is in its fingerprint:
// editing a searched cell's search.slo re-measures its decide points (a fixed count's points
// keep their fingerprint and are re-judged, as before), and decide: slo and the same rule
// written out are the same point.
func TestDecideSLOEntersTheFingerprint(t *testing.T) {
	sum := func(c schema.Count, slo string) string {
		t.Helper()
		cell := &schema.Cell{ID: "a", Workload: schema.Workload{Shape: "aa-1k"}, RequestsPerPoint: c}
		if slo != "" {
			cell.Search = &schema.Search{SLO: slo, From: 1, To: 8}
		}
		b, err := fingerprint.Canonical(inputs(&engine.Task{Cell: cell, Endpoint: &schema.Endpoint{URL: "sim://", Model: "m"}, Load: schema.Conc(4)}))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	decide := schema.Count{Auto: &schema.AutoCount{Decide: schema.DecideSLO}}
	if sum(decide, "itl_avg_ms <= 50") == sum(decide, "itl_avg_ms <= 40") {
		t.Error("decide points of two SLOs share a fingerprint")
	}
	if sum(decide, "itl_avg_ms <= 50") != sum(schema.Count{Auto: &schema.AutoCount{Decide: "itl_avg_ms <= 50"}}, "") {
		t.Error("decide: slo and the same rule written out differ")
	}
	fixed := schema.Count{Multiple: 3}
	if sum(fixed, "itl_avg_ms <= 50") != sum(fixed, "itl_avg_ms <= 40") {
		t.Error("a fixed count's point changed fingerprint with the SLO")
	}
}

// checkAuto looks only at the ends of the concurrencies a cell may measure; that is enough
// because what an interval needs and the default max both grow with concurrency. Checked here
// over every span of a grid of concurrencies, for every metric and a spread of maxes: a span
// with a short concurrency anywhere is short at one of its ends.
func TestAutoShortSomewhereIsShortAtAnEnd(t *testing.T) {
	var grid []int
	for c := 1; c <= 64; c++ {
		grid = append(grid, c)
	}
	grid = append(grid, 100, 200, 500, 999, 1000, 1001, 1249, 1250, 1251, 2000, 5000)
	for _, m := range schema.AutoMetrics {
		need := make([]int, len(grid))
		for i, c := range grid {
			need[i] = autostop.Need(m, c)
		}
		for _, max := range []int{0, 50, 200, 2000, 5120, 20000, schema.MaxRequestsPerPoint} {
			a := schema.AutoCount{Metric: m, RelCI: 0.02, Max: max}
			short := func(i int) bool { return a.MaxFor(grid[i]) < need[i] }
			for lo := range grid {
				anywhere := false
				for hi := lo; hi < len(grid); hi++ {
					anywhere = anywhere || short(hi)
					if anywhere != (short(lo) || short(hi)) {
						t.Fatalf("%s max %d: [%d, %d] is short inside but not at an end", m, max, grid[lo], grid[hi])
					}
					if lo > 0 && hi < len(grid)-1 || (lo+hi)%3 != 0 {
						continue // checkAuto on a third of the spans from the first or to the last
					}
					cell := schema.Cell{ID: "a", RequestsPerPoint: schema.Count{Auto: &a},
						Search: &schema.Search{SLO: "true", From: float64(grid[lo]), To: float64(grid[hi])}}
					if err := checkAuto(0, cell, &schema.Campaign{}); (err != nil) != anywhere {
						t.Fatalf("%s max %d: search [%d, %d]: checkAuto says %v, short somewhere %v", m, max, grid[lo], grid[hi], err, anywhere)
					}
				}
			}
		}
	}
}

// decide: baseline: validate needs the schedule's baseline and a list cell; a point measures
// until its changes are known when the campaign carries the baseline's values at its
// concurrency (baseline_ref), max without them; the values decided against are in the point's
// fingerprint, so a new baseline re-measures it.
func TestDecideBaseline(t *testing.T) {
	cell := schema.Cell{ID: "small", RequestsPerPoint: schema.Count{Auto: &schema.AutoCount{Decide: schema.DecideBaseline}}, Concurrencies: []int{4}}
	scheduled := &schema.Campaign{Schedule: &schema.Schedule{Cron: "0 3 * * *", Baseline: "ref"}}
	if err := checkAuto(0, cell, &schema.Campaign{}); err == nil || !strings.Contains(err.Error(), "names none") {
		t.Errorf("no schedule.baseline: %v", err)
	}
	searched := cell
	searched.Search = &schema.Search{SLO: "itl_avg_ms <= 9", From: 1, To: 8}
	if err := checkAuto(0, searched, scheduled); err == nil || !strings.Contains(err.Error(), "searched cell") {
		t.Errorf("searched cell: %v", err)
	}
	if err := checkAuto(0, cell, scheduled); err != nil {
		t.Errorf("scheduled list cell: %v", err)
	}
	cfg := loadgen.Config{Concurrency: 4}
	ap, err := autoLoad(&cell, &cfg, nil)
	if err != nil || ap == nil || !ap.noBaseline || ap.dec != nil || cfg.Requests != 2000 || cfg.Adaptive != nil {
		t.Errorf("no baseline_ref: %+v %v, %d requests; want max (2000), not adaptive", ap, err, cfg.Requests)
	}
	ref := &schema.BaselineRef{Name: "ref", SHA256: "ab", Cell: "small", Points: map[string]map[string]schema.BaselineRefValue{
		"4": {"ttft_p50_ms": {Value: 100, HalfWidth: 1, Tolerance: 5, Unit: "%", Direction: "higher_is_worse"}}}}
	cfg = loadgen.Config{Concurrency: 4}
	if ap, err := autoLoad(&cell, &cfg, ref); err != nil || ap.dec == nil || cfg.Adaptive == nil || !strings.Contains(ap.dec.Rule, "ttft_p50_ms <= 105") {
		t.Errorf("with baseline_ref: %+v %v", ap, err)
	}
	other := *ref
	other.Cell = "big"
	cfg = loadgen.Config{Concurrency: 4}
	if ap, _ := autoLoad(&cell, &cfg, &other); ap == nil || !ap.noBaseline {
		t.Errorf("baseline_ref of another cell: %+v, want max", ap)
	}
	fp := func(r *schema.BaselineRef) string {
		b, err := fingerprint.Canonical(inputs(&engine.Task{Cell: &cell, Campaign: &schema.Campaign{BaselineRef: r}, Endpoint: &schema.Endpoint{URL: "sim://", Model: "m"}, Load: schema.Conc(4)}))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	moved := *ref
	moved.Points = map[string]map[string]schema.BaselineRefValue{"4": {"ttft_p50_ms": {Value: 101, HalfWidth: 1, Tolerance: 5, Unit: "%", Direction: "higher_is_worse"}}}
	if fp(ref) == fp(nil) || fp(ref) == fp(&moved) {
		t.Error("the baseline's values are not in the point's fingerprint")
	}
}
