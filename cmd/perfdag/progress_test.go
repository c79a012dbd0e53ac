package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/engine/gate"
	"github.com/perfdag/perfdag/engine/run"
)

// TestSummaryInterrupted: the summary of an interrupted run names the interrupted node and
// counts the nodes never started, naming the first few, instead of one row per node.
func TestSummaryInterrupted(t *testing.T) {
	s := &run.Summary{Dir: "out", Interrupted: true, Seconds: 8.6,
		Counts: map[string]int{run.OutInterrupted: 1, run.OutPending: 26, run.OutGateFailed: 1}}
	s.Nodes = append(s.Nodes, run.NodeResult{Node: "prewarm[a]", Outcome: run.OutInterrupted, Reason: "interrupted by a signal"},
		run.NodeResult{Node: "run-shape[a/c1]", Outcome: run.OutGateFailed, Verdicts: []gate.Verdict{
			{Gate: "fast", Node: "run-shape[a/c1]", Severity: gate.Fail, Rule: "ttft_p50_ms < 100", Value: "ttft_p50_ms = 187.3"}}})
	for i := range 26 {
		s.Nodes = append(s.Nodes, run.NodeResult{Node: fmt.Sprintf("n%02d", i), Outcome: run.OutPending})
	}
	var b bytes.Buffer
	printSummary(&b, s)
	out := b.String()
	for _, want := range []string{
		"out in 8.6s: 1 gate_failed, 1 interrupted, 26 pending\n",
		"prewarm[a]       interrupted  interrupted by a signal\n",
		"run-shape[a/c1]  gate_failed  fail gate fast failed\n",
		"26 nodes not started: n00, n01, n02, n03, n04, … and 21 more\n",
		"gate fast (fail) failed on run-shape[a/c1]: ttft_p50_ms < 100 failed: ttft_p50_ms = 187.3\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "n05") {
		t.Errorf("summary lists more than the first five pending nodes:\n%s", out)
	}
}

func TestFirstFew(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{nil, ""},
		{[]string{"a", "b"}, "a b"},
		{[]string{"a", "b", "c", "d", "e"}, "a b c d e"},
		{[]string{"a", "b", "c", "d", "e", "f"}, "a b c d e … and 1 more"},
	} {
		if got := strings.Join(firstFew(tc.in, 5), " "); got != tc.want {
			t.Errorf("firstFew(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
