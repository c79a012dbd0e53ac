package calibrate

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/sim"
)

// paced makes the records of a rung at concurrency c that kept the simulator's pace exactly:
// two back-to-back rounds of ladderTokens tokens, delayed by late each.
func paced(c int, late time.Duration, class string) []schema.RequestRecord {
	d := time.Duration(PacedSim.TTFTMs+(ladderTokens-1)*PacedSim.TPOTMs) * time.Millisecond
	var recs []schema.RequestRecord
	n := ladderTokens
	for round := range 2 {
		for range c {
			start := int64(round) * int64(d+late)
			recs = append(recs, schema.RequestRecord{StartNs: start, EndNs: start + int64(d+late), UsageComplete: &n, ErrorClass: class})
		}
	}
	return recs
}

// TestRung: a rung is held when its requests kept the pace, none failed and its client kept
// up; each way to fall short is named.
func TestRung(t *testing.T) {
	ok := &schema.ClientBound{Verdict: schema.VerdictClientOK}
	bound := &schema.ClientBound{Verdict: schema.VerdictClientBound, Why: []string{"CPU 99 % of 2 cores"}}
	cases := []struct {
		name string
		recs []schema.RequestRecord
		cb   *schema.ClientBound
		held bool
		why  string
	}{
		{"kept the pace", paced(64, 0, ""), ok, true, ""},
		{"slow", paced(64, 500*time.Millisecond, ""), ok, false, "took 76 % of the paced tokens"},
		{"client bound", paced(64, 0, ""), bound, false, "client_bound: CPU 99 % of 2 cores"},
		{"failed", append(paced(64, 0, ""), schema.RequestRecord{ErrorClass: schema.ErrorConnect}), ok, false, "1 of 129 requests failed"},
	}
	for _, c := range cases {
		r := rung(64, c.recs, c.cb)
		if r.Held != c.held || r.Why != c.why {
			t.Errorf("%s: held %v (%q), ratio %.3f; want %v (%q)", c.name, r.Held, r.Why, r.Ratio, c.held, c.why)
		}
	}
}

// TestWarningsOpenLoopStreams: an open-loop point's streams are its rate × its answers' time
// at the calibration's pace (Little's law), at most its in-flight cap.
func TestWarningsOpenLoopStreams(t *testing.T) {
	cal := &schema.Calibration{Ceilings: &schema.CalibrationCeilings{Streams: 1024, StreamTokensPerS: 20, RequestsPerS: 1e6, TokensPerS: 1e9}}
	camp := func(capped int) *schema.Campaign {
		return &schema.Campaign{Cells: []schema.Cell{{ID: "o", Concurrencies: []int{capped},
			Workload: schema.Workload{Shape: "custom", InputTokens: 10, OutputTokens: 400, RequestRate: 100}}}}
	}
	w := Warnings(camp(4096), cal, "here")
	if len(w) != 1 || !strings.Contains(w[0], "asks about 2000 streams (400-token answers at 20 tokens/s each), more than one client held on this machine (1024 streams;") {
		t.Errorf("100/s of 400-token answers capped at 4096: %q", w)
	}
	if w := Warnings(camp(512), cal, "here"); len(w) != 0 {
		t.Errorf("capped at 512 (under the 1024 streams held): %q", w)
	}
	if w := Warnings(camp(4096), &schema.Calibration{}, "here"); len(w) != 0 {
		t.Errorf("a calibration without ceilings: %q", w)
	}
}

// TestWarningsSplitOverClients: a point split over clients asks each client its share — c8192
// over 4 is 2048 streams each, over 8 1024 (held); a rate over N is rate/N requests/s each.
func TestWarningsSplitOverClients(t *testing.T) {
	cal := &schema.Calibration{Ceilings: &schema.CalibrationCeilings{Streams: 1024, StreamTokensPerS: 20, RequestsPerS: 5000, TokensPerS: 1e9}}
	camp := func(clients int) *schema.Campaign {
		return &schema.Campaign{Cells: []schema.Cell{
			{ID: "c", Concurrencies: []int{8192}, Clients: clients, Workload: schema.Workload{Shape: "custom", InputTokens: 10, OutputTokens: 16}},
			{ID: "r", Rates: []float64{16000}, Clients: clients, Workload: schema.Workload{Shape: "custom", InputTokens: 10, OutputTokens: 1}},
		}}
	}
	w := Warnings(camp(4), cal, "here")
	if len(w) != 1 || !strings.HasPrefix(w[0], "cell c at c8192 (each of its 4 clients) asks 2048 streams, more than one client held on this machine (1024 streams") ||
		!strings.HasSuffix(w[0], "lower the load or split it over more clients (clients: on the cell)") {
		t.Errorf("c8192 and r16000 over 4 clients: %q, want c8192's 2048 streams each (r16000 is 4000/s each, under 5000)", w)
	}
	if w := Warnings(camp(8), cal, "here"); len(w) != 0 {
		t.Errorf("c8192 and r16000 over 8 clients (1024 streams, 2000/s each): %q", w)
	}
	if w := Warnings(camp(0), cal, "here"); len(w) != 2 || !strings.Contains(w[1], "cell r at r16000 asks 16000 requests/s") {
		t.Errorf("one client: %q, want both points", w)
	}
}

// TestCeilingsAgainstTheSimulator climbs one rung against an in-process paced simulator and
// measures the zero-delay ceilings: every figure is there and sane, never how large (the
// machine is shared).
func TestCeilingsAgainstTheSimulator(t *testing.T) {
	ctx := context.Background()
	zero, err := sim.Start(ctx, schema.SimConfig{ZeroDelay: true}, "m")
	if err != nil {
		t.Fatal(err)
	}
	defer zero.Close()
	pacedSrv, err := sim.Start(ctx, PacedSim, "m")
	if err != nil {
		t.Fatal(err)
	}
	defer pacedSrv.Close()
	ce, err := Ceilings(ctx, Options{Model: "m", Salt: t.Name(), CPU: func() time.Duration { return 0 }},
		CeilingOptions{ZeroURL: zero.URL(), PacedURL: pacedSrv.URL(), MaxStreams: FirstRung})
	if err != nil {
		t.Fatal(err)
	}
	if len(ce.Rungs) != 1 || ce.Rungs[0].Concurrency != 64 || ce.Rungs[0].Requests != 128 || ce.Rungs[0].Failed != 0 || ce.Rungs[0].ClientBound == nil {
		t.Fatalf("rungs %+v, want c64 of 128 requests with its client's verdict", ce.Rungs)
	}
	if r := ce.Rungs[0]; !(r.Ratio > 0.5 && r.Ratio <= 1.05) || (ce.Streams == 64) != r.Held {
		t.Errorf("rung %+v, streams %d", r, ce.Streams)
	}
	if !(ce.RequestsPerS > 0) || !(ce.TokensPerS > 0) || ce.StreamTokensPerS != 20 || ce.Concurrency != 256 || ce.StreamsEnd == "" {
		t.Errorf("ceilings %+v", ce)
	}
}
