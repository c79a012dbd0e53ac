package sim_test

import (
	"context"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/openai"
	"github.com/perfdag/perfdag/steps/sim"
)

func TestVLLMMetricsCounters(t *testing.T) {
	// spec: accept rate 0.6 with 4 draft tokens → every verify step emits 1 + 4 × 0.6 = 3.4
	// tokens; 4 requests × 85 tokens = 340 generated → 100 drafts, 400 draft tokens,
	// 240 accepted: accept rate 240/400 = 0.6, acceptance length 1 + 240/100 = 3.4.
	s := start(t, schema.SimConfig{ZeroDelay: true, SpecAcceptRate: 0.6, SpecTokens: 4})
	cl := client(t, s, 10*time.Second)
	prompts := []string{"alpha beta", "alpha beta", "gamma", "delta delta delta"} // 2 + 2 + 1 + 3 prompt tokens, one repeat
	for _, p := range prompts {
		r := cl.Stream(context.Background(), openai.Request{Body: chatBody(t, p, map[string]any{"max_tokens": 85, "ignore_eos": true})}).Record
		if r.ErrorClass != "" {
			t.Fatalf("%s: %s", r.ErrorClass, r.Error)
		}
	}
	fams := scrape(t, s.URL()+"/metrics")
	checks := []struct {
		name string
		want float64
	}{
		{"vllm:generation_tokens_total", 340},
		{"vllm:prompt_tokens_total", 8},
		{"vllm:prefix_cache_queries_total", 8},
		{"vllm:prefix_cache_hits_total", 2}, // the repeated "alpha beta"
		{"vllm:num_requests_running", 0},
		{"vllm:num_requests_waiting", 0},
		{"vllm:kv_cache_usage_perc", 0},
		{"vllm:spec_decode_num_drafts_total", 100},
		{"vllm:spec_decode_num_draft_tokens_total", 400},
		{"vllm:spec_decode_num_accepted_tokens_total", 240},
	}
	for _, c := range checks {
		if got := value(t, fams, c.name); got != c.want {
			t.Errorf("%s = %v, want %v", c.name, got, c.want)
		}
	}
	if fams["vllm:generation_tokens_total"].GetType().String() != "COUNTER" || fams["vllm:num_requests_running"].GetType().String() != "GAUGE" {
		t.Error("counters and gauges must be typed as such")
	}
	off := scrape(t, start(t, schema.SimConfig{ZeroDelay: true}).URL()+"/metrics")
	for name := range off {
		if strings.HasPrefix(name, "vllm:spec_decode") {
			t.Errorf("%s exported without speculative decoding: absent must mean not configured", name)
		}
	}
}

func TestSpecCounters(t *testing.T) {
	cases := []struct {
		gen                           int64
		rate                          float64
		k                             int
		drafts, draftTokens, accepted int64
	}{
		{340, 0.6, 4, 100, 400, 240},   // 340 / 3.4 = 100 steps
		{1000, 0.5, 3, 400, 1200, 600}, // 1000 / 2.5 = 400
		{10, 0.5, 3, 4, 12, 6},         // floor(10 / 2.5) = 4
		{500, 0, 3, 0, 0, 0},
	}
	for _, c := range cases {
		d, dt, a := sim.SpecCounters(c.gen, c.rate, c.k)
		if d != c.drafts || dt != c.draftTokens || a != c.accepted {
			t.Errorf("SpecCounters(%d, %v, %d) = %d %d %d, want %d %d %d", c.gen, c.rate, c.k, d, dt, a, c.drafts, c.draftTokens, c.accepted)
		}
	}
}

// hold starts n requests that stall after half their tokens, so they sit in the batch until
// release is called.
func hold(t *testing.T, s *sim.Server, n int) (release func()) {
	t.Helper()
	cl := client(t, s, time.Minute)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			cl.Stream(ctx, openai.Request{ID: string(rune('a' + i)), Body: chatBody(t, "hold", map[string]any{"max_tokens": 4, "ignore_eos": true})})
		})
	}
	return func() { cancel(); wg.Wait() }
}

// waitFor polls cond for up to a minute (a hang bound; the machine may be loaded).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

func TestLoadGaugesAndDCGM(t *testing.T) {
	// Every request stalls half-way: 3 requests with max_batch 2 → 2 running, 1 waiting.
	s := start(t, schema.SimConfig{ZeroDelay: true, MaxBatch: 2, GPUs: 2, Faults: schema.SimFaults{Stall: 1}})
	release := hold(t, s, 3)
	waitFor(t, "2 running and 1 waiting", func() bool {
		f := scrape(t, s.URL()+"/metrics")
		return value(t, f, "vllm:num_requests_running") == 2 && value(t, f, "vllm:num_requests_waiting") == 1
	})
	if kv := value(t, scrape(t, s.URL()+"/metrics"), "vllm:kv_cache_usage_perc"); kv <= 0 || kv > 1 {
		t.Errorf("kv_cache_usage_perc = %v with requests running, want a fraction above 0", kv)
	}
	checkDCGM(t, s, 2, 2)
	release()
	waitFor(t, "an idle batch", func() bool {
		return value(t, scrape(t, s.URL()+"/metrics"), "vllm:num_requests_running") == 0
	})
	checkDCGM(t, s, 0, 2)
}

