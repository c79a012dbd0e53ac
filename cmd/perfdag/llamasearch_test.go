package main

import (
	"fmt"
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
    requests_per_point: COUNT
    warmup_requests: 8
    POINTS
`

// Issue 21: against a server nobody here wrote, a search for ttft_p50_ms < X agrees with a full
// sweep of the same range: the knee within one step. X is put halfway between the sweep's
// TTFT p50 at c6 and c7 (inside the queueing regime, where a step moves TTFT by a whole
// answer's share), so the question has an answer the sweep states.
func TestRealLlamaServerSearchAgreesWithSweep(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two campaigns against a real llama-server (~40 s)")
	}
	base := testkit.LlamaServer(t)
	work := t.TempDir()
	campaign := func(cell, points string, count ...string) string {
		file := filepath.Join(work, cell+".yaml")
		n := "3x"
		if len(count) > 0 {
			n = count[0]
		}
		src := strings.NewReplacer("BASE", base, "CELL", cell, "POINTS", points, "COUNT", n).Replace(llamaSweepCampaign)
		testkit.WriteFile(t, file, src)
		out := filepath.Join(work, cell)
		if b, err := perfdagChild("run", file, "--out", out).CombinedOutput(); err != nil {
			t.Fatalf("run %s: %v\n%s", cell, err, b)
		}
		return out
	}
	const top = 10
	sweepDir := campaign("sweep", "concurrencies: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]")
	ttft := map[int]float64{}
	for c := 1; c <= top; c++ {
		var p schema.Point
		if _, err := campaigndir.ReadJSON(sweepDir, campaigndir.Point("sweep", c), &p); err != nil {
			t.Fatal(err)
		}
		if p.TTFT == nil || p.ErrorCount != 0 {
			t.Fatalf("c%d: no TTFT or errors %v", c, p.ErrorsByClass)
		}
		ttft[c] = p.TTFT.P50
	}
	x := (ttft[6] + ttft[7]) / 2
	sweepKnee := 0 // the sweep's answer on the search's own rule: the highest c below the first miss
	for c := 1; c <= top && ttft[c] < x; c++ {
		sweepKnee = c
	}
	searchDir := campaign("search", fmt.Sprintf(`search: {slo: "ttft_p50_ms < %.3f", from: 1, to: %d}`, x, top))
	var r schema.SweepResult
	if _, err := campaigndir.ReadJSON(searchDir, campaigndir.Sweep("search"), &r); err != nil {
		t.Fatal(err)
	}
	var probes []string
	for _, p := range r.Probes {
		probes = append(probes, fmt.Sprintf("c%d:%s", p.Concurrency, p.Values))
	}
	var sweep []string
	for c := 1; c <= top; c++ {
		sweep = append(sweep, fmt.Sprintf("%.0f", ttft[c]))
	}
	t.Logf("sweep TTFT p50 (ms) c1..c%d: %s; X = %.1f ms; sweep knee c%d; search knee c%d in %d probes (bound %d) vs %d points: %s",
		top, strings.Join(sweep, " "), x, sweepKnee, r.Knee, len(r.Probes), r.Bound, top, strings.Join(probes, ", "))
	if d := r.Knee - sweepKnee; d < -1 || d > 1 {
		t.Errorf("search knee c%d, full sweep c%d: more than one step apart", r.Knee, sweepKnee)
	}
	if len(r.Probes) > r.Bound {
		t.Errorf("%d probes > bound %d", len(r.Probes), r.Bound)
	}

	// Issue 28: the same search with decided probes answers with a band that contains the
	// full sweep's knee (its probes near X may end undecided at their max)
	decidedDir := campaign("decided", fmt.Sprintf(`search: {slo: "ttft_p50_ms < %.3f", from: 1, to: %d}`, x, top), "{auto: {decide: slo, max: 300}}")
	var d schema.SweepResult
	if _, err := campaigndir.ReadJSON(decidedDir, campaigndir.Sweep("decided"), &d); err != nil {
		t.Fatal(err)
	}
	lo, hi := d.KneeBand()
	var verdicts []string
	for _, p := range d.Probes {
		verdicts = append(verdicts, fmt.Sprintf("c%d:%s", p.Concurrency, p.Verdict))
	}
	t.Logf("decided search: knee %s, %d probes (%s), %d requests against the sweep's %d",
		d.BandText(), len(d.Probes), strings.Join(verdicts, " "), d.MeasurementCost.RequestsSent, sweepRequests(t, sweepDir, top))
	if sweepKnee < lo || sweepKnee > hi || d.BandLevel != 0.95 {
		t.Errorf("decided search's band [%d, %d] (level %v) does not contain the full sweep's knee c%d", lo, hi, d.BandLevel, sweepKnee)
	}
}

// sweepRequests is what the full sweep sent, over its points' measurement costs.
func sweepRequests(t *testing.T, dir string, top int) int {
	t.Helper()
	n := 0
	for c := 1; c <= top; c++ {
		var p schema.Point
		if _, err := campaigndir.ReadJSON(dir, campaigndir.Point("sweep", c), &p); err != nil {
			t.Fatal(err)
		}
		if p.MeasurementCost != nil {
			n += p.MeasurementCost.RequestsSent
		}
	}
	return n
}
