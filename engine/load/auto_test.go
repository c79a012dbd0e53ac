package load

import (
	"strings"
	"testing"
)

// A requests_per_point auto spec is checked at its keys: a bad metric, a rel_ci outside (0, 1)
// and min above max are each one problem at the key's line:col, with a hint.
func TestAutoRequestsValidate(t *testing.T) {
	src := func(auto string) string {
		return "version: 1\ncampaign: c\nendpoints:\n  main: {url: \"sim://\", model: m}\ncells:\n  - id: a\n    workload: {shape: aa-1k}\n    concurrencies: [4]\n    requests_per_point:\n      auto:\n" + auto
	}
	tests := []struct {
		name, auto      string
		line, col       int
		msg, hint       string
		valid           bool
		wantMin, wantMx int
	}{
		{name: "valid", auto: "        metric: ttft_p50_ms\n        rel_ci: 0.02\n", valid: true, wantMin: 30, wantMx: 2000},
		{name: "valid bounds", auto: "        {metric: itl_avg_ms, rel_ci: 0.05, min: 40, max: 400}\n", valid: true, wantMin: 40, wantMx: 400},
		{name: "bad metric", auto: "        metric: ttft_p51_ms\n        rel_ci: 0.02\n", line: 11, col: 9,
			msg: `metric "ttft_p51_ms" has no per-request interval`, hint: `did you mean "ttft_p50_ms"?`},
		{name: "not per request", auto: "        metric: error_count\n        rel_ci: 0.02\n", line: 11, col: 9,
			msg: `metric "error_count"`, hint: "one of ttft_avg_ms"},
		{name: "rel_ci zero", auto: "        metric: ttft_p50_ms\n        rel_ci: 0\n", line: 12, col: 9,
			msg: "rel_ci = 0: want a fraction between 0 and 1", hint: "±2 %"},
		{name: "rel_ci one", auto: "        metric: ttft_p50_ms\n        rel_ci: 1\n", line: 12, col: 9,
			msg: "rel_ci = 1: want a fraction between 0 and 1", hint: "±2 %"},
		{name: "rel_ci missing", auto: "        metric: ttft_p50_ms\n", line: 10, col: 7,
			msg: "rel_ci = 0", hint: "rel_ci: 0.02"},
		{name: "min above max", auto: "        metric: ttft_p50_ms\n        rel_ci: 0.02\n        min: 500\n        max: 100\n", line: 13, col: 9,
			msg: "min = 500 is above max = 100", hint: "at most max"},
		{name: "max too big", auto: "        metric: ttft_p50_ms\n        rel_ci: 0.02\n        max: 100001\n", line: 13, col: 9,
			msg: "at most 100000 requests per point, got 100001"}, // read as the value is decoded: the limit is the hint
		{name: "decide", auto: "        decide: slo\n", valid: true, wantMin: 16, wantMx: 2000},
		{name: "decide a rule", auto: "        {decide: \"ttft_p50_ms <= 250\", min: 40}\n", valid: true, wantMin: 40, wantMx: 2000},
		{name: "decide and metric", auto: "        decide: slo\n        metric: ttft_p50_ms\n", line: 12, col: 9,
			msg: "decide and metric are alternatives", hint: "drop metric and rel_ci"},
		{name: "decide and rel_ci", auto: "        decide: slo\n        rel_ci: 0.02\n", line: 12, col: 9,
			msg: "decide and rel_ci are alternatives", hint: "or drop decide"},
		{name: "decide empty", auto: "        decide: \"\"\n", line: 11, col: 9,
			msg: `requests_per_point.auto.decide: want "slo"`},
		{name: "unknown key", auto: "        metric: ttft_p50_ms\n        rel_ci: 0.02\n        mx: 10\n", line: 13, col: 9,
			msg: "requests_per_point.auto.mx: unknown key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, l := loadSrc(t, "auto.yaml", src(tt.auto), nil)
			if tt.valid {
				if l != nil {
					t.Fatalf("want valid, got %v", l)
				}
				a := c.Spec.Cells[0].RequestsPerPoint.Auto
				if a == nil || a.MinFor(4) != tt.wantMin || a.MaxFor(4) != tt.wantMx {
					t.Fatalf("auto = %+v, want min %d max %d at c4", a, tt.wantMin, tt.wantMx)
				}
				return
			}
			if len(l) != 1 {
				t.Fatalf("want one problem, got %v", l)
			}
			d := l[0]
			if d.Line != tt.line || d.Col != tt.col || !strings.Contains(d.Message, tt.msg) || !strings.Contains(d.Hint, tt.hint) {
				t.Errorf("got %d:%d %q (hint %q), want %d:%d %q (hint %q)", d.Line, d.Col, d.Message, d.Hint, tt.line, tt.col, tt.msg, tt.hint)
			}
		})
	}
}
