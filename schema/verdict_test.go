package schema

import "testing"

func TestVerdictWording(t *testing.T) {
	for _, tc := range []struct {
		v             GateVerdict
		outcome, line string
	}{
		{GateVerdict{Gate: "fast", Node: "run-shape[a/c1]", Severity: SeverityFail, Rule: "ttft_p50_ms < 100", Value: "ttft_p50_ms = 187.3"},
			"failed", "gate fast (fail) failed on run-shape[a/c1]: ttft_p50_ms < 100 failed: ttft_p50_ms = 187.3"},
		{GateVerdict{Gate: "steady", Node: "n", Severity: SeverityWarn, Rule: "num_prompts >= 2", Message: "short window", Value: "num_prompts = 1"},
			"warned", "gate steady (warn) warned on n: short window — num_prompts >= 2 warned: num_prompts = 1"},
		{GateVerdict{Gate: "x", Node: "n", Severity: SeverityFail, Rule: "x > 1", Error: "budget"},
			"failed", "gate x (fail) failed on n: x > 1 could not be evaluated (budget)"},
		{GateVerdict{Gate: "p50", Node: "import[sg/c4]", Severity: SeverityWarn, Rule: "ttft_p50_ms < 100", Unstated: []string{"ttft_p50_ms"}},
			"warned", "gate p50 (warn) warned on import[sg/c4]: ttft_p50_ms < 100 not evaluated: ttft_p50_ms unstated"},
		{GateVerdict{Gate: "p50", Node: "n", Severity: SeverityFail, Rule: "a < b", Unstated: []string{"a", "b"}},
			"failed", "gate p50 (fail) failed on n: a < b not evaluated: a, b unstated"},
		{GateVerdict{Gate: "ok", Node: "n", Severity: SeverityWarn, Rule: "true", Passed: true},
			"passed", "gate ok (warn) passed on n: true passed"},
	} {
		if got := tc.v.Outcome(); got != tc.outcome {
			t.Errorf("%s: Outcome() = %q, want %q", tc.v.Gate, got, tc.outcome)
		}
		if got := tc.v.Line(); got != tc.line {
			t.Errorf("%s: Line()\n got %q\nwant %q", tc.v.Gate, got, tc.line)
		}
	}
}
