package promscrape

import (
	"encoding/json"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/testkit"
)

func near(a *float64, want float64) bool {
	return a != nil && math.Abs(*a-want) < 1e-9*math.Max(1, math.Abs(want))
}

// TestWindowLiveSpecDecodeCapture is the hand check of reference/telemetry.md §1.2 on the live
// capture (§D): from the absolute counters (a server that had not started before the window),
// drafts 2,043,630, draft tokens 10,218,118, accepted 7,268,642 give
// acceptance length 1 + 7,268,642/2,043,630 = 4.5567 and accept rate 7,268,642/10,218,118 = 0.7113.
func TestWindowLiveSpecDecodeCapture(t *testing.T) {
	after := loadSample(t, "vllm-metrics.txt")
	before := mustParse(t, "", after.At.Add(-time.Minute))
	w := Window(before, after)
	if w.Source != "vllm" {
		t.Fatalf("source = %q", w.Source)
	}
	if !near(w.Drafts, 2043630) || !near(w.DraftTokens, 10218118) || !near(w.AcceptedTokens, 7268642) {
		t.Fatalf("deltas = %v %v %v", *w.Drafts, *w.DraftTokens, *w.AcceptedTokens)
	}
	if got := math.Round(*w.AcceptanceLength*1000) / 1000; got != 4.557 {
		t.Errorf("acceptance length = %v, want 4.557", *w.AcceptanceLength)
	}
	if got := math.Round(*w.SpecAcceptRate*1000) / 1000; got != 0.711 {
		t.Errorf("accept rate = %v, want 0.711", *w.SpecAcceptRate)
	}
}

// Two data-parallel engines; engine 1 restarts during the window (every counter of it resets).
const beforeDP = `# TYPE vllm:spec_decode_num_drafts_total counter
vllm:spec_decode_num_drafts_total{engine="0",model_name="m"} 1000
vllm:spec_decode_num_drafts_total{engine="1",model_name="m"} 2000
vllm:spec_decode_num_draft_tokens_total{engine="0",model_name="m"} 3000
vllm:spec_decode_num_draft_tokens_total{engine="1",model_name="m"} 6000
vllm:spec_decode_num_accepted_tokens_total{engine="0",model_name="m"} 2000
vllm:spec_decode_num_accepted_tokens_total{engine="1",model_name="m"} 4100
vllm:prefix_cache_hits_total{engine="0",model_name="m"} 100
vllm:prefix_cache_hits_total{engine="1",model_name="m"} 100
vllm:prefix_cache_queries_total{engine="0",model_name="m"} 1000
vllm:prefix_cache_queries_total{engine="1",model_name="m"} 1000
vllm:generation_tokens_total{engine="0",model_name="m"} 5000
vllm:generation_tokens_total{engine="1",model_name="m"} 7000
vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.01
vllm:kv_cache_usage_perc{engine="1",model_name="m"} 0.02
vllm:num_requests_running{engine="0",model_name="m"} 0
vllm:num_requests_running{engine="1",model_name="m"} 0
`

const afterDP = `vllm:spec_decode_num_drafts_total{engine="0",model_name="m"} 1500
vllm:spec_decode_num_drafts_total{engine="1",model_name="m"} 100
vllm:spec_decode_num_draft_tokens_total{engine="0",model_name="m"} 4500
vllm:spec_decode_num_draft_tokens_total{engine="1",model_name="m"} 300
vllm:spec_decode_num_accepted_tokens_total{engine="0",model_name="m"} 3000
vllm:spec_decode_num_accepted_tokens_total{engine="1",model_name="m"} 250
vllm:prefix_cache_hits_total{engine="0",model_name="m"} 700
vllm:prefix_cache_hits_total{engine="1",model_name="m"} 50
vllm:prefix_cache_queries_total{engine="0",model_name="m"} 2000
vllm:prefix_cache_queries_total{engine="1",model_name="m"} 300
vllm:generation_tokens_total{engine="0",model_name="m"} 8000
vllm:generation_tokens_total{engine="1",model_name="m"} 600
vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.05
vllm:kv_cache_usage_perc{engine="1",model_name="m"} 0.03
vllm:num_requests_running{engine="0",model_name="m"} 0
vllm:num_requests_running{engine="1",model_name="m"} 0
`

