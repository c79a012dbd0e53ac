package session

import (
	"fmt"
	"runtime"
	"slices"
	"time"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/openai"
)

// window is what a Load's window began with: the process's CPU time and the client's read-lag
// counts, so its end can say whether the client was the bottleneck.
type window struct {
	began time.Time
	cpu   time.Duration
	cpuOK bool
	lag   openai.LagMark
}

func (s *Session) openWindow() window {
	cpu, ok := processCPU()
	return window{began: time.Now(), cpu: cpu, cpuOK: ok, lag: s.Client.ReadLag().Mark()}
}

// close states the window's ClientBound from its CPU, the records' sends and the reads since
// it opened.
func (w window) close(s *Session, recs []schema.RequestRecord) *schema.ClientBound {
	wall := time.Since(w.began)
	cpu, ok := processCPU()
	cpuPct := -1.0
	cores := runtime.GOMAXPROCS(0)
	if ok && w.cpuOK && wall > 0 {
		cpuPct = 100 * (cpu - w.cpu).Seconds() / (wall.Seconds() * float64(cores))
	}
	late, sends := lateSends(recs)
	return ClientBoundOf(cpuPct, cores, late, sends, s.Client.ReadLag().Since(w.lag), tokenGapMs(recs))
}

// tokenGapMs is the window's typical time between tokens: the median over its valid answers
// of each one's mean gap between chunks (0 when none has two).
func tokenGapMs(recs []schema.RequestRecord) float64 {
	var gaps []float64
	for _, r := range recs {
		if n := len(r.ChunkNs); r.ErrorClass == "" && n >= 2 {
			gaps = append(gaps, float64(r.ChunkNs[n-1]-r.ChunkNs[0])/float64(n-1)/1e6)
		}
	}
	if len(gaps) == 0 {
		return 0
	}
	slices.Sort(gaps)
	return gaps[len(gaps)/2]
}

// lateSends counts the open-loop sends among recs and those that went out more than
// schema.LateSendMs after their schedule with a slot free and no look holding them.
func lateSends(recs []schema.RequestRecord) (late, sends int) {
	bound := int64(schema.LateSendMs * 1e6)
	for _, r := range recs {
		if r.ScheduledNs == 0 {
			continue
		}
		sends++
		if !r.CapDelayed && !r.LookHeld && r.StartNs-r.ScheduledNs > bound {
			late++
		}
	}
	return late, sends
}

// ClientBoundOf judges a window: cpuPct of cores (negative: unknown), late of sends open-loop
// sends late, the reads' lag and the typical time between tokens (ms; 0 unknown). Any sign past
// its bound (schema.ClientCPUBoundPct, LateSendsBoundPct; a lag p99 past both ReadLagBoundMs
// and a token's time) makes the point client_bound, and is named in Why.
func ClientBoundOf(cpuPct float64, cores, late, sends int, lag openai.LagSummary, tokenGapMs float64) *schema.ClientBound {
	b := &schema.ClientBound{CPUPct: max(cpuPct, 0), Cores: cores, LateSends: late, Sends: sends, Reads: lag.Reads,
		ReadLagP50Ms: lag.P50Ms, ReadLagP99Ms: lag.P99Ms, ReadLagMaxMs: lag.MaxMs, Verdict: schema.VerdictClientOK}
	if cpuPct >= schema.ClientCPUBoundPct {
		b.Why = append(b.Why, fmt.Sprintf("CPU %.0f %% of %d cores", cpuPct, cores))
	}
	if sends > 0 && 100*float64(late)/float64(sends) > schema.LateSendsBoundPct {
		b.Why = append(b.Why, fmt.Sprintf("%d of %d sends more than %g ms late", late, sends, schema.LateSendMs))
	}
	b.ReadLagBoundMs = max(schema.ReadLagBoundMs, tokenGapMs)
	if lag.Reads > 0 && lag.P99Ms > b.ReadLagBoundMs {
		b.Why = append(b.Why, fmt.Sprintf("reads %.3g ms behind their kernel stamps (p99, bound %.3g ms)", lag.P99Ms, b.ReadLagBoundMs))
	}
	if len(b.Why) > 0 {
		b.Verdict = schema.VerdictClientBound
	}
	return b
}

// Line is a ClientBound's part of a run line: "" when the client kept up, else what bounded it.
func Line(b *schema.ClientBound) string {
	if !b.Bound() {
		return ""
	}
	line := "client_bound:"
	for i, w := range b.Why {
		if i > 0 {
			line += ","
		}
		line += " " + w
	}
	return line + " (the point measured its client, not the server: lower the load or split it over more clients)"
}
