package main

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/testkit"
)

// llamaCampaign measures the real llama-server at BASE: 256-token prompts (o200k_base sizing),
// 128-token answers (max_tokens with ignore_eos, the body's defaults), c = 1, 2, 4.
const llamaCampaign = `version: 1
campaign: llama-real
kind: latency
endpoints:
  llama:
    url: BASE
    model: tiny-llama
    metrics_url: BASE/metrics
defaults: {hardware: CPU, quant: F16, engine: llamacpp, cache_mode: cold}
cells:
  - id: tiny
    workload: {shape: custom, input_tokens: 256, output_tokens: 128}
    concurrencies: [1, 2, 4]
    requests_per_point: 16
`

// within reports whether a is within frac of b.
func within(a, b, frac float64) bool { return b != 0 && math.Abs(a/b-1) <= frac }

// Issue 10: perfdag's numbers against a real llama.cpp server's own. At c = 1, 2, 4 (16
// requests each) no request fails, the server basis counts exactly max_tokens per answer (and
// the server's /metrics counter agrees), the client's ITL and output speed are within 3 % of the
// server's timings on the same definitions, TTFT − server prompt_ms is on every point, and the
// llama.cpp metric families fill the engine fields.
func TestRealLlamaServer(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a campaign against a real llama-server (~30 s)")
	}
	base := testkit.LlamaServer(t)
	work := t.TempDir()
	file := filepath.Join(work, "llama.yaml")
	testkit.WriteFile(t, file, strings.ReplaceAll(llamaCampaign, "BASE", base))
	dir := filepath.Join(work, "out")
	if out, err := perfdagChild("run", file, "--out", dir).CombinedOutput(); err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	const maxTokens, requests = 128, 16
	var table strings.Builder
	fmt.Fprintf(&table, "%-3s %9s %9s %9s %8s %8s %9s %9s %9s %9s %9s %7s\n", "c", "TTFT", "srvPrompt", "TTFT−srv",
		"ITL", "srvITL", "speed", "srvSpeed", "tps/user", "srvTPS/u", "out tok/s", "OSL")
	for _, c := range []int{1, 2, 4} {
		var p schema.Point
		if _, err := campaigndir.ReadJSON(dir, campaigndir.Point("tiny", c), &p); err != nil {
			t.Fatal(err)
		}
		if p.ErrorCount != 0 || p.RequestCount != requests || p.Status != "ok" {
			t.Errorf("c%d: %d/%d valid, errors %v, status %s", c, p.RequestCount, p.NumPrompts, p.ErrorsByClass, p.Status)
		}
		if p.TokenBasis != schema.TokenBasisServer || p.OSL == nil || p.OSL.Avg != maxTokens || p.OSL.Min != maxTokens || p.OSL.Max != maxTokens {
			t.Errorf("c%d: basis %s OSL %+v: want exactly %d on the server basis", c, p.TokenBasis, p.OSL, maxTokens)
		}
		if p.ServerTimedRequests != requests || p.ServerITLMs == nil || p.ITL == nil || p.ServerOutputSpeed == nil || p.TTFTMinusServerPromptMs == nil {
			t.Fatalf("c%d: %d requests carried timings; server ITL %+v, speed %v, TTFT−prompt %+v", c, p.ServerTimedRequests, p.ServerITLMs, p.ServerOutputSpeed, p.TTFTMinusServerPromptMs)
		}
		// Same definitions both sides: ITL = generation span / (n − 1), speed = Σ(n − 1) / Σ span.
		if !within(p.ITL.Avg, p.ServerITLMs.Avg, 0.03) {
			t.Errorf("c%d: ITL %.3f ms vs the server's %.3f ms: more than 3 %% apart", c, p.ITL.Avg, p.ServerITLMs.Avg)
		}
		if !within(p.AAOutputSpeed, *p.ServerOutputSpeed, 0.03) {
			t.Errorf("c%d: output speed %.1f tok/s vs the server's %.1f: more than 3 %% apart", c, p.AAOutputSpeed, *p.ServerOutputSpeed)
		}
		if p.MetricsFamilies != "llamacpp" {
			t.Errorf("c%d: metrics_families %q, want llamacpp", c, p.MetricsFamilies)
		}
		var w schema.SpecWindow
		if _, err := campaigndir.ReadJSON(dir, campaigndir.SpecWindow("tiny", c), &w); err != nil {
			t.Fatal(err)
		}
		if w.KVCacheUsagePeak == nil || w.RunningRequestsPeak == nil || *w.RunningRequestsPeak < 1 || w.GenerationTokens == nil {
			t.Errorf("c%d: engine fields kv %v running %v generated %v: want all from llamacpp: names", c, w.KVCacheUsagePeak, w.RunningRequestsPeak, w.GenerationTokens)
		} else if *w.GenerationTokens != maxTokens*requests {
			t.Errorf("c%d: the server's tokens_predicted_total rose by %v, want %d × %d", c, *w.GenerationTokens, requests, maxTokens)
		}
		fmt.Fprintf(&table, "%-3d %9.1f %9.1f %9.1f %8.3f %8.3f %9.1f %9.1f %9.1f %9.1f %9.1f %7.1f\n", c, p.TTFT.Avg, p.ServerPromptMs.Avg,
			p.TTFTMinusServerPromptMs.Avg, p.ITL.Avg, p.ServerITLMs.Avg, p.AAOutputSpeed, *p.ServerOutputSpeed, p.TPSUser.Avg,
			p.ServerOutputTokPerUser.Avg, p.OutputTokenThroughput, p.OSL.Avg)
	}
	t.Logf("client vs llama-server (means over 16 requests; ms, tok/s; speed = Σ(n−1)/Σ span, tps/user = mean 1/ITL):\n%s", table.String())
}
