package calibrate

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/sim"
)

func TestTargets(t *testing.T) {
	c := &schema.Campaign{Cells: []schema.Cell{
		{ID: "a", Workload: schema.Workload{Shape: "aa-10k"}, Concurrencies: []int{16, 1, 4}},
		{ID: "b", Workload: schema.Workload{Shape: "aa-1k"}, Concurrencies: []int{1, 2, 512, 300}},
		{ID: "replay", Workload: schema.Workload{Mode: "dataset-replay", Dataset: "x.jsonl"}, Concurrencies: []int{8}},
		{ID: "imported", Concurrencies: []int{32}, Import: &schema.CellImport{Format: "aiperf"}}, // another tool's client
	}}
	got, skipped := Targets(c)
	want := []Target{
		{Concurrency: 1, Workload: "aa-10k", InputTokens: 10000}, // the first cell with c1 sets its prompt
		{Concurrency: 2, Workload: "aa-1k", InputTokens: 1000},
		{Concurrency: 4, Workload: "aa-10k", InputTokens: 10000},
		{Concurrency: 8, Workload: "aa-1k", InputTokens: 1000}, // a replay without a shape counts as aa-1k
		{Concurrency: 16, Workload: "aa-10k", InputTokens: 10000},
		{Concurrency: MaxConcurrency, Workload: "aa-1k", InputTokens: 1000}, // 300 and 512 stand here
	}
	if !slices.Equal(got, want) {
		t.Errorf("Targets =\n%v\nwant\n%v", got, want)
	}
	if !slices.Equal(skipped, []int{300, 512}) {
		t.Errorf("skipped = %v, want [300 512]", skipped)
	}
	if got, _ := Targets(&schema.Campaign{Cells: c.Cells[3:]}); len(got) != 0 {
		t.Errorf("an import-only campaign has targets %v", got)
	}
}

func TestDefaultRequests(t *testing.T) {
	for _, tc := range []struct{ c, input, want int }{
		{1, 1000, 64}, {16, 1000, 64}, {32, 1000, 128}, {256, 1000, 1024},
		{1, 10000, 64}, {1, 100000, 20}, {8, 100000, 32}, {1, 2_000_000, 4},
	} {
		if got := DefaultRequests(Target{Concurrency: tc.c, InputTokens: tc.input}); got != tc.want {
			t.Errorf("c%d with %d-token prompts: %d requests, want %d", tc.c, tc.input, got, tc.want)
		}
	}
}

