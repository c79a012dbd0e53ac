package promscrape

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/sim"
)

// TestSimulatorIdleSpecWindow scrapes the built-in simulator with speculative decoding on but no
// traffic: the counters exist (source vllm, zero drafts) while the ratios stay null.
func TestSimulatorIdleSpecWindow(t *testing.T) {
	done := make(chan struct{})
	defer close(done)
	h, err := sim.New(schema.SimConfig{SpecAcceptRate: 0.7}, "m", done)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	f := &Fetcher{}
	before, err := f.Fetch(context.Background(), srv.URL+"/metrics")
	if err != nil {
		t.Fatal(err)
	}
	after, err := f.Fetch(context.Background(), srv.URL+"/metrics")
	if err != nil {
		t.Fatal(err)
	}
	w := Window(before, after, before.Reading())
	if w.Source != "vllm" || !near(w.Drafts, 0) || w.AcceptanceLength != nil || w.SpecAcceptRate != nil {
		t.Fatalf("window = %+v", w)
	}
	if !near(w.GenerationTokens, 0) || !near(w.KVCacheUsagePeak, 0) || !near(w.RunningRequestsPeak, 0) || w.PrefixCacheHitRate != nil {
		t.Fatalf("server deltas: gen %v kv %v running %v prefix %v", deref(w.GenerationTokens), deref(w.KVCacheUsagePeak), deref(w.RunningRequestsPeak), deref(w.PrefixCacheHitRate))
	}
}