func checkDCGM(t *testing.T, s *sim.Server, running, gpus int) {
	t.Helper()
	// Load L = r/(r+8): with 2 running, L = 0.2 → SM active 0.18, power 70 + 126 = 196 W.
	g := sim.DCGMAt(running, gpus)
	want := map[string]float64{
		"DCGM_FI_PROF_SM_ACTIVE": g.SMActive, "DCGM_FI_PROF_SM_OCCUPANCY": g.SMOccupancy,
		"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": g.TensorActive, "DCGM_FI_PROF_DRAM_ACTIVE": g.DRAMActive,
		"DCGM_FI_PROF_GR_ENGINE_ACTIVE": g.GREngineActive, "DCGM_FI_PROF_NVLINK_TX_BYTES": g.NVLinkTxBytes,
		"DCGM_FI_PROF_NVLINK_RX_BYTES": g.NVLinkRxBytes, "DCGM_FI_PROF_PCIE_TX_BYTES": g.PCIeTxBytes,
		"DCGM_FI_PROF_PCIE_RX_BYTES": g.PCIeRxBytes, "DCGM_FI_DEV_POWER_USAGE": g.PowerW, "DCGM_FI_DEV_GPU_UTIL": g.GPUUtil,
	}
	if running == 2 && (math.Abs(g.SMActive-0.18) > 1e-12 || math.Abs(g.PowerW-196) > 1e-9 || g.GPUUtil != 100) {
		t.Fatalf("DCGMAt(2, 2) = %+v, want SM active 0.18, power 196 W, util 100", g)
	}
	fams := scrape(t, s.URL()+"/dcgm/metrics")
	for name, v := range want {
		f := fams[name]
		if f == nil || len(f.Metric) != gpus {
			t.Fatalf("%s: want one series per GPU (%d)", name, gpus)
		}
		uuids := map[string]bool{}
		for i, m := range f.Metric {
			labels := map[string]string{}
			for _, l := range m.Label {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["gpu"] != string(rune('0'+i)) || !strings.HasPrefix(labels["UUID"], "GPU-") || labels["modelName"] != sim.GPUModel || labels["Hostname"] != sim.Hostname {
				t.Errorf("%s series %d labels %v", name, i, labels)
			}
			uuids[labels["UUID"]] = true
			if got := m.Gauge.GetValue(); math.Abs(got-v) > 1e-9*math.Max(1, v) {
				t.Errorf("%s gpu %d = %v, want %v at %d running", name, i, got, v, running)
			}
		}
		if len(uuids) != gpus {
			t.Errorf("%s: GPU UUIDs are not distinct: %v", name, uuids)
		}
	}
}

func TestCloseReleasesStalledStreams(t *testing.T) {
	s, err := sim.Start(context.Background(), schema.SimConfig{ZeroDelay: true, Faults: schema.SimFaults{Stall: 1}}, model0)
	if err != nil {
		t.Fatal(err)
	}
	release := hold(t, s, 2)
	waitFor(t, "both stalled", func() bool {
		return value(t, scrape(t, s.URL()+"/metrics"), "vllm:num_requests_running") == 2
	})
	done := make(chan struct{})
	go func() { s.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute): // a hang bound; the machine may be loaded
		t.Fatal("Close hung on stalled streams")
	}
	release()
	if got := len(s.Served()); got != 2 {
		t.Errorf("served %d truths after close, want 2", got)
	}
}

func TestListenAndServe(t *testing.T) {
	if err := sim.ListenAndServe(context.Background(), "127.0.0.1:0", schema.SimConfig{Slowdown: -1}, model0); err == nil || !strings.Contains(err.Error(), "sim.slowdown") {
		t.Fatalf("bad config: err = %v, want the field named", err)
	}
	s := start(t, schema.SimConfig{ZeroDelay: true})
	if err := sim.ListenAndServe(context.Background(), strings.TrimPrefix(s.URL(), "http://"), schema.SimConfig{}, model0); err == nil {
		t.Fatal("a taken port must be an error")
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- sim.ListenAndServe(ctx, "127.0.0.1:0", schema.SimConfig{}, model0) }()
	time.Sleep(20 * time.Millisecond)
	cancel()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("clean stop: %v", err)
		}
	case <-time.After(time.Minute): // a hang bound; the machine may be loaded
		t.Fatal("ListenAndServe did not return after its context ended")
	}
}
