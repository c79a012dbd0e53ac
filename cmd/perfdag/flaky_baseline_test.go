package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/engine/plural"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/testkit"
)

// flakyCampaign is the flaky case on the built-in simulator: one cell at c1 and c4 with 400
// requests per point, the fewest at which a c4 point carries its p50 intervals (80 × the
// requests in flight, docs/statistics.md). SEED and SLOW vary.
const flakyCampaign = `version: 1
campaign: flaky
endpoints:
  main:
    url: sim://
    model: sim-model
    sim: {seed: SEED, ttft_ms: 20, tpot_ms: 2, slowdown: SLOW}
defaults: {model: org/sim-model, engine: vllm, engine_version: v0.11.0, hardware: H100, quant: FP8, tensor_parallel: 1}
cells:
  - id: small
    workload: {shape: custom, input_tokens: 64, output_tokens: 16}
    concurrencies: [1, 4]
    requests_per_point: 400
`

// TestFlakySimBaseline runs the flaky case for real, PERFDAG_FLAKY_REPEATS times (skipped
// without it: each repeat runs three campaigns, about a minute): two runs of the same
// simulated server (seeds 7 and 8) on this machine, the first recorded as the baseline and the
// second diffed against it, and the same server 20 % slower (slowdown 1.2) diffed against it
// too. No diff of the same server may be RED (a tail row without its interval is a NOTE), and
// every slower diff must be RED on a row that carries intervals. Rows judged on tolerance alone (the tails: a p95
// needs 2,000 requests for an interval) and what the tolerance-only rule would have said are
// counted in the log.
func TestFlakySimBaseline(t *testing.T) {
	repeats, _ := strconv.Atoi(os.Getenv("PERFDAG_FLAKY_REPEATS"))
	if repeats <= 0 {
		t.Skip("set PERFDAG_FLAKY_REPEATS=N to run the flaky case N times (about a minute each)")
	}
	work := t.TempDir()
	for name, v := range map[string][2]string{"same.yaml": {"7", "1"}, "other.yaml": {"8", "1"}, "slow.yaml": {"8", "1.2"}} {
		testkit.WriteFile(t, filepath.Join(work, name), strings.NewReplacer("SEED", v[0], "SLOW", v[1]).Replace(flakyCampaign))
	}
	reg := filepath.Join(work, "reg")
	var same, slow flakyCounts
	for i := range repeats {
		dirs := map[string]string{}
		for _, name := range []string{"same", "other", "slow"} {
			dirs[name] = filepath.Join(work, fmt.Sprintf("%s-%d", name, i))
			if out, err := perfdagChild("run", filepath.Join(work, name+".yaml"), "--out", dirs[name]).CombinedOutput(); err != nil {
				t.Fatalf("run %s: %v\n%s", name, err, out)
			}
		}
		ref := fmt.Sprintf("r%d", i)
		if out, err := perfdagChild("baseline", "record", dirs["same"], "--name", ref, "--registry", reg).CombinedOutput(); err != nil {
			t.Fatalf("record: %v\n%s", err, out)
		}
		same.add(t, diffJSON(t, reg, ref, dirs["other"]))
		slow.add(t, diffJSON(t, reg, ref, dirs["slow"]))
	}
	t.Logf("same server, %s: %s", plural.N(repeats, "repeat"), same)
	t.Logf("20 %% slower, %s: %s", plural.N(repeats, "repeat"), slow)
	if same.intervalRed != 0 || same.verdictRed != 0 {
		t.Errorf("same server: verdict RED in %d of %d diffs (rows with intervals in %d), want 0", same.verdictRed, repeats, same.intervalRed)
	}
	if slow.intervalRed != repeats {
		t.Errorf("20 %% slower: rows with intervals RED in %d of %d diffs, want all", slow.intervalRed, repeats)
	}
}

// flakyCounts tallies diffs: those with a RED row that carries intervals, those the tolerance
// alone would have made RED on such rows (RED or NOTE now), and those RED on rows without.
type flakyCounts struct{ diffs, intervalRed, toleranceRed, tailRed, noteRows, verdictRed int }

func (c *flakyCounts) add(t *testing.T, d *schema.BaselineDiff) {
	t.Helper()
	c.diffs++
	var ivRed, tolRed, tail bool
	for _, r := range d.Rows {
		switch {
		case r.Change == nil:
			tail = tail || r.Verdict == "RED"
		case r.Verdict == "RED":
			ivRed, tolRed = true, true
		case r.Verdict == "NOTE":
			tolRed = true
			c.noteRows++
		}
	}
	c.verdictRed += b2i(d.Verdict == "RED")
	c.intervalRed += b2i(ivRed)
	c.toleranceRed += b2i(tolRed)
	c.tailRed += b2i(tail)
}

func (c flakyCounts) String() string {
	return fmt.Sprintf("verdict RED in %d of %d diffs; rows with intervals RED in %d (tolerance alone: %d; %d NOTE rows); rows without an interval RED in %d",
		c.verdictRed, c.diffs, c.intervalRed, c.toleranceRed, c.noteRows, c.tailRed)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// diffJSON diffs dir against the baseline ref; exit 0 (GREEN) and 1 (RED) both give a diff.
func diffJSON(t *testing.T, reg, ref, dir string) *schema.BaselineDiff {
	t.Helper()
	out, err := perfdagChild("baseline", "diff", "--baseline", ref, "--current", dir, "--registry", reg, "--json").Output()
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == ExitFailed) {
		t.Fatalf("diff %s: %v\n%s", dir, err, out)
	}
	var d schema.BaselineDiff
	if err := json.Unmarshal(out, &d); err != nil {
		t.Fatalf("diff %s: %v\n%s", dir, err, out)
	}
	return &d
}
