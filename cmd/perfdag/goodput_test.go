package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// goodputCampaign searches the deterministic simulator of kneeCampaign (every request's TPOT is
// 10 + 1.1 (c − 1) ms) for the highest concurrency at which 99 % of requests meet a per-request
// TPOT target: the knee of slo_attainment >= 0.99 is the knee of the TPOT formula.
const goodputCampaign = `version: 1
campaign: knee
endpoints:
  main:
    url: sim://
    model: perfdag/sim
    sim: {deterministic: true, ttft_ms: 20, tpot_ms: 10, batch_tpot_ms: 1.1, seed: 3}
defaults: {engine: vllm, hardware: H100, quant: FP8, tensor_parallel: 1}
cells:
  - id: knee
    workload: {shape: custom, input_tokens: 100, output_tokens: 12}
    requests_per_point: 2x
    slo: {tpot_ms: %s, ttft_ms: 5000}
    search: {slo: "slo_attainment >= 0.99", from: 1, to: 32}
gates:
  - {id: good, on: run-shape, rule: "goodput_req_s > 0 && slo_attainment >= 0.99", severity: warn}
`

// TestSearchOnSLOAttainment: a search reads slo_attainment like any point field, finds the knee
// the per-request TPOT target puts there, and sweep_probes.json, point.json and the atlas row
// state the goodput: at the knee every request is good (goodput = request throughput), past it
// none is. A gate on run-shape reads them too: it passes on every probe up to the knee and
// warns, with the values it read, past it.
func TestSearchOnSLOAttainment(t *testing.T) {
	const k = 13
	target := fmt.Sprintf("%.2f", itlAt(k)+0.55)
	dir := t.TempDir()
	path := filepath.Join(dir, "knee.yaml")
	if err := os.WriteFile(path, fmt.Appendf(nil, goodputCampaign, target), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := perfdagChild("run", path, "--out", filepath.Join(dir, "out")).CombinedOutput()
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	dir = filepath.Join(dir, "out")
	r := readSweep(t, dir)
	if r.Knee != k || r.KneeUnknown != "" {
		t.Fatalf("knee c%d (%s), want c%d; probes %v", r.Knee, r.KneeUnknown, k, probeSet(r))
	}
	var knee schema.Point
	b, err := os.ReadFile(filepath.Join(dir, campaigndir.Point("knee", schema.Conc(k))))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &knee); err != nil {
		t.Fatal(err)
	}
	if knee.Goodput == nil || knee.Goodput.Good != knee.NumPrompts || knee.SLOAttainment == nil || *knee.SLOAttainment != 1 {
		t.Fatalf("knee point: goodput %+v, attainment %v; want every one of %d requests good", knee.Goodput, knee.SLOAttainment, knee.NumPrompts)
	}
	if knee.GoodputReqS == nil || *knee.GoodputReqS != knee.RequestThroughput {
		t.Errorf("knee goodput %v, want the request throughput %v (every request good)", knee.GoodputReqS, knee.RequestThroughput)
	}
	if r.KneeGoodputReqS == nil || *r.KneeGoodputReqS != *knee.GoodputReqS || r.KneeSLOAttainment == nil || *r.KneeSLOAttainment != 1 {
		t.Errorf("sweep_probes.json: knee goodput %v attainment %v, want the knee point's %v and 1", r.KneeGoodputReqS, r.KneeSLOAttainment, *knee.GoodputReqS)
	}
	if r.KneeRequestThroughput == nil || *r.KneeRequestThroughput != knee.RequestThroughput {
		t.Errorf("knee_request_throughput %v, want %v", r.KneeRequestThroughput, knee.RequestThroughput)
	}
	for _, p := range r.Probes {
		if p.SLOAttainment == nil || p.GoodputReqS == nil {
			t.Errorf("probe c%d has no attainment or goodput", p.Concurrency)
			continue
		}
		if want := p.Concurrency <= k; (*p.SLOAttainment == 1) != want || (*p.SLOAttainment == 0) == want || p.Met != want {
			t.Errorf("probe c%d: attainment %v, met %v; the formula says all good = %v (%s)", p.Concurrency, *p.SLOAttainment, p.Met, want, p.Values)
		}
	}
	for node, rec := range finalState(t, dir) {
		var c int
		if _, err := fmt.Sscanf(node, "run-shape[knee/c%d]", &c); err != nil {
			continue
		}
		if len(rec.Gates) != 1 || rec.Gates[0].Passed != (c <= k) || (c > k && !strings.Contains(rec.Gates[0].Value, "slo_attainment = 0")) {
			t.Errorf("%s: gate verdicts %+v, want one, passed = %v", node, rec.Gates, c <= k)
		}
	}
	f, err := os.Open(campaigndir.Abs(dir, campaigndir.Atlas()))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows := 0
	for sc := bufio.NewScanner(f); sc.Scan(); {
		var row schema.AtlasRow
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatal(err)
		}
		rows++
		if row.SLOAttainment == nil || row.GoodputReqS == nil || row.Goodput == nil || row.Goodput.SLO.TPOTMs == nil {
			t.Errorf("atlas row c%d lacks its goodput: %v %v %+v", row.Concurrency, row.SLOAttainment, row.GoodputReqS, row.Goodput)
		}
	}
	if rows != len(r.Probes) {
		t.Errorf("%d atlas rows, want one per probe (%d)", rows, len(r.Probes))
	}
}
