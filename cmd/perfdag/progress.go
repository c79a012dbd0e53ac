package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/perfdag/perfdag/engine/plural"

	"golang.org/x/term"

	"github.com/perfdag/perfdag/engine/events"
	"github.com/perfdag/perfdag/engine/gate"
	"github.com/perfdag/perfdag/engine/run"
)

// progress shows a run live: on a terminal one updating line (done/total, elapsed time, an
// ETA once it means something, what is running, the running step's own progress), redrawn
// every second; elsewhere one line per finished or failed node.
type progress struct {
	mu       sync.Mutex
	w        io.Writer
	tty      bool
	total    int
	finished int
	running  map[string]string
	last     int
	start    time.Time
	stop     chan struct{}
	eta      *run.ETA
}

// newProgress follows a run of the nodes in kindOf (node id → kind name).
func newProgress(w io.Writer, kindOf map[string]string) *progress {
	p := &progress{w: w, tty: isTerminal(w), total: len(kindOf), running: map[string]string{}, start: time.Now(), stop: make(chan struct{}),
		eta: run.NewETA(kindOf)}
	if p.tty {
		go p.tick()
	}
	return p
}

// tick redraws the live line every second, so the elapsed time moves while a long step
// (prewarm, a slow point) reports nothing.
func (p *progress) tick() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.mu.Lock()
			p.render()
			p.mu.Unlock()
		}
	}
}

func (p *progress) observe(e events.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.eta.Observe(e)
	switch e.Type {
	case events.RunStart:
		p.total = max(p.total, e.Total) // replayed fan-out groups count too
	case events.Expand:
		p.total += e.Total
	case events.NodeStart:
		p.running[e.Node] = ""
		if !p.tty {
			fmt.Fprintf(p.w, "[%d/%d] %-7s %s (%s)\n", p.finished, p.total, "start", e.Node, e.Reason)
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
	line := p.line(time.Now())
	if w, _, err := term.GetSize(int(os.Stderr.Fd())); err == nil && w > 10 {
		line = fit(line, w-1)
	}
	fmt.Fprint(p.w, "\r\x1b[K"+line)
	p.last = len(line)
}

// fit cuts line to at most width characters (runes, so a "×" or "…" is never split into
// invalid UTF-8 on the terminal).
func fit(line string, width int) string {
	if utf8.RuneCountInString(line) <= width {
		return line
	}
	return string([]rune(line)[:width])
}

// line is the live line at now: "[5/32 0:42, ETA 2:10] run-shape[a/c4]: 3/8 done, 0 errors".
func (p *progress) line(now time.Time) string {
	var names []string
	for n := range p.running {
		names = append(names, n)
	}
	sort.Strings(names)
	line := fmt.Sprintf("[%d/%d %s", p.finished, p.total, clock(now.Sub(p.start)))
	if eta, ok := p.eta.Estimate(); ok {
		line += ", ETA " + clock(eta)
	}
	line += "]"
	if len(names) > 0 {
		line += " " + names[0]
		if msg := p.running[names[0]]; msg != "" {
			line += ": " + msg
		}
		if len(names) > 1 {
			line += fmt.Sprintf(" (+%d running)", len(names)-1)
		}
	}
	return line
}

// clock writes a duration as m:ss, or h:mm:ss from an hour.
func clock(d time.Duration) string {
	s := int(d.Round(time.Second) / time.Second)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

// done ends the live line.
func (p *progress) done() {
	close(p.stop)
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
