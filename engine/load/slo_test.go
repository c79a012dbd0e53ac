package load

import (
	"strings"
	"testing"
)

// A cell's slo is checked at its keys: a target of 0 or below, a target past the range, a
// misspelt key and an slo that sets nothing are each one problem at line:col with a hint;
// defaults do not carry an slo (it is a cell's key, as its workload is).
func TestSLOValidate(t *testing.T) {
	src := func(slo string) string {
		return "version: 1\ncampaign: c\nendpoints:\n  main: {url: \"sim://\", model: m}\ncells:\n  - id: a\n    workload: {shape: aa-1k}\n    concurrencies: [4]\n" + slo
	}
	tests := []struct {
		name, slo string
		line, col int
		msg, hint string
		valid     bool
	}{
		{name: "valid", slo: "    slo: {ttft_ms: 2000, tpot_ms: 50, latency_ms: 30000}\n", valid: true},
		{name: "valid subset", slo: "    slo:\n      tpot_ms: 0.5\n", valid: true},
		{name: "zero", slo: "    slo:\n      ttft_ms: 2000\n      tpot_ms: 0\n", line: 11, col: 16,
			msg: "cell a: slo tpot_ms = 0: a target is a positive number of milliseconds", hint: "slo: {ttft_ms: 2000"},
		{name: "negative", slo: "    slo:\n      latency_ms: -5\n", line: 10, col: 19,
			msg: "latency_ms must be between 0 and 86400000", hint: "at most this many ms"},
		{name: "too big", slo: "    slo:\n      ttft_ms: 100000000000\n", line: 10, col: 16,
			msg: "ttft_ms must be between 0 and 86400000"},
		{name: "empty", slo: "    slo: {}\n", line: 9, col: 5,
			msg: "cell a: slo sets no target: give at least one of ttft_ms, tpot_ms, latency_ms", hint: "slo: {ttft_ms: 2000"},
		{name: "misspelt", slo: "    slo: {ttft: 2000}\n", line: 9, col: 11,
			msg: `unknown key "ttft" in cells[0].slo`, hint: `did you mean "ttft_ms"?`},
		{name: "not a number", slo: "    slo: {ttft_ms: fast}\n", line: 9, col: 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, l := loadSrc(t, "slo.yaml", src(tt.slo), nil)
			if tt.valid {
				if l != nil {
					t.Fatalf("want valid, got %v", l)
				}
				if s := c.Spec.Cells[0].SLO; s == nil || len(s.Targets()) == 0 {
					t.Fatalf("slo = %+v, want its targets", s)
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
	// defaults hold identity fields only: an slo there is an unknown key, not silently dropped
	_, l := loadSrc(t, "slo.yaml", "version: 1\ncampaign: c\nendpoints:\n  main: {url: \"sim://\", model: m}\ndefaults:\n  slo: {ttft_ms: 100}\ncells:\n  - id: a\n    workload: {shape: aa-1k}\n    concurrencies: [4]\n", nil)
	if len(l) != 1 || l[0].Line != 6 || !strings.Contains(l[0].Message, `unknown key "slo" in defaults`) {
		t.Errorf("defaults.slo: got %v, want one unknown-key problem at line 6", l)
	}
}
