package sim

import (
	"reflect"
	"testing"

	"github.com/perfdag/perfdag/schema"
)

// The deterministic mode's records are pure functions of the request's identity: the same
// call gives the same record, and each of cell, phase, concurrency and index matters.
func TestVirtualIsPure(t *testing.T) {
	v, err := NewVirtual(schema.SimConfig{Seed: 3, Reasoning: true, ReasoningTokens: 4, Faults: schema.SimFaults{HTTP500: 0.2}})
	if err != nil {
		t.Fatal(err)
	}
	a := v.Record("a", "profiling", 4, 5, 100, 20)
	if b := v.Record("a", "profiling", 4, 5, 100, 20); !reflect.DeepEqual(a, b) {
		t.Fatalf("two calls differ:\n%+v\n%+v", a, b)
	}
	if b := v.Record("a", "profiling", 4, 9, 100, 20); b.StartNs <= a.StartNs {
		t.Errorf("index 9 at c4 starts at %d, not after index 5's %d (a later wave)", b.StartNs, a.StartNs)
	}
	faults := 0
	for i := range 200 {
		if v.Record("a", "profiling", 4, i, 100, 20).ErrorClass == schema.ErrorHTTP {
			faults++
		}
	}
	if faults < 20 || faults > 60 {
		t.Errorf("%d of 200 requests met http_500, want about 40", faults)
	}
}

// A valid virtual record reads as the latency model says, with usage and reasoning counts.
func TestVirtualRecord(t *testing.T) {
	v, err := NewVirtual(schema.SimConfig{TTFTMs: 10, PrefillMsPer1K: 10, TPOTMs: 2, BatchTPOTMs: 1, Reasoning: true, ReasoningTokens: 3})
	if err != nil {
		t.Fatal(err)
	}
	r := v.Record("c", "profiling", 2, 3, 1000, 10)
	ms := int64(1e6)
	if r.ErrorClass != "" || r.Status != 200 || len(r.ChunkNs) != 10 {
		t.Fatalf("record %+v", r)
	}
	// TTFT = 10 + 10 ms; per token 2 + 1 ms at c2; request 3 at c2 is in wave 1.
	latency := 20*ms + 9*3*ms
	if want := VirtualEpoch + latency + ms; r.StartNs != want {
		t.Errorf("start %d, want %d", r.StartNs, want)
	}
	if r.FirstTokenNs-r.StartNs != 20*ms || r.LastContentNs-r.StartNs != latency || r.FirstOutputNs-r.StartNs != 29*ms {
		t.Errorf("first token +%d, last +%d, first output +%d", r.FirstTokenNs-r.StartNs, r.LastContentNs-r.StartNs, r.FirstOutputNs-r.StartNs)
	}
	if r.OutputTokens != 7 || r.ReasoningTok != 3 || *r.UsageComplete != 10 || *r.UsagePrompt != 1000 || *r.UsageReasoning != 3 {
		t.Errorf("tokens: %+v", r)
	}
	if _, err := NewVirtual(schema.SimConfig{Slowdown: -1}); err == nil {
		t.Error("a negative slowdown was accepted")
	}
}