func TestWindowDataParallelWithReset(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	before := mustParse(t, beforeDP, t0)
	after := mustParse(t, afterDP, t0.Add(30*time.Second))
	samples := []Reading{
		mustParse(t, "vllm:kv_cache_usage_perc{engine=\"0\"} 0.8\nvllm:kv_cache_usage_perc{engine=\"1\"} 0.4\n"+
			"vllm:num_requests_running{engine=\"0\"} 12\nvllm:num_requests_running{engine=\"1\"} 12\n", t0.Add(10*time.Second)).Reading(),
		mustParse(t, "vllm:kv_cache_usage_perc{engine=\"0\"} 0.6\nvllm:kv_cache_usage_perc{engine=\"1\"} 0.5\n"+
			"vllm:num_requests_running{engine=\"0\"} 14\nvllm:num_requests_running{engine=\"1\"} 16\n", t0.Add(20*time.Second)).Reading(),
	}
	w := Window(before, after, samples...)
	w.Cell, w.Concurrency = "aa-1k", 32

	checks := []struct {
		field string
		got   *float64
		want  float64
	}{
		{"drafts", w.Drafts, 600},                                              // (1500-1000) + 100 (engine 1 reset)
		{"draft_tokens", w.DraftTokens, 1800},                                  // (4500-3000) + 300
		{"accepted_tokens", w.AcceptedTokens, 1250},                            // (3000-2000) + 250
		{"acceptance_length", w.AcceptanceLength, 1 + 1250.0/600},              // 3.0833
		{"spec_accept_rate", w.SpecAcceptRate, 1250.0 / 1800},                  // 0.6944
		{"prefix_cache_hit_rate_pre", w.PrefixCacheHitRatePre, 200.0 / 2000},   // 0.1
		{"prefix_cache_hit_rate_post", w.PrefixCacheHitRatePost, 750.0 / 2300}, // 0.3261
		{"prefix_cache_hit_rate", w.PrefixCacheHitRate, 650.0 / 1300},          // (600+50)/(1000+300) = 0.5
		{"kv_cache_usage_peak", w.KVCacheUsagePeak, 0.8},                       // busiest engine in sample 1
		{"num_requests_running_peak", w.RunningRequestsPeak, 30},               // 14+16 in sample 2
		{"generation_tokens", w.GenerationTokens, 3600},                        // (8000-5000) + 600
		{"avg_generation_throughput", w.AvgGenerationTokPerS, 120},             // 3600 / 30 s
	}
	for _, c := range checks {
		if !near(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.field, deref(c.got), c.want)
		}
	}
	if w.WindowS != 30 || w.Source != "vllm" || w.Schema != SpecWindowSchema {
		t.Errorf("window_s %v source %q schema %q", w.WindowS, w.Source, w.Schema)
	}
	golden(t, "window_dp.json", w)
}

func TestWindowNullsAndSGLang(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	tests := []struct {
		name          string
		before, after string
		samples       []string
		source        string
		al, rate      *float64
		drafts        *float64
	}{
		{
			name:   "spec off: no counters, all null",
			before: "vllm:generation_tokens_total 10\n", after: "vllm:generation_tokens_total 20\n",
			source: "none",
		},
		{
			name:   "spec on, no drafts in the window: zero drafts, null ratios",
			before: "vllm:spec_decode_num_drafts_total 5\nvllm:spec_decode_num_draft_tokens_total 15\nvllm:spec_decode_num_accepted_tokens_total 9\n",
			after:  "vllm:spec_decode_num_drafts_total 5\nvllm:spec_decode_num_draft_tokens_total 15\nvllm:spec_decode_num_accepted_tokens_total 9\n",
			source: "vllm", drafts: f64(0),
		},
		{
			name:   "early V1 without a drafts counter: rate only",
			before: "vllm:spec_decode_num_draft_tokens_total 100\nvllm:spec_decode_num_accepted_tokens_total 50\n",
			after:  "vllm:spec_decode_num_draft_tokens_total 300\nvllm:spec_decode_num_accepted_tokens_total 170\n",
			source: "vllm", rate: f64(120.0 / 200), // Δaccepted 120 / Δdraft tokens 200 = 0.6
		},
		{
			name:    "SGLang gauges averaged over the window's readings",
			before:  "sglang:spec_accept_length 9\n", // before the window: not averaged
			after:   "sglang:spec_accept_length{tp_rank=\"0\"} 3.0\nsglang:spec_accept_length{tp_rank=\"1\"} 3.2\nsglang:spec_accept_rate 0.7\n",
			samples: []string{"sglang:spec_accept_length 2.5\nsglang:spec_accept_rate 0.5\n", "sglang:spec_accept_length 2.9\nsglang:spec_accept_rate 0.6\n"},
			// length: (2.5 + 2.9 + mean(3.0, 3.2)=3.1) / 3 = 2.8333; rate: (0.5 + 0.6 + 0.7) / 3 = 0.6
			source: "sglang", al: f64(8.5 / 3), rate: f64(0.6),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var rs []Reading
			for _, s := range tc.samples {
				rs = append(rs, mustParse(t, s, t0.Add(time.Second)).Reading())
			}
			w := Window(mustParse(t, tc.before, t0), mustParse(t, tc.after, t0.Add(2*time.Second)), rs...)
			if w.Source != tc.source {
				t.Errorf("source = %q, want %q", w.Source, tc.source)
			}
			for _, c := range []struct {
				name      string
				got, want *float64
			}{{"acceptance_length", w.AcceptanceLength, tc.al}, {"spec_accept_rate", w.SpecAcceptRate, tc.rate}, {"drafts", w.Drafts, tc.drafts}} {
				if (c.want == nil) != (c.got == nil) || (c.want != nil && !near(c.got, *c.want)) {
					t.Errorf("%s = %v, want %v", c.name, deref(c.got), deref(c.want))
				}
			}
		})
	}
}

func TestWindowWithoutScrapes(t *testing.T) {
	w := Window(nil, nil, Reading{KVCacheUsage: f64(0.4)})
	if w.Source != "none" || w.Drafts != nil || w.GenerationTokens != nil || w.WindowS != 0 || !near(w.KVCacheUsagePeak, 0.4) {
		t.Fatalf("window = %+v", w)
	}
}

func deref(p *float64) any {
	if p == nil {
		return "null"
	}
	return *p
}

func golden(t *testing.T, name string, v schema.SpecWindow) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	testkit.Golden(t, filepath.Join("testdata", name), append(got, '\n'))
}
