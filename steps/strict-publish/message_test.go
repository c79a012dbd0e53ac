package strictpublish

import (
	"testing"

	"github.com/perfdag/perfdag/schema"
)

// TestMessageWords: the default gates' refusals count in agreeing words, never "(s)".
func TestMessageWords(t *testing.T) {
	gates := map[string]schema.Gate{}
	for _, g := range DefaultGates() {
		gates[g.ID] = g
	}
	one := &Evidence{Facts: Facts{GateFailures: 1, UndercountCells: 1},
		FlaggedCells: map[string][]string{schema.FlagSteadyWindowUndercount: {"a"}},
		Failing:      []schema.GateVerdict{{Gate: "fast", Node: "run-shape[a/c1]", Rule: "ttft_p50_ms < 100"}}}
	two := &Evidence{Facts: Facts{GateFailures: 2, UndercountCells: 2},
		FlaggedCells: map[string][]string{schema.FlagSteadyWindowUndercount: {"a", "b"}}}
	for _, tc := range []struct {
		gate string
		ev   *Evidence
		want string
	}{
		{GateQuality, one, "1 fail-severity quality gate verdict stands: fast on run-shape[a/c1] (ttft_p50_ms < 100); fix"},
		{GateQuality, two, "2 fail-severity quality gate verdicts stand: ; fix"},
		{GateSteadyWind, one, "1 cell ran num_prompts < 2 × concurrency (steady_window_undercount: a)"},
		{GateSteadyWind, two, "2 cells ran num_prompts < 2 × concurrency (steady_window_undercount: a, b)"},
	} {
		if got := message(gates[tc.gate], tc.ev); len(got) < len(tc.want) || got[:len(tc.want)] != tc.want {
			t.Errorf("%s: %q, want it to start %q", tc.gate, got, tc.want)
		}
	}
}
