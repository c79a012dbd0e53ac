package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/perfdag/perfdag/engine/plural"

	"golang.org/x/term"

	"github.com/perfdag/perfdag/engine/events"
	"github.com/perfdag/perfdag/engine/gate"
	"github.com/perfdag/perfdag/engine/run"
)

// progress shows a run live: on a terminal one updating line (done/total, what is running,
// the running step's own progress); elsewhere one line per finished or failed node.
type progress struct {
	mu       sync.Mutex
	w        io.Writer
	tty      bool
	total    int
	finished int
	running  map[string]string
	last     int
}

func newProgress(w io.Writer, total int) *progress {
	return &progress{w: w, tty: isTerminal(w), total: total, running: map[string]string{}}
}

func (p *progress) observe(e events.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch e.Type {
	case events.NodeStart:
		p.running[e.Node] = ""
		if !p.tty {
			fmt.Fprintf(p.w, "[%d/%d] start  %s (%s)\n", p.finished, p.total, e.Node, e.Reason)
		}
	case events.Progress:
		p.running[e.Node] = e.Message
	case events.NodeEnd, events.NodeReused, events.NodeSkipped:
		delete(p.running, e.Node)
		p.finished++
		if !p.tty && e.Type != events.NodeReused {
			status := e.Status
			if status == "" {
				status = "skipped"
			}
			msg := e.Message
			if e.Reason != "" && status != run.OutRan {
				msg = e.Reason
			}
			fmt.Fprintf(p.w, "[%d/%d] %-7s %s %s\n", p.finished, p.total, status, e.Node, msg)
		}
	case events.Gate:
		p.clear()
		fmt.Fprintln(p.w, e.Message) // the verdict's own line: "gate ID (sev) warned|failed on NODE: why"
	}
	if p.tty {
		p.render()
	}
}

func (p *progress) clear() {
	if p.tty && p.last > 0 {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.last = 0
	}
}

func (p *progress) render() {
	var names []string
	for n := range p.running {
		names = append(names, n)
	}
	sort.Strings(names)
	line := fmt.Sprintf("[%d/%d]", p.finished, p.total)
	if len(names) > 0 {
		line += " " + names[0]
		if msg := p.running[names[0]]; msg != "" {
			line += ": " + msg
		}
		if len(names) > 1 {
			line += fmt.Sprintf(" (+%d running)", len(names)-1)
		}
	}
	if w, _, err := term.GetSize(int(os.Stderr.Fd())); err == nil && w > 10 && len(line) > w-1 {
		line = line[:w-1]
	}
	fmt.Fprint(p.w, "\r\x1b[K"+line)
	p.last = len(line)
}

// done ends the live line.
func (p *progress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty {
		fmt.Fprintln(p.w)
	}
}

func printSummary(w io.Writer, s *run.Summary) {
	var parts []string
	for _, k := range []string{run.OutRan, run.OutReused, run.OutFailed, run.OutGateFailed, run.OutBlocked, run.OutSkipped, run.OutIgnored, run.OutInterrupted, run.OutPending} {
		if n := s.Counts[k]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, k))
		}
	}
	fmt.Fprintf(w, "%s in %.1fs: %s\n", s.Dir, s.Seconds, strings.Join(parts, ", "))
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	shown := 0
	var pending []string
	for _, n := range s.Nodes {
		if n.Outcome == run.OutRan || n.Outcome == run.OutReused || n.Outcome == run.OutSkipped || n.Outcome == run.OutIgnored {
			continue
		}
		if n.Outcome == run.OutPending && n.Reason == "" {
			pending = append(pending, n.Node)
			continue
		}
		if shown == 0 {
			fmt.Fprintln(tw, "NODE\tOUTCOME\tWHY")
		}
		shown++
		why := firstLine(n.Reason)
		if why == "" {
			why = failedGates(n.Verdicts)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", n.Node, n.Outcome, why)
	}
	tw.Flush()
	if len(pending) > 0 {
		fmt.Fprintf(w, "%s not started: %s\n", plural.N(len(pending), "node"), strings.Join(firstFew(pending, pendingShown), ", "))
	}
	for _, n := range s.Nodes {
		for _, v := range n.Verdicts {
			if !v.Passed {
				fmt.Fprintln(w, v.Line())
			}
		}
	}
}

// failedGates names the fail gates a node did not pass, e.g. "fail gate ttft-p50 failed".
func failedGates(vs []gate.Verdict) string {
	var ids []string
	for _, v := range vs {
		if v.Failing() {
			ids = append(ids, v.Gate)
		}
	}
	switch len(ids) {
	case 0:
		return ""
	case 1:
		return "fail gate " + ids[0] + " failed"
	}
	return "fail gates " + strings.Join(ids, ", ") + " failed"
}

// pendingShown is how many not-started nodes the summary names; the rest are counted.
const pendingShown = 5

// firstFew is the first n of s, then "… and N more" when s is longer.
func firstFew(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(s[:n:n], fmt.Sprintf("… and %d more", len(s)-n))
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
