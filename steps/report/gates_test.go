package report

import (
	"strings"
	"testing"

	"github.com/perfdag/perfdag/engine/gate"
)

func TestGateLines(t *testing.T) {
	if got := gateLines(nil); len(got) != 1 || !strings.Contains(got[0], "No quality gates") {
		t.Fatalf("no verdicts: %v", got)
	}
	vs := []gate.Verdict{
		{Gate: "steady", Node: "run-shape[a/c1]", Severity: gate.Warn, Passed: false, Rule: "num_prompts >= 2 * concurrency"},
		{Gate: "steady", Node: "run-shape[a/c8]", Severity: gate.Warn, Passed: true},
		{Gate: "steady", Node: "run-shape[b/c1]", Severity: gate.Warn, Passed: false, Rule: "num_prompts >= 2 * concurrency"},
		{Gate: "answered", Node: "run-shape[b/c1]", Severity: gate.Fail, Passed: false, Message: "reasoning model never answered"},
	}
	got := gateLines(vs)
	want := []string{
		"1 of 4 gate checks passed.",
		"WARNING steady (warn): num_prompts >= 2 * concurrency is false — on run-shape[a/c1], run-shape[b/c1]",
		"REFUSED answered (fail): reasoning model never answered — on run-shape[b/c1]",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
