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

// llamaSweepCampaign measures the real llama-server (4 slots, one thread) at every
// concurrency of 1..10: past 4 slots a closed loop of C clients waits about (C − 4)/4 answers
// for a slot, so TTFT climbs by a large step per added client, well above the noise.
const llamaSweepCampaign = `version: 1
campaign: llama-knee
endpoints:
  llama: {url: BASE, model: tiny-llama}
defaults: {hardware: CPU, quant: F16, engine: llamacpp}
cells:
  - id: CELL
    workload: {shape: custom, input_tokens: 64, output_tokens: 64}
    requests_per_point: 3x
    warmup_requests: 8
    POINTS
`

// Issue 28 (must show): against a server nobody here wrote, a search's knee band contains the
// full sweep's knee. Both decide their points (requests_per_point {auto: {decide: ...}}) on the
// same rule, ttft_p50_ms < X: the sweep measures every concurrency of 1..10 until its verdict
// is known and reads its knee band off its decided verdicts as a search does (the highest
// decided meet below the lowest decided miss, up to one below that miss); the search bisects
// with decided probes. The test asserts that the two bands overlap and, when the sweep's band
// is one concurrency, that the search's band holds it.
//
// X is where the server's TTFT steps most: a first, short run measures c3..c8 (past four
// slots a closed loop queues inside the server) and X is the geometric mean of the TTFT p50s
// of the adjacent pair with the largest ratio, so each side is as far from X as this machine
// makes any. An X between two fixed points inside the queueing regime (c6 and c7, a step of
// about 1.5 ×; this test's first form) is not a question a shared machine answers the same way
// twice: with other tests running (load 13 on two cores), the sweep decided c7 meets after 343
// requests and the search, minutes later, decided c7 misses — the server itself had become
// slower, which no interval of either run covers. The widest step narrows that window; it
// does not close it.
//
// How sure that is: each band holds the true knee unless one of the two decided verdicts that
// bound it is wrong, each wrong in at most 5 % of points (measured ≤ 2.1 %, docs/statistics.md),
// so the bands can miss each other in at most about 4 × 5 % of runs against a stationary
// server; a factor of three from the limit is decided at the first looks, where such errors
// were not seen at all in the simulations (0.0 % at 10 % from the limit).
func TestRealLlamaServerSearchBandHoldsSweepKnee(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two campaigns against a real llama-server (~1 min)")
	}
	base := testkit.LlamaServer(t)
	work := t.TempDir()
	campaign := func(name, cells string) string {
		file := filepath.Join(work, name+".yaml")
		src := strings.Replace(strings.NewReplacer("BASE", base).Replace(llamaSweepCampaign), `  - id: CELL
    workload: {shape: custom, input_tokens: 64, output_tokens: 64}
    requests_per_point: 3x
    warmup_requests: 8
    POINTS
`, cells, 1)
		testkit.WriteFile(t, file, src)
		out := filepath.Join(work, name)
		if b, err := perfdagChild("run", file, "--out", out).CombinedOutput(); err != nil {
			t.Fatalf("run %s: %v\n%s", name, err, b)
		}
		return out
	}
	const top, maxPoint = 10, 120
	calib := campaign("calib", `  - id: calib
    workload: {shape: custom, input_tokens: 64, output_tokens: 64}
    requests_per_point: 4x
    warmup_requests: 8
    concurrencies: [3, 4, 5, 6, 7, 8]
`)
	p50 := map[int]float64{}
	for c := 3; c <= 8; c++ {
		var p schema.Point
		if _, err := campaigndir.ReadJSON(calib, campaigndir.Point("calib", schema.Conc(c)), &p); err != nil {
			t.Fatal(err)
		}
		if p.TTFT == nil || p.ErrorCount != 0 {
			t.Fatalf("calibration c%d: no TTFT or errors %v", c, p.ErrorsByClass)
		}
		p50[c] = p.TTFT.P50
	}
	step := 3
	for c := 4; c < 8; c++ {
		if p50[c+1]/p50[c] > p50[step+1]/p50[step] {
			step = c
		}
	}
	x := math.Sqrt(p50[step] * p50[step+1])
	rule := fmt.Sprintf("ttft_p50_ms < %.3f", x)
	var list []string
	for c := 1; c <= top; c++ {
		list = append(list, fmt.Sprint(c))
	}
	dir := campaign("decided", fmt.Sprintf(`  - id: sweep
    workload: {shape: custom, input_tokens: 64, output_tokens: 64}
    requests_per_point: {auto: {decide: "%[1]s", max: %[2]d}}
    warmup_requests: 8
    concurrencies: [%[3]s]
  - id: search
    workload: {shape: custom, input_tokens: 64, output_tokens: 64}
    requests_per_point: {auto: {decide: slo, max: %[2]d}}
    warmup_requests: 8
    search: {slo: "%[1]s", from: 1, to: %[4]d}
`, rule, maxPoint, strings.Join(list, ", "), top))
	// the sweep's band, read off its decided verdicts as a search reads its probes'
	var verdicts []string
	missAt := 0
	meets := map[int]bool{}
	for _, row := range atlasRows(t, dir) {
		if row.CellID != "sweep" {
			continue
		}
		d := row.Decision
		if d == nil {
			t.Fatalf("sweep c%d has no decision", row.Concurrency)
		}
		verdicts = append(verdicts, fmt.Sprintf("c%d %s (%d requests)", row.Concurrency, d.Verdict, row.NumPrompts))
		switch d.Verdict {
		case schema.VerdictMisses:
			if missAt == 0 || row.Concurrency < missAt {
				missAt = row.Concurrency
			}
		case schema.VerdictMeets:
			meets[row.Concurrency] = true
		}
	}
	sweepLo, sweepHi := 0, top
	if missAt > 0 {
		sweepHi = missAt - 1
	}
	for c := range meets {
		if (missAt == 0 || c < missAt) && c > sweepLo {
			sweepLo = c
		}
	}
	var r schema.SweepResult
	if _, err := campaigndir.ReadJSON(dir, campaigndir.Sweep("search"), &r); err != nil {
		t.Fatal(err)
	}
	var probes []string
	requests := 0
	for _, p := range r.Probes {
		probes = append(probes, fmt.Sprintf("c%d %s", p.Concurrency, p.Verdict))
	}
	for _, row := range atlasRows(t, dir) {
		if row.CellID == "search" {
			requests += row.NumPrompts
		}
	}
	t.Logf("calibration TTFT p50 %v ms, widest step c%d→c%d; %s\nsweep: %s → band c%d–c%d\nsearch: %s → knee c%d, band c%d–c%d, %d requests",
		p50, step, step+1, rule, strings.Join(verdicts, ", "), sweepLo, sweepHi, strings.Join(probes, ", "), r.Knee, r.KneeLo, r.KneeHi, requests)
	if max(sweepLo, r.KneeLo) > min(sweepHi, r.KneeHi) {
		t.Errorf("search band c%d–c%d and the full sweep's band c%d–c%d do not overlap", r.KneeLo, r.KneeHi, sweepLo, sweepHi)
	}
	if sweepLo == sweepHi && (sweepLo < r.KneeLo || sweepLo > r.KneeHi) {
		t.Errorf("the full sweep's knee c%d is outside the search's band c%d–c%d", sweepLo, r.KneeLo, r.KneeHi)
	}
	if len(r.Probes) > r.Bound {
		t.Errorf("%d probes > bound %d", len(r.Probes), r.Bound)
	}
}
