package promscrape

import (
	"strings"
	"testing"
	"time"
)

// TestEngineMaps reads each engine's exposition (the real vLLM and llama.cpp captures under
// testdata, documented SGLang / TensorRT-LLM / Dynamo names inline) through the same lookups a
// point uses: the recognised family, KV usage, running and queued requests.
func TestEngineMaps(t *testing.T) {
	at := time.Unix(1_700_000_000, 0)
	tests := []struct {
		name            string
		scrape          *Scrape
		engines         string
		kv, run, queued *float64
	}{
		{name: "vLLM capture", scrape: loadSample(t, "vllm-metrics.txt"), engines: "vllm",
			kv: f64(0), run: f64(0), queued: f64(0)},
		{name: "llama.cpp capture", scrape: loadSample(t, "llamacpp-metrics.txt"), engines: "llamacpp",
			kv: f64(0.00311279), run: f64(0), queued: f64(0)},
		{name: "SGLang", scrape: mustParse(t, "sglang:token_usage{tp_rank=\"0\"} 0.25\nsglang:token_usage{tp_rank=\"1\"} 0.5\n"+
			"sglang:num_running_reqs{tp_rank=\"0\"} 3\nsglang:num_running_reqs{tp_rank=\"1\"} 4\nsglang:num_queue_reqs{tp_rank=\"0\"} 2\n", at),
			engines: "sglang", kv: f64(0.5), run: f64(7), queued: f64(2)},
		{name: "Dynamo frontend + TensorRT-LLM worker", scrape: mustParse(t, "dynamo_frontend_inflight_requests{model=\"m\"} 5\n"+
			"dynamo_frontend_queued_requests{model=\"m\"} 1\ntrtllm_request_success_total{model_name=\"m\",finished_reason=\"length\"} 9\n", at),
			engines: "dynamo,trtllm", run: f64(5), queued: f64(1)},
		{name: "unknown server", scrape: mustParse(t, "process_cpu_seconds_total 3\nhttp_requests_total 9\n", at), engines: "none"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.scrape.Reading()
			if got := FamiliesOf([]Reading{r}); got != tc.engines {
				t.Errorf("families = %q, want %q", got, tc.engines)
			}
			for _, c := range []struct {
				field     string
				got, want *float64
			}{{"kv", r.KVCacheUsage, tc.kv}, {"running", r.RunningRequests, tc.run}, {"queued", r.QueuedRequests, tc.queued}} {
				switch {
				case c.want == nil && c.got != nil:
					t.Errorf("%s = %v, want absent", c.field, *c.got)
				case c.want != nil && !near(c.got, *c.want):
					t.Errorf("%s = %v, want %v", c.field, c.got, *c.want)
				}
			}
		})
	}
	if got := FamiliesOf(nil); got != EnginesNone {
		t.Errorf("no readings: %q, want none", got)
	}
}

// TestWindowLlamaCpp: generated tokens of a window come from llamacpp:tokens_predicted_total
// (16 in the capture, 16 + 3×128 after three more requests), spec-decode counters where the
// build exports them mark the window llamacpp, not vllm.
func TestWindowLlamaCpp(t *testing.T) {
	before := loadSample(t, "llamacpp-metrics.txt")
	raw := strings.Replace(string(before.Raw), "llamacpp:tokens_predicted_total 16", "llamacpp:tokens_predicted_total 400", 1)
	raw = strings.Replace(raw, "llamacpp:requests_processing 0", "llamacpp:requests_processing 3", 1)
	after, err := Parse([]byte(raw), before.At.Add(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	w := Window(before, after)
	if !near(w.GenerationTokens, 384) || !near(w.AvgGenerationTokPerS, 192) {
		t.Fatalf("generation = %v (%v tok/s), want 384 (192)", w.GenerationTokens, w.AvgGenerationTokPerS)
	}
	if !near(w.RunningRequestsPeak, 3) || !near(w.KVCacheUsagePeak, 0.00311279) {
		t.Fatalf("running peak %v, kv peak %v", w.RunningRequestsPeak, w.KVCacheUsagePeak)
	}
	if w.Source != "none" {
		t.Fatalf("source = %q without spec counters", w.Source)
	}
	spec := "llamacpp:spec_decode_num_drafts_total 10\nllamacpp:spec_decode_num_draft_tokens_total 40\nllamacpp:spec_decode_num_accepted_tokens_total 30\n"
	w = Window(mustParse(t, "", before.At), mustParse(t, spec, after.At))
	if w.Source != "llamacpp" || !near(w.AcceptanceLength, 4) || !near(w.SpecAcceptRate, 0.75) {
		t.Fatalf("spec window = %s %v %v", w.Source, w.AcceptanceLength, w.SpecAcceptRate)
	}
}
