package webui

import (
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// searchCampaign searches 1..16 on the deterministic simulator (ITL 10 + 1.1 (c − 1) ms).
const searchCampaign = `version: 1
campaign: searched
endpoints:
  sim: {url: "sim://", model: m, sim: {deterministic: true, ttft_ms: 20, tpot_ms: 10, batch_tpot_ms: 1.1}}
defaults: {hardware: H100, tensor_parallel: 2}
cells:
  - id: knee
    workload: {shape: custom, input_tokens: 100, output_tokens: 12}
    requests_per_point: 3x
    search: {slo: "itl_avg_ms <= 20", from: 1, to: 16}
settle: {settle_s: 0}
`

// The campaign page shows each search's knee (with its band when probes were undecided), its
// probes, what it cost and what a fixed sweep of its range would have, and the campaign's cost.
func TestCampaignPageSearches(t *testing.T) {
	root := t.TempDir()
	dir := root + "/searched"
	runTiny(t, dir, func(string) string { return searchCampaign })
	var s schema.SweepResult
	if _, err := campaigndir.ReadJSON(dir, campaigndir.Sweep("knee"), &s); err != nil {
		t.Fatal(err)
	}
	ts := serve(t, Options{Roots: []string{root}})
	code, body := get(t, ts, "/c/searched/")
	if code != 200 {
		t.Fatalf("campaign page: %d\n%s", code, body)
	}
	row := searchRowOf(s)
	// the page escapes "+" as &#43;
	for _, want := range []string{"<h2>Searches</h2>", `<td class="knee">c10</td>`, `<td class="probes">c1&#43; c16- c8&#43; c12- c10&#43; c11-</td>`,
		"<td>" + spent(s.MeasurementCost.RequestsSent, s.MeasurementCost.GPUHours()) + "</td>", "≈ 408 requests",
		`title="estimate: every concurrency c1..c16 (16 points) at 3 × C requests each`,
		`<span id="cost"> · measuring took ` + thousands(s.MeasurementCost.RequestsSent) + " requests, "} {
		if !strings.Contains(body, want) {
			t.Errorf("the campaign page lacks %q", want)
		}
	}
	if row.Knee != "c10" || s.MeasurementCost.GPUSeconds == nil {
		t.Errorf("search %+v: want knee c10 and GPU-seconds known (tensor_parallel 2)", s)
	}
}

// A search with undecided probes shows its knee as a band, its undecided probes marked ~.
func TestSearchRowBand(t *testing.T) {
	h := 7200.0
	s := schema.SweepResult{Mode: schema.SweepSearch, Cell: "chat", From: 1, To: 16, Knee: 9, KneeLo: 8, KneeHi: 10, BandLevel: 0.95,
		Probes: []schema.SweepProbe{{Concurrency: 1, Met: true, Verdict: schema.VerdictMeets}, {Concurrency: 16, Verdict: schema.VerdictMisses},
			{Concurrency: 9, Met: true, Verdict: schema.VerdictUndecided}, {Concurrency: 20, NoEvidence: true}},
		MeasurementCost: &schema.CostTotal{Points: 3, RequestsSent: 1234, GPUSeconds: &h},
		FixedSweep:      &schema.FixedSweepCost{From: 1, To: 16, Points: 16, Requests: 5000, Basis: "b"}}
	r := searchRowOf(s)
	if r.Knee != "c9 (c8–c10 at 95 %)" || r.Probes != "c1+ c16- c9~ c20?" || r.Cost != "1,234 requests, 2 GPU-h" || r.Fixed != "≈ 5,000 requests, GPU-h unknown (c1..c16)" {
		t.Fatalf("row %+v", r)
	}
}
