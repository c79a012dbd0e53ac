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

// llamaRangeCampaign finds the real llama-server's operating range with sweep: auto: c1, the
// saturating c8 (past its 4 slots), then three constant-arrival rates without a cap between
// their request throughputs, each point 20 × its rate requests (about 20 s of arrivals, so
// one late send on a busy machine moves its rate by a fraction of a percent).
const llamaRangeCampaign = `version: 1
campaign: llama-range
endpoints:
  llama: {url: BASE, model: tiny-llama}
defaults: {hardware: CPU, quant: F16, engine: llamacpp}
cells:
  - id: range
    workload: {shape: custom, input_tokens: 32, output_tokens: 16, arrival: constant}
    requests_per_point: 20x
    warmup_requests: 4
    sweep: {auto: {rates: 3, throughput_concurrency: 8}}
`

// TestRealLlamaServerRateSweep (issue 29 must-show): against the real llama-server a
// sweep: auto's rate points below saturation — asked less than the request throughput the
// sweep measured at its saturating point — are sent within 2 % of their asked rates and are
// never rate_short. The server's pace on this shared machine varies by half within a minute
// (c1 measured 17–33 req/s, c4 10–41 req/s in back-to-back runs at load 13–18), so a sweep
// whose saturating point came out slower than its synchronous one has no rate below
// saturation; the campaign is then run again, up to three times in all.
func TestRealLlamaServerRateSweep(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a rate sweep against a real llama-server (~2 min)")
	}
	base := testkit.LlamaServer(t)
	work := t.TempDir()
	file := filepath.Join(work, "range.yaml")
	testkit.WriteFile(t, file, strings.Replace(llamaRangeCampaign, "BASE", base, 1))
	for attempt := 1; attempt <= 3; attempt++ {
		out := filepath.Join(work, fmt.Sprintf("out%d", attempt))
		if b, err := perfdagChild("run", file, "--out", out).CombinedOutput(); err != nil {
			t.Fatalf("run: %v\n%s", err, b)
		}
		var sw schema.SweepResult
		if _, err := campaigndir.ReadJSON(out, campaigndir.Sweep("range"), &sw); err != nil || sw.Auto == nil {
			t.Fatalf("sweep_probes.json: %v (auto %v)", err, sw.Auto)
		}
		a := sw.Auto
		t.Logf("run %d: c1 %.2f req/s, c8 %.2f req/s, rates %v", attempt, a.SyncRequestRate, a.PeakRequestRate, a.Rates)
		below := 0
		for _, r := range a.Rates {
			var p schema.Point
			l := schema.RateAt(r, 0)
			if found, err := campaigndir.ReadJSON(out, campaigndir.Point("range", l), &p); err != nil || !found || p.OpenLoop == nil {
				t.Fatalf("%s: point.json found %v, %v, open loop %v", l.Key(), found, err, p.OpenLoop)
			}
			ol := p.OpenLoop
			off := ol.AchievedRate/r - 1
			t.Logf("  %s: sent %.4f/s (%+.2f %% of asked), done %.2f/s, peak %d in flight, rate_met %v, %d requests", l.Key(), ol.AchievedRate, 100*off,
				ol.CompletionRate, ol.InFlightPeak, ol.RateMet, ol.Sends)
			if r >= a.PeakRequestRate {
				continue // at or past saturation: the server falls behind, the sends need not
			}
			below++
			if math.Abs(off) > 0.02 {
				t.Errorf("%s below saturation (%.2f req/s): sent at %.4f/s, %+.2f %% off the asked rate", l.Key(), a.PeakRequestRate, ol.AchievedRate, 100*off)
			}
			if !ol.RateMet {
				t.Errorf("%s below saturation: rate_short: %s", l.Key(), ol.RateShort)
			}
		}
		if below > 0 {
			return
		}
	}
	t.Fatalf("in three sweeps the saturating point never served more requests per second than the synchronous one: no rate lay below saturation")
}