// TestTTFTPairsByPromptDigest: errors are computed per pair with exact arithmetic; a record
// without a pair, a failed record, and two requests sharing one prompt count as failed.
func TestTTFTPairsByPromptDigest(t *testing.T) {
	ms := int64(time.Millisecond)
	recs := []schema.RequestRecord{
		{Index: 0, StartNs: 1000 * ms, SentNs: 1000*ms + ms/10, FirstTokenNs: 1010 * ms},
		{Index: 1, StartNs: 2000 * ms, SentNs: 2000*ms + ms/5, FirstTokenNs: 2020 * ms},
		{Index: 2, StartNs: 3000 * ms, ErrorClass: schema.ErrorHTTP},
		{Index: 3, StartNs: 4000 * ms, SentNs: 4000 * ms, FirstTokenNs: 4001 * ms}, // the simulator never saw it
		{Index: 4, StartNs: 5000 * ms, SentNs: 5000 * ms, FirstTokenNs: 5001 * ms}, // shares a prompt with index 5
		{Index: 5, StartNs: 6000 * ms, SentNs: 6000 * ms, FirstTokenNs: 6001 * ms},
	}
	digests := map[string]int{"d0": 0, "d1": 1, "d2": 2, "d3": 3, "dup": 5}
	truth := map[string][]*sim.Served{
		// the simulator wrote the first chunk 0.5 ms before the client stamped it
		"d0": {{ArrivedNs: 1001 * ms, SentNs: []int64{1009*ms + ms/2}}},
		"d1": {{ArrivedNs: 2002 * ms, SentNs: []int64{2019 * ms}}},
		"d2": {{ArrivedNs: 3001 * ms, SentNs: []int64{3002 * ms}}},
	}
	var p schema.CalibrationPoint
	ttft(&p, recs, digests, truth)
	if p.Requests != 2 || p.Failed != 4 {
		t.Fatalf("requests %d failed %d, want 2 and 4", p.Requests, p.Failed)
	}
	near := func(name string, got, want float64) {
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	near("send min", p.SendMs.Min, 0.1)
	near("send max", p.SendMs.Max, 0.2)
	near("receive min", p.ReceiveMs.Min, 0.5)
	near("receive max", p.ReceiveMs.Max, 1)
	near("error min", p.TTFTErrorMs.Min, 0.6)
	near("error max", p.TTFTErrorMs.Max, 1.2)
	near("server TTFT max", p.ServerTTFTMs.Max, 17)
	if p.ClockViolations != 0 {
		t.Errorf("clock violations %d on causal stamps", p.ClockViolations)
	}
	// A stamp before the simulator wrote: two clocks disagree.
	truth["d0"][0].SentNs[0] = 1011 * ms
	p = schema.CalibrationPoint{}
	ttft(&p, recs, digests, truth)
	if p.ClockViolations != 1 {
		t.Errorf("clock violations %d, want 1", p.ClockViolations)
	}
}

func TestIngest(t *testing.T) {
	n := func(v int) *int { return &v }
	recs := []schema.RequestRecord{
		{StartNs: 1e9, EndNs: 2e9, UsageComplete: n(1000), ChunkNs: make([]int64, 1000)},
		{StartNs: 1.5e9, EndNs: 3e9, ChunkNs: make([]int64, 500)}, // no usage: its chunks count
		{StartNs: 0, EndNs: 9e9, ErrorClass: schema.ErrorDropped},
	}
	var p schema.CalibrationPoint
	ingest(&p, recs, time.Second)
	if p.IngestRequests != 2 || p.IngestTokens != 1500 || p.IngestWindowS != 2 || p.IngestTokensPerS != 750 ||
		p.IngestChunksPerS != 750 || p.IngestClientCPUPct != 50 {
		t.Errorf("ingest = %+v", p)
	}
}

// TestRunAgainstTheSimulator runs the real client path against an in-process zero-delay
// simulator (one clock, so causality must hold exactly) and checks that every figure is there
// and sane — never how large it is: the machine is shared.
func TestRunAgainstTheSimulator(t *testing.T) {
	ctx := context.Background()
	srv, err := sim.Start(ctx, schema.SimConfig{ZeroDelay: true}, "m")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	targets := []Target{{Concurrency: 1, Workload: "custom", InputTokens: 64}, {Concurrency: 3, Workload: "custom", InputTokens: 200}}
	var cpuCalls int
	points, err := Run(ctx, targets, Options{BaseURL: srv.URL(), Model: "m", Salt: t.Name(), Requests: 12, IngestTokens: 8 * ingestOutputTokens,
		Truth: func(context.Context) ([]sim.Served, error) { return srv.Served(), nil },
		CPU:   func() time.Duration { cpuCalls++; return time.Duration(cpuCalls) * time.Millisecond }})
	if err != nil {
		t.Fatal(err)
	}
	if len(points) != 2 {
		t.Fatalf("%d points, want 2", len(points))
	}
	for i, p := range points {
		if p.Concurrency != targets[i].Concurrency || p.InputTokens != targets[i].InputTokens {
			t.Errorf("point %d is c%d/%d tokens, want c%d/%d", i, p.Concurrency, p.InputTokens, targets[i].Concurrency, targets[i].InputTokens)
		}
		if p.Requests != 12 || p.Failed != 0 || p.ClockViolations != 0 {
			t.Errorf("c%d: %d paired, %d failed, %d clock violations; want 12, 0, 0", p.Concurrency, p.Requests, p.Failed, p.ClockViolations)
		}
		for name, s := range map[string]*schema.Stat{"error": p.TTFTErrorMs, "send": p.SendMs, "receive": p.ReceiveMs, "server": p.ServerTTFTMs} {
			if s == nil || s.Count != 12 || s.Min < 0 || math.IsNaN(s.P99) || math.IsInf(s.P99, 0) || s.P50 > s.P99 {
				t.Errorf("c%d %s: %+v", p.Concurrency, name, s)
			}
		}
		if d := p.TTFTErrorMs.Avg - p.SendMs.Avg - p.ReceiveMs.Avg; math.Abs(d) > 1e-6 {
			t.Errorf("c%d: error avg %v ≠ send %v + receive %v", p.Concurrency, p.TTFTErrorMs.Avg, p.SendMs.Avg, p.ReceiveMs.Avg)
		}
		wantReq := map[int]int{1: 8, 3: 9}[p.Concurrency] // 8 streams, in whole rounds of the closed loop
		if p.IngestRequests != wantReq || p.IngestTokens != wantReq*ingestOutputTokens {
			t.Errorf("c%d ingest: %d requests, %d tokens; want %d and %d", p.Concurrency, p.IngestRequests, p.IngestTokens, wantReq, wantReq*ingestOutputTokens)
		}
		if !(p.IngestTokensPerS > 0) || !(p.IngestWindowS > 0) || p.IngestClientCPUS != 0.001 {
			t.Errorf("c%d ingest: %v tok/s over %v s, CPU %v s", p.Concurrency, p.IngestTokensPerS, p.IngestWindowS, p.IngestClientCPUS)
		}
	}
}

// A searched cell's probes are decided at run time: its bounds and the powers of two between
// them are calibrated.
func TestTargetsOfASearchedCell(t *testing.T) {
	c := &schema.Campaign{Cells: []schema.Cell{
		{ID: "knee", Workload: schema.Workload{Shape: "aa-1k"}, Search: &schema.Search{SLO: "itl_avg_ms <= 50", From: 3, To: 40}},
	}}
	got, _ := Targets(c)
	var concs []int
	for _, g := range got {
		concs = append(concs, g.Concurrency)
	}
	if want := []int{3, 4, 8, 16, 32, 40}; !slices.Equal(concs, want) {
		t.Errorf("targets %v, want %v", concs, want)
	}
}
