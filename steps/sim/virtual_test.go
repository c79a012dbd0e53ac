package sim

import (
	"math"
	"reflect"
	"testing"
	"time"

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

// The virtual open loop's server has max_batch slots, each held for a request's latency, so its
// service rate is max_batch / latency: constant arrivals below it never wait (TTFT the nominal
// one, sent on time), above it every max_batch-th arrival waits one latency less the gap it
// came after, so the waits grow with the queue; a client cap of the slots holds the sends back
// instead (cap-delayed, sent late, served at once). A record is a pure function of its index.
func TestVirtualOpenLoopServiceRate(t *testing.T) {
	v, err := NewVirtual(schema.SimConfig{Deterministic: true, TTFTMs: 20, PrefillMsPer1K: 8, TPOTMs: 10, BatchTPOTMs: 0.05, MaxBatch: 4})
	if err != nil {
		t.Fatal(err)
	}
	latency := 20.8 + 11*(10+0.05*3) // ms: 100 prompt tokens, 12 tokens out, a full batch of 4
	mu := 4 / (latency / 1000)
	arrivals := func(rate float64) []time.Duration {
		out := make([]time.Duration, 400)
		for i := range out {
			out[i] = time.Duration(float64(i) / rate * 1e9)
		}
		return out
	}
	ttft := func(r schema.RequestRecord) float64 { return float64(r.FirstTokenNs-r.ScheduledNs) / 1e6 }
	below := arrivals(0.99 * mu)
	for i := range below {
		r := v.OpenRecord("c", "profiling", below, 0, i, 100, 12)
		if math.Abs(ttft(r)-20.8) > 1e-6 || r.StartNs != r.ScheduledNs || r.CapDelayed || r.ScheduledNs != VirtualEpoch+int64(below[i]) {
			t.Fatalf("below the service rate, request %d: TTFT %.4f ms from its arrival, sent %d ns late", i, ttft(r), r.StartNs-r.ScheduledNs)
		}
	}
	above := arrivals(1.01 * mu)
	gap := latency - 4/(1.01*mu)*1000 // what each round of 4 falls behind, ms
	for _, i := range []int{3, 4, 40, 399} {
		r := v.OpenRecord("c", "profiling", above, 0, i, 100, 12)
		if want := 20.8 + float64(i/4)*gap; math.Abs(ttft(r)-want) > 1e-3 || r.StartNs != r.ScheduledNs {
			t.Errorf("above the service rate, request %d: TTFT %.4f ms, want %.4f (sent on time, queued)", i, ttft(r), want)
		}
		if b := v.OpenRecord("c", "profiling", above, 0, i, 100, 12); !reflect.DeepEqual(r, b) {
			t.Errorf("request %d answered twice differently", i)
		}
	}
	r := v.OpenRecord("c", "profiling", above, 4, 399, 100, 12)
	if late := float64(r.StartNs-r.ScheduledNs) / 1e6; !r.CapDelayed || math.Abs(late-99*gap) > 1e-3 || float64(r.FirstTokenNs-r.StartNs)/1e6 != 20.8 {
		t.Errorf("capped at the slots, request 399: cap-delayed %v, sent %.4f ms late (want %.4f), TTFT from the send %.4f ms", r.CapDelayed, late, 99*gap, float64(r.FirstTokenNs-r.StartNs)/1e6)
	}
}
