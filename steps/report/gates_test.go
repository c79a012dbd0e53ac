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
		{Gate: "steady", Node: "run-shape[a/c1]", Severity: gate.Warn, Passed: false, Rule: "num_prompts >= 2 * concurrency", Value: "concurrency = 1, num_prompts = 1"},
		{Gate: "steady", Node: "run-shape[a/c8]", Severity: gate.Warn, Passed: true},
		{Gate: "steady", Node: "run-shape[b/c1]", Severity: gate.Warn, Passed: false, Rule: "num_prompts >= 2 * concurrency"},
		{Gate: "answered", Node: "run-shape[b/c1]", Severity: gate.Fail, Passed: false, Rule: "answered > 0", Message: "reasoning model never answered"},
		{Gate: "parse", Node: "run-shape[b/c1]", Severity: gate.Fail, Passed: false, Rule: "x > 0", Error: "unknown name x"},
	}
	got := gateLines(vs)
	want := []string{
		"1 of 5 gate checks passed.",
		"WARNED steady (warn): num_prompts >= 2 * concurrency warned — on run-shape[a/c1] (concurrency = 1, num_prompts = 1), run-shape[b/c1]",
		"FAILED answered (fail): reasoning model never answered — answered > 0 failed — on run-shape[b/c1]",
		"FAILED parse (fail): x > 0 could not be evaluated (unknown name x) — on run-shape[b/c1]",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
