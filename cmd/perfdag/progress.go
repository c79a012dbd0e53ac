package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"

	"golang.org/x/term"

	"github.com/perfdag/perfdag/engine/events"
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
		fmt.Fprintf(p.w, "gate %s (%s) refused %s: %s\n", e.Gate, e.Severity, e.Node, e.Message)
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
	for _, n := range s.Nodes {
		if n.Outcome == run.OutRan || n.Outcome == run.OutReused || n.Outcome == run.OutSkipped || n.Outcome == run.OutIgnored {
			continue
		}
		if shown == 0 {
			fmt.Fprintln(tw, "NODE\tOUTCOME\tWHY")
		}
		shown++
		fmt.Fprintf(tw, "%s\t%s\t%s\n", n.Node, n.Outcome, firstLine(n.Reason))
	}
	tw.Flush()
	for _, n := range s.Nodes {
		for _, v := range n.Verdicts {
			if !v.Passed {
				fmt.Fprintf(w, "gate %s (%s) on %s: %s\n", v.Gate, v.Severity, v.Node, firstNonEmpty(v.Error, v.Message, v.Rule+" is false"))
			}
		}
	}
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
