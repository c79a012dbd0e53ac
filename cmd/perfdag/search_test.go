package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// kneeCampaign searches a deterministic simulator whose mean ITL is tpot + batch_tpot × (c − 1)
// = 10 + 1.1 (c − 1) ms exactly, so the knee of itl_avg_ms <= X is known by formula.
const kneeCampaign = `version: 1
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
    search: {slo: "itl_avg_ms <= %s", from: 1, to: %d}
`

func itlAt(c int) float64 { return 10 + 1.1*float64(c-1) }

func readSweep(t *testing.T, dir string) schema.SweepResult {
	t.Helper()
	var r schema.SweepResult
	b, err := os.ReadFile(filepath.Join(dir, campaigndir.Sweep("knee")))
	if err != nil {
		t.Fatalf("read sweep.json: %v", err)
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func writeKnee(t *testing.T, dir, slo string, to int) string {
	t.Helper()
	path := filepath.Join(dir, "knee.yaml")
	if err := os.WriteFile(path, fmt.Appendf(nil, kneeCampaign, slo, to), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func probeSet(r schema.SweepResult) []int {
	var out []int
	for _, p := range r.Probes {
		out = append(out, p.Concurrency)
	}
	return out
}

// TestSearchFindsExactKnee: 10 random SLOs, each knee found exactly within ⌈log2(range)⌉ + 2
// probes, and the sweep's probes are the only points measured.
func TestSearchFindsExactKnee(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 4))
	const to = 64
	limit := bits.Len(uint(to-1)) + 2
	for i := range 10 {
		k := 1 + rng.IntN(to-1) // knee in [1, 63]
		x := itlAt(k) + 0.55    // halfway to the next point's ITL
		dir := t.TempDir()
		path := writeKnee(t, dir, fmt.Sprintf("%.2f", x), to)
		out, err := perfdagChild("run", path, "--out", filepath.Join(dir, "out")).CombinedOutput()
		if err != nil {
			t.Fatalf("run %d: %v\n%s", i, err, out)
		}
		r := readSweep(t, filepath.Join(dir, "out"))
		if r.Knee != k || r.KneeAtTop {
			t.Errorf("SLO itl_avg_ms <= %.2f: knee c%d (at top %v), want c%d; probes %v", x, r.Knee, r.KneeAtTop, k, probeSet(r))
		}
		if len(r.Probes) > limit || r.Bound != limit {
			t.Errorf("SLO %.2f: %d probes (bound %d), want at most %d", x, len(r.Probes), r.Bound, limit)
		}
		for _, p := range r.Probes {
			if p.Met != (itlAt(p.Concurrency) <= x) {
				t.Errorf("SLO %.2f: probe c%d met=%v, formula says %v (%s)", x, p.Concurrency, p.Met, !p.Met, p.Values)
			}
		}
		t.Logf("SLO itl_avg_ms <= %.2f: knee c%d in %d probes %v", x, r.Knee, len(r.Probes), probeSet(r))
	}
}

// TestSearchEditReusesProbes: tightening the SLO re-uses every probe the new search visits
// that the old one measured, and measures only the rest.
func TestSearchEditReusesProbes(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	first := writeKnee(t, dir, fmt.Sprintf("%.2f", itlAt(37)+0.55), 64)
	if b, err := perfdagChild("run", first, "--out", out).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	before := probeSet(readSweep(t, out))
	second := writeKnee(t, dir, fmt.Sprintf("%.2f", itlAt(33)+0.55), 64)
	b, err := perfdagChild("run", second, "--out", out, "--json").CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	after := readSweep(t, out)
	if after.Knee != 33 {
		t.Fatalf("knee after the edit c%d, want c33", after.Knee)
	}
	var sum struct {
		Nodes []struct{ Node, Outcome string } `json:"nodes"`
	}
	if i := bytes.IndexByte(b, '{'); i >= 0 {
		_ = json.Unmarshal(b[i:], &sum)
	}
	ran := map[string]string{}
	for _, n := range sum.Nodes {
		ran[n.Node] = n.Outcome
	}
	for _, c := range probeSet(after) {
		id := fmt.Sprintf("run-shape[knee/c%d]", c)
		want := "ran"
		if slices.Contains(before, c) {
			want = "reused"
		}
		if ran[id] != want {
			t.Errorf("%s: %q, want %q (first search probed %v)", id, ran[id], want, before)
		}
	}
}

// TestSearchKilledResumesToSameAnswer: random searches SIGKILLed at random moments, resumed
// until done, end with the same knee and probes as an uninterrupted search.
func TestSearchKilledResumesToSameAnswer(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	kills := 0
	for trial := range 6 {
		to := 16 + rng.IntN(48)
		k := 1 + rng.IntN(to-1)
		slo := fmt.Sprintf("%.2f", itlAt(k)+0.55)
		ref := t.TempDir()
		refPath := writeKnee(t, ref, slo, to)
		if b, err := perfdagChild("run", refPath, "--out", filepath.Join(ref, "out")).CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, b)
		}
		want := readSweep(t, filepath.Join(ref, "out"))
		dir := t.TempDir()
		path := writeKnee(t, dir, slo, to)
		out := filepath.Join(dir, "out")
		for attempt := 0; ; attempt++ {
			cmd := perfdagChild("run", path, "--out", out)
			var buf bytes.Buffer
			cmd.Stdout, cmd.Stderr = &buf, &buf
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			killed := false
			if attempt < 4 {
				select {
				case <-done:
				case <-time.After(time.Duration(20+rng.IntN(200)) * time.Millisecond):
					_ = cmd.Process.Signal(syscall.SIGKILL)
					<-done
					killed = true
					kills++
				}
			} else if err := <-done; err != nil {
				t.Fatalf("trial %d final run: %v\n%s", trial, err, buf.String())
			}
			if !killed {
				break
			}
		}
		got := readSweep(t, out)
		if got.Knee != want.Knee || !slices.Equal(probeSet(got), probeSet(want)) {
			t.Errorf("trial %d (SLO %s, to %d): knee c%d probes %v after kills, uninterrupted c%d %v",
				trial, slo, to, got.Knee, probeSet(got), want.Knee, probeSet(want))
		}
	}
	if kills == 0 {
		t.Fatalf("no run was killed: the test proved nothing")
	}
	t.Logf("%d SIGKILLs over 6 trials", kills)
}

