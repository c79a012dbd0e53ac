package load

import (
	"fmt"
	"strings"
	"testing"
)

// Ranges are tested at and just past their bounds.
func TestRangesAtTheBound(t *testing.T) {
	cell := func(fields string) string {
		return "version: 1\ncampaign: c\nendpoints:\n  main: {url: \"sim://\", model: m}\ncells:\n  - {id: a, workload: {shape: aa-1k}, " + fields + "}\n"
	}
	tests := []struct {
		fields, err string // err "" means valid
	}{
		{"concurrencies: [100000], requests_per_point: 100000", ""},
		{"concurrencies: [100001], requests_per_point: 10", "cells[0].concurrencies[0] must be between 1 and 100000, got 100001"},
		{"concurrencies: [1], requests_per_point: 100001", "requests_per_point 100001: at most 100000 requests per point"},
		{"concurrencies: [100], requests_per_point: 1000x", ""},
		{"concurrencies: [1], requests_per_point: 1001x", `requests_per_point "1001x": the multiple is at most 1000x`},
		{"concurrencies: [33333]", ""}, // the default 3x: 99999 requests
		{"concurrencies: [33334]", "cell a sends 100002 requests at concurrency 33334 (the default 3x); a point sends at most 100000"},
		{"concurrencies: [101], requests_per_point: 1000x", "cell a sends 101000 requests at concurrency 101 (1000x)"},
		{"concurrencies: [1], warmup_requests: 100000", ""},
		{"concurrencies: [1], warmup_requests: 100001", "cells[0].warmup_requests must be between 0 and 100000, got 100001"},
		{"concurrencies: [1], gpus: 0", ""},
		{"concurrencies: [1], gpus: -1", "cells[0].gpus must be between 0 and 100000, got -1"},
		{"concurrencies: [1], tensor_parallel: 1024", ""},
		{"concurrencies: [1], tensor_parallel: 1025", "cells[0].tensor_parallel must be between 0 and 1024, got 1025"},
		{"concurrencies: [1], extra: {ratio: 0.5, deep: [1, {x: -1e308}]}", ""},
	}
	for _, tt := range tests {
		_, l := loadSrc(t, "r.yaml", cell(tt.fields), nil)
		switch {
		case tt.err == "" && l != nil:
			t.Errorf("%s: %v", tt.fields, l)
		case tt.err != "" && (len(l) != 1 || !strings.Contains(l[0].Message, tt.err) || l[0].Line != 6):
			t.Errorf("%s: %v, want one problem on line 6 with %q", tt.fields, l, tt.err)
		}
	}
	// settle_s and rates are floats: the bound itself is in range, a hair past it is not
	for _, v := range []struct {
		value string
		ok    bool
	}{{"86400", true}, {"86400.001", false}, {"0", true}, {"-0.001", false}} {
		_, l := loadSrc(t, "s.yaml", cell("concurrencies: [1]")+fmt.Sprintf("settle: {settle_s: %s}\n", v.value), nil)
		if (l == nil) != v.ok {
			t.Errorf("settle_s %s: %v", v.value, l)
		}
	}
}
