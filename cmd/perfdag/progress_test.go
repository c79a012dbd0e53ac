package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/perfdag/perfdag/engine/events"
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

// TestProgressLineETA: the live line shows the elapsed time always, and an ETA only once two
// nodes executed and at least half of the nodes left are of a kind seen running; each left
// node counts at its kind's mean duration (reused nodes take no time and are no basis).
func TestProgressLineETA(t *testing.T) {
	kinds := map[string]string{"r1": "run-shape", "a": "run-shape", "b": "run-shape", "s0": "scrape-spec", "s1": "scrape-spec",
		"c": "run-shape", "d": "run-shape", "e": "run-shape", "agg": "aggregate", "render": "render"}
	p := newProgress(io.Discard, kinds)
	start := time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC)
	p.start = start
	at := start.Add(42 * time.Second)
	if got := p.line(at); got != "[0/10 0:42]" {
		t.Errorf("before any node: %q", got)
	}
	p.observe(events.Event{Type: events.NodeReused, Node: "r1"})
	p.observe(events.Event{Type: events.NodeEnd, Node: "s0", Status: run.OutRan, Seconds: 0.01})
	p.observe(events.Event{Type: events.NodeEnd, Node: "s1", Status: run.OutRan, Seconds: 0.01})
	p.observe(events.Event{Type: events.NodeStart, Node: "a"})
	p.observe(events.Event{Type: events.Progress, Node: "a", Message: "3/8 done, 0 errors"})
	if got := p.line(at); got != "[3/10 0:42] a: 3/8 done, 0 errors" {
		t.Errorf("only fast scrapes ran: %q (no ETA: no node left is of a kind seen)", got)
	}
	p.observe(events.Event{Type: events.NodeEnd, Node: "a", Status: run.OutGateFailed, Seconds: 20})
	p.observe(events.Event{Type: events.NodeEnd, Node: "b", Status: run.OutRan, Seconds: 40})
	// left: c, d, e (run-shape, 30 s each) and aggregate, render (unseen: the mean of all four that ran, 15 s)
	if got := p.line(at); got != "[5/10 0:42, ETA 2:00]" {
		t.Errorf("two run-shapes ran: %q", got)
	}
	for _, n := range []string{"c", "d", "e", "agg", "render"} {
		p.observe(events.Event{Type: events.NodeSkipped, Node: n})
	}
	if got := p.line(start.Add(2*time.Hour + 3*time.Second)); got != "[10/10 2:00:03]" {
		t.Errorf("all done: %q (no ETA when nothing remains)", got)
	}
}

// TestProgressLinesAlign: off a terminal, a node's start line and its end line put the node
// id in the same column (the log reads as two columns).
func TestProgressLinesAlign(t *testing.T) {
	var b bytes.Buffer
	p := newProgress(&b, map[string]string{"prewarm[a]": "prewarm"})
	p.observe(events.Event{Type: events.NodeStart, Node: "prewarm[a]", Reason: "never ran"})
	p.observe(events.Event{Type: events.NodeEnd, Node: "prewarm[a]", Status: run.OutRan, Message: "prewarmed aa-1k"})
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("want a start and an end line, got %q", b.String())
	}
	if i, j := strings.Index(lines[0], "prewarm[a]")-len("[0/1]"), strings.Index(lines[1], "prewarm[a]")-len("[1/1]"); i != j || i < 0 {
		t.Errorf("node id in column %d on the start line, %d on the end line:\n%s", i, j, b.String())
	}
}

// TestFitCutsRunes: the live line is cut to the terminal's width in characters, never inside
// a multi-byte one.
func TestFitCutsRunes(t *testing.T) {
	for _, tc := range []struct {
		in    string
		width int
		want  string
	}{
		{"short", 10, "short"},
		{"2 × concurrency", 3, "2 ×"},
		{"ab…cd", 3, "ab…"},
	} {
		if got := fit(tc.in, tc.width); got != tc.want || !utf8.ValidString(got) {
			t.Errorf("fit(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
		}
	}
}
