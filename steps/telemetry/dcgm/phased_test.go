package dcgm

import (
	"github.com/perfdag/perfdag/schema"

	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"
)

// promSlack keeps window edges clear of Prometheus's scrape timestamps, which it may move up to
// 2 ms earlier than the scrape's start (scrape timestamp alignment). It orders events; nothing
// here asserts on how long anything took.
const promSlack = 50 * time.Millisecond

// phasedExporter serves a dataset phase by phase: Prometheus scrapes /metrics, the Sampler polls
// /. The phase changes only when the test says so, and the test says so on events (scrapes
// served and samples taken), never on the clock, so a loaded machine only makes it slower.
type phasedExporter struct {
	data dataset

	mu      sync.Mutex
	phase   int
	prom    []promServe   // every Prometheus scrape served, in order
	changed chan struct{} // closed (and replaced) on every request served
}

// promServe is one Prometheus scrape: the phase it was served and when the handler served it.
// Prometheus stamps the sample when it starts the scrape, so at or before this instant.
type promServe struct {
	phase int
	at    time.Time
}

func newPhasedExporter(data dataset) *phasedExporter {
	return &phasedExporter{data: data, changed: make(chan struct{})}
}

func (e *phasedExporter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e.mu.Lock()
	ph := e.phase
	if r.URL.Path == "/metrics" {
		e.prom = append(e.prom, promServe{phase: ph, at: time.Now()})
	}
	close(e.changed)
	e.changed = make(chan struct{})
	e.mu.Unlock()
	text, err := ExporterText(e.data[ph])
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	_, _ = w.Write(text)
}

// setPhase switches what every later request is served.
func (e *phasedExporter) setPhase(ph int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.phase = ph
}

// firstProm is the serve time of the first Prometheus scrape of phase ph served after from.
func (e *phasedExporter) firstProm(ph int, from time.Time) (time.Time, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, s := range e.prom {
		if s.phase == ph && s.at.After(from) {
			return s.at, true
		}
	}
	return time.Time{}, false
}

// await blocks until cond holds, re-checking it after every request the exporter serves (the
// Sampler polls every few hundred ms, so its own progress always comes with a request). ctx is a
// liveness bound only: when it ends, the test fails naming what it waited for.
func (e *phasedExporter) await(ctx context.Context, t *testing.T, what string, cond func() bool) {
	t.Helper()
	for {
		e.mu.Lock()
		changed := e.changed
		e.mu.Unlock()
		if cond() {
			return
		}
		select {
		case <-changed:
		case <-ctx.Done():
			e.mu.Lock()
			n := len(e.prom)
			e.mu.Unlock()
			t.Fatalf("waiting for %s: %v (%d prometheus scrapes served)", what, ctx.Err(), n)
		}
	}
}

// scrapesAfter counts the Sampler's scrapes that arrived after from (each scrape adds one sample
// per GPU, all stamped with the scrape's arrival).
func (s *Sampler) scrapesAfter(from time.Time) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := map[time.Time]bool{}
	for _, g := range s.samples {
		if g.At.After(from) {
			seen[g.At] = true
		}
	}
	return len(seen)
}

// runPhases walks the exporter through every phase of its dataset and returns each phase's
// window, placed by events so that every sample of either consumer stamped inside it was served
// from that phase:
//
//  1. switch to phase p (at time sw);
//  2. wait for a Prometheus scrape served p, and for two Sampler scrapes that arrived after sw:
//     the Sampler polls one request at a time, so the second was requested after the switch and
//     every scrape of the previous phase has arrived. Start is after both;
//  3. wait for two Sampler scrapes after Start and a Prometheus scrape after Start: End;
//  4. wait for a Prometheus scrape of phase p served after End+slack: Prometheus scrapes a
//     target one scrape at a time, so every later scrape (the first that can see phase p+1) is
//     stamped after End.
func (e *phasedExporter) runPhases(ctx context.Context, t *testing.T, sampler *Sampler) []Window {
	t.Helper()
	var windows []Window
	for ph := range e.data {
		sw := time.Now()
		e.setPhase(ph)
		var promAt time.Time
		e.await(ctx, t, fmt.Sprintf("phase %d's first scrapes", ph), func() bool {
			at, ok := e.firstProm(ph, sw)
			promAt = at
			return ok && sampler.scrapesAfter(sw) >= 2
		})
		start := time.Now()
		if p := promAt.Add(promSlack); p.After(start) {
			start = p
		}
		start = start.Add(time.Millisecond) // strictly after every sample counted so far
		e.await(ctx, t, fmt.Sprintf("phase %d's window", ph), func() bool {
			_, ok := e.firstProm(ph, start)
			return ok && sampler.scrapesAfter(start) >= 2
		})
		end := time.Now()
		e.await(ctx, t, fmt.Sprintf("phase %d's closing scrape", ph), func() bool {
			_, ok := e.firstProm(ph, end.Add(promSlack))
			return ok
		})
		windows = append(windows, Window{Load: schema.Conc(concOf(ph)), Start: start, End: end})
	}
	return windows
}
