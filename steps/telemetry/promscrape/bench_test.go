package promscrape

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// bigScrape builds a vLLM-like page with 8 data-parallel engines and a few hundred series, the
// size a real server exposes with histograms.
func bigScrape() []byte {
	var b strings.Builder
	for e := 0; e < 8; e++ {
		for _, c := range []string{"vllm:spec_decode_num_drafts_total", "vllm:spec_decode_num_draft_tokens_total", "vllm:spec_decode_num_accepted_tokens_total", "vllm:generation_tokens_total", "vllm:prefix_cache_hits_total", "vllm:prefix_cache_queries_total"} {
			fmt.Fprintf(&b, "%s{engine=\"%d\",model_name=\"m\"} %d\n", c, e, 1000*(e+1))
		}
		fmt.Fprintf(&b, "vllm:kv_cache_usage_perc{engine=\"%d\",model_name=\"m\"} 0.%d\n", e, e)
		fmt.Fprintf(&b, "vllm:num_requests_running{engine=\"%d\",model_name=\"m\"} %d\n", e, e)
		for i, le := range []string{"0.001", "0.005", "0.01", "0.02", "0.04", "0.06", "0.08", "0.1", "0.25", "0.5", "0.75", "1", "2.5", "5", "7.5", "10", "20", "40", "80", "+Inf"} {
			fmt.Fprintf(&b, "vllm:time_to_first_token_seconds_bucket{engine=\"%d\",le=\"%s\",model_name=\"m\"} %d\n", e, le, i*10)
		}
	}
	return []byte(b.String())
}

func BenchmarkParseVLLMSample(b *testing.B) {
	raw, err := os.ReadFile("testdata/vllm-metrics.txt")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if _, err := Parse(raw, time.Time{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParse8Engines(b *testing.B) {
	raw := bigScrape()
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if _, err := Parse(raw, time.Time{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWindow8Engines(b *testing.B) {
	s, err := Parse(bigScrape(), time.Unix(0, 0))
	if err != nil {
		b.Fatal(err)
	}
	after := *s
	after.At = time.Unix(30, 0)
	for b.Loop() {
		Window(s, &after, s.Reading())
	}
}