// TestStopWhenSkipsTheRest: a list sweep stops once its rule holds; the rest is recorded as
// skipped with the reason and never measured.
func TestStopWhenSkipsTheRest(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "list.yaml")
	src := `version: 1
campaign: list
endpoints:
  main:
    url: sim://
    model: perfdag/sim
    sim: {deterministic: true, ttft_ms: 20, tpot_ms: 10, batch_tpot_ms: 1.1, seed: 3}
cells:
  - id: knee
    workload: {shape: custom, input_tokens: 100, output_tokens: 12}
    concurrencies: [1, 2, 4, 8, 16, 32]
    requests_per_point: 2x
    stop_when: "itl_avg_ms > 15"
`
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if b, err := perfdagChild("run", path, "--out", out).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	r := readSweep(t, out)
	// ITL 10, 11.1, 13.3, 17.7 ms: the rule first holds after c8
	if !slices.Equal(probeSet(r), []int{1, 2, 4, 8}) || !slices.Equal(r.Skipped, []schema.Load{schema.Conc(16), schema.Conc(32)}) || r.StopReason == "" {
		t.Fatalf("probes %v skipped %v reason %q, want 1 2 4 8 / 16 32 with a reason", probeSet(r), r.Skipped, r.StopReason)
	}
	recs := finalState(t, out)
	if recs["run-shape[knee/c16]"] != nil || recs["run-shape[knee/c8]"] == nil {
		t.Fatalf("c16 measured or c8 not: %v", recs)
	}
}
