package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// unstatedCampaign measures a simulator cell and imports an SGLang result whose file states no
// TTFT median (median_ttft_ms removed), each guarded by a gate on ttft_p50_ms.
const unstatedCampaign = `version: 1
campaign: unstated
kind: latency
endpoints:
  local: {url: "sim://", model: m, sim: {ttft_ms: 30, tpot_ms: 10, gpus: 1, seed: 7}}
defaults: {hardware: H100, quant: BF16, tensor_parallel: 1, parallel_strategy: TP, engine: vllm, cache_mode: warm}
cells:
  - id: measured
    workload: {shape: custom, input_tokens: 550, output_tokens: 16}
    concurrencies: [4]
    requests_per_point: 8
  - id: sglang
    engine: sglang
    workload: {shape: custom, input_tokens: 550, output_tokens: 16}
    concurrencies: [4]
    import: {format: sglang-bench, points: [{concurrency: 4, path: sglang-no-median.jsonl}]}
gates:
  - {id: fast, on: run-shape, rule: ttft_p50_ms < 1000, severity: fail}
  - {id: fast-import, on: import, rule: ttft_p50_ms < 1000, severity: SEVERITY}
`

// A gate reading a statistic the point does not state is not evaluated and says so: on the
// imported point without a TTFT p50 the warn gate warns ("not evaluated: ttft_p50_ms
// unstated", never a pass on a 0), and made fail-severity it refuses the campaign (exit 4,
// re-evaluated on the reused import). The measured point states its p50 and its gate passes.
func TestGateOnUnstatedStatistic(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a campaign twice")
	}
	work := t.TempDir()
	src, err := os.ReadFile("../../testdata/imports/sglang-c4.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	noMedian := strings.Replace(string(src), `"median_ttft_ms"`, `"x_median_ttft_ms"`, 1)
	if noMedian == string(src) {
		t.Fatal("the SGLang fixture states no median_ttft_ms to remove")
	}
	if err := os.WriteFile(filepath.Join(work, "sglang-no-median.jsonl"), []byte(noMedian), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(work, "c.yaml")
	dir := filepath.Join(work, "out")
	run := func(severity string) (int, string) {
		if err := os.WriteFile(file, []byte(strings.Replace(unstatedCampaign, "SEVERITY", severity, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := perfdagChild("run", file, "--out", dir)
		out, _ := cmd.CombinedOutput()
		return cmd.ProcessState.ExitCode(), string(out)
	}
	verdicts := func() map[string]gateVerdict {
		m := map[string]gateVerdict{}
		for node, gates := range statusVerdicts(t, dir) {
			for _, g := range gates {
				m[node+" "+g.Gate] = g
			}
		}
		return m
	}
	const why = "ttft_p50_ms < 1000 not evaluated: ttft_p50_ms unstated"

	code, out := run("warn")
	if code != ExitOK {
		t.Fatalf("run with a warn gate exited %d, want %d:\n%s", code, ExitOK, out)
	}
	v := verdicts()
	if g := v["run-shape[measured/c4] fast"]; !g.Passed || g.Unstated != nil {
		t.Errorf("the measured point's gate: %+v, want passed with its p50 stated", g)
	}
	if g := v["import[sglang/c4] fast-import"]; g.Passed || !slices.Equal(g.Unstated, []string{"ttft_p50_ms"}) || g.Error != "" {
		t.Errorf("the imported point's gate: %+v, want not passed, unstated [ttft_p50_ms]", g)
	}
	text, err := perfdagChild("status", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("status: %v\n%s", err, text)
	}
	if want := "gate fast-import (warn) warned on import[sglang/c4]: " + why; !strings.Contains(string(text), want) {
		t.Errorf("status lacks %q:\n%s", want, text)
	}

	code, out = run("fail")
	if code != ExitRefused {
		t.Fatalf("run with a fail gate exited %d, want %d:\n%s", code, ExitRefused, out)
	}
	if want := "gate fast-import (fail) failed on import[sglang/c4]: " + why; !strings.Contains(out, want) {
		t.Errorf("run output lacks %q:\n%s", want, out)
	}
	if g := verdicts()["import[sglang/c4] fast-import"]; g.Passed || !slices.Equal(g.Unstated, []string{"ttft_p50_ms"}) {
		t.Errorf("the reused import's fail gate: %+v, want not passed, unstated [ttft_p50_ms]", g)
	}
}

// gateVerdict is one gate verdict as `perfdag status --json` prints it.
type gateVerdict struct {
	Gate     string
	Passed   bool
	Error    string
	Unstated []string
}

// statusVerdicts reads a campaign directory's gate verdicts, by node, the way a script does:
// through `perfdag status DIR --json`.
func statusVerdicts(t *testing.T, dir string) map[string][]gateVerdict {
	t.Helper()
	out, err := perfdagChild("status", dir, "--json").Output()
	if err != nil {
		t.Fatalf("status: %v", err)
	}
	var st struct {
		Nodes []struct {
			Node  string
			Gates []gateVerdict
		}
	}
	if err := json.Unmarshal(out, &st); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	m := map[string][]gateVerdict{}
	for _, n := range st.Nodes {
		m[n.Node] = n.Gates
	}
	return m
}
