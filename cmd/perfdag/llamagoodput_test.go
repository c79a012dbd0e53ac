package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/testkit"
)

// llamaGoodputCampaign measures the real llama-server at BASE at concurrency 4 (its four slots,
// one CPU thread: requests slow each other), 32 requests of 64 tokens; SLO is the cell's slo line.
const llamaGoodputCampaign = `version: 1
campaign: llama-goodput
kind: latency
endpoints:
  llama:
    url: BASE
    model: tiny-llama
defaults: {hardware: CPU, quant: F16, engine: llamacpp, cache_mode: cold}
cells:
  - id: tiny
    workload: {shape: custom, input_tokens: 256, output_tokens: 64}
    concurrencies: [4]
    requests_per_point: 32
SLO`

// handRecord is what the hand count reads of a records.jsonl line: its own decoding, not the
// statistics package's.
type handRecord struct {
	Phase         string `json:"phase"`
	StartNs       int64  `json:"start_ns"`
	FirstTokenNs  int64  `json:"first_token_ns"`
	LastContentNs int64  `json:"last_content_ns"`
	ErrorClass    string `json:"error_class"`
	Completion    *int   `json:"usage_completion_tokens"`
	Output        int    `json:"output_tokens"`
	Reasoning     int    `json:"reasoning_tokens"`
}

