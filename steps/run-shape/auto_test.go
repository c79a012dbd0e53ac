package runshape

import (
	"testing"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/engine/fingerprint"
	"github.com/perfdag/perfdag/schema"
)

// An auto count is part of the point: each of its fields changes the fingerprint, so editing
// the metric, the precision or a bound re-measures; a fixed count keeps the fingerprint it
// had before auto existed (the bare count).
func TestAutoSpecEntersTheFingerprint(t *testing.T) {
	sum := func(c schema.Count) string {
		t.Helper()
		cell := &schema.Cell{ID: "a", Workload: schema.Workload{Shape: "aa-1k"}, RequestsPerPoint: c}
		b, err := fingerprint.Canonical(inputs(&engine.Task{Cell: cell, Endpoint: &schema.Endpoint{URL: "sim://", Model: "m"}, Concurrency: 4}))
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
	if got := requestsInput(schema.Count{Multiple: 3}, 4); got != 12 {
		t.Errorf("3x at c4 enters the fingerprint as %v, want the bare count 12", got)
	}
}