// handCount reads a point's records.jsonl line by line and counts, by the definitions of
// docs/measurement.md written out here, the profiling requests, the failed ones, the good ones
// under ttft/tpot/latency targets (ms) and the window of the valid ones (s).
func handCount(t *testing.T, path string, serverBasis bool, ttft, tpot, latency float64) (requests, failed, good int, windowS float64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	first, last := int64(math.MaxInt64), int64(0)
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var r handRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if r.Phase != "profiling" {
			continue
		}
		requests++
		if r.ErrorClass != "" || r.FirstTokenNs == 0 || r.LastContentNs < r.FirstTokenNs {
			failed++
			continue
		}
		first, last = min(first, r.StartNs), max(last, r.LastContentNs)
		tt := float64(r.FirstTokenNs-r.StartNs) / 1e6
		lat := float64(r.LastContentNs-r.StartNs) / 1e6
		n := r.Output + r.Reasoning
		if serverBasis && r.Completion != nil {
			n = *r.Completion
		}
		ok := tt <= ttft && lat <= latency
		if n >= 2 && (lat-tt)/float64(n-1) > tpot {
			ok = false
		}
		if ok {
			good++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return requests, failed, good, float64(last-first) / 1e9
}

// quantile is the q-quantile of xs by the nearest rank below (a threshold, not a statistic).
func quantile(xs []float64, q float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[int(q*float64(len(s)-1))]
}

// targets are a cell's slo put between its requests: TTFT and TPOT at their 75th percentile,
// latency at its 90th, so on a steady machine some requests meet all three and some do not.
func targets(t *testing.T, recs []schema.RequestRecord) (ttft, tpot, latency float64) {
	t.Helper()
	var ttfts, tpots, lats []float64
	for _, r := range recs {
		if r.Phase == "profiling" && r.ErrorClass == "" && r.UsageComplete != nil && *r.UsageComplete > 1 {
			tt, lat := float64(r.FirstTokenNs-r.StartNs)/1e6, float64(r.LastContentNs-r.StartNs)/1e6
			ttfts, lats = append(ttfts, tt), append(lats, lat)
			tpots = append(tpots, (lat-tt)/float64(*r.UsageComplete-1))
		}
	}
	if len(ttfts) < 16 {
		t.Fatalf("%d valid requests with usage", len(ttfts))
	}
	return quantile(ttfts, 0.75), quantile(tpots, 0.75), quantile(lats, 0.9)
}

// Issue 28: against the real llama-server, a point's goodput and SLO attainment equal a hand
// count from its records.jsonl. A first run without slo gives this machine's TTFT, TPOT and
// latency; the next declares targets between them (targets), so some requests meet them and
// some do not, and its point's goodput, attainment and counts are checked against a count of
// records.jsonl made here, line by line. The machine is shared: a run slowed or sped up as a
// whole can leave every request on one side, so up to three runs are made, each with targets
// from the one before, until one has both good and missed requests; every run's point must
// equal its hand count.
func TestRealLlamaServerGoodput(t *testing.T) {
	if testing.Short() {
		t.Skip("runs points against a real llama-server (~30 s)")
	}
	base := testkit.LlamaServer(t)
	work := t.TempDir()
	run := func(name, slo string) string {
		file := filepath.Join(work, name+".yaml")
		testkit.WriteFile(t, file, strings.ReplaceAll(strings.Replace(llamaGoodputCampaign, "SLO", slo, 1), "BASE", base))
		dir := filepath.Join(work, name)
		if out, err := perfdagChild("run", file, "--out", dir).CombinedOutput(); err != nil {
			t.Fatalf("run %s: %v\n%s", name, err, out)
		}
		return dir
	}
	dir := run("calibrate", "")
	var plain schema.Point
	if _, err := campaigndir.ReadJSON(dir, campaigndir.Point("tiny", schema.Conc(4)), &plain); err != nil {
		t.Fatal(err)
	}
	if plain.Goodput != nil || plain.SLOAttainment != nil || plain.GoodputReqS != nil {
		t.Fatalf("a cell without slo stated goodput: %+v", plain.Goodput)
	}
	mixed := false
	for attempt := 1; attempt <= 3 && !mixed; attempt++ {
		ttft, tpot, latency := targets(t, readRecords(t, dir, "tiny", 4))
		dir = run(fmt.Sprintf("slo%d", attempt), fmt.Sprintf("    slo: {ttft_ms: %.3f, tpot_ms: %.4f, latency_ms: %.3f}\n", ttft, tpot, latency))
		var p schema.Point
		if _, err := campaigndir.ReadJSON(dir, campaigndir.Point("tiny", schema.Conc(4)), &p); err != nil {
			t.Fatal(err)
		}
		g := p.Goodput
		if g == nil || p.SLOAttainment == nil || p.GoodputReqS == nil {
			t.Fatalf("the point states no goodput: %+v", g)
		}
		ttft, tpot, latency = *g.SLO.TTFTMs, *g.SLO.TPOTMs, *g.SLO.LatencyMs // as the file states them (rounded above)
		requests, failed, good, window := handCount(t, filepath.Join(dir, campaigndir.Records("tiny", schema.Conc(4))), p.TokenBasis == schema.TokenBasisServer, ttft, tpot, latency)
		t.Logf("run %d: llama-server c4, SLO TTFT <= %.1f ms, TPOT <= %.3f ms, latency <= %.1f ms: hand count %d good of %d (%d failed) over %.3f s; point: %d of %d, attainment %.4f, goodput %.4f req/s (request throughput %.4f)",
			attempt, ttft, tpot, latency, good, requests, failed, window, g.Good, g.Requests, *p.SLOAttainment, *p.GoodputReqS, p.RequestThroughput)
		if g.Requests != requests || g.Failed != failed || g.Good != good {
			t.Errorf("point: %d good of %d (%d failed); records.jsonl counted by hand: %d of %d (%d failed)", g.Good, g.Requests, g.Failed, good, requests, failed)
		}
		if want := float64(good) / float64(requests); *p.SLOAttainment != want {
			t.Errorf("slo_attainment %v, hand count %d/%d = %v", *p.SLOAttainment, good, requests, want)
		}
		if want := float64(good) / window; math.Abs(*p.GoodputReqS-want) > 1e-9*math.Max(want, 1) {
			t.Errorf("goodput_req_s %v, hand count %d / %.6f s = %v", *p.GoodputReqS, good, window, want)
		}
		mixed = good > 0 && good < requests
	}
	if !mixed {
		t.Error("three runs with targets between the requests left every request good or every one missed: the count tested nothing")
	}
}
