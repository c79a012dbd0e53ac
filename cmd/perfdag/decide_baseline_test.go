package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/testkit"
)

// decidedCampaign is one cell at c1 and c4 on the virtual simulator with a lognormal TTFT
// (σ 0.1): TTFT and latency vary per request, ITL and throughput do not. SEED, SLOW and COUNT
// vary; the baseline is recorded from a fixed 4,000 requests a point.
const decidedCampaign = `version: 1
campaign: decided
endpoints:
  main:
    url: sim://
    model: sim-model
    sim: {deterministic: true, seed: SEED, ttft_ms: 20, tpot_ms: 2, ttft_sigma: 0.1, slowdown: SLOW}
defaults: {model: org/sim-model, engine: vllm, engine_version: v0.11.0, hardware: H100, quant: FP8, tensor_parallel: 1}
cells:
  - id: small
    workload: {shape: custom, input_tokens: 64, output_tokens: 16}
    concurrencies: [1, 4]
    requests_per_point: COUNT
schedule: {cron: "* * * * *", baseline: ref}
`

// fixedNeed is the fewest requests a fixed point needs before its diff can back every row it
// judges with an interval: a p95's interval needs 2,000 (docs/statistics.md), so below it the
// diff of ttft_p95_ms rests on the tolerance alone or says NOTE, never a verdict at 95 %.
const fixedNeed = 2000

// Issue 28: a scheduled run whose points decide against the baseline (requests_per_point
// {auto: {decide: baseline}}): perfdag schedule resolves the baseline's values into the run's
// frozen config.yaml (baseline_ref), every point measures until each judged change is known
// inside or beyond its tolerance, and the diff that judges the run takes those verdicts. The
// same server decides GREEN with fewer requests a point than a fixed point needs for the same
// confidence; the server 20 % slower decides RED at its first look; `perfdag run` of the frozen
// config.yaml measures the same decisions again.
func TestScheduleDecidesAgainstBaseline(t *testing.T) {
	work := t.TempDir()
	write := func(name, seed, slow, count string) string {
		p := filepath.Join(work, name)
		testkit.WriteFile(t, p, strings.NewReplacer("SEED", seed, "SLOW", slow, "COUNT", count).Replace(decidedCampaign))
		return p
	}
	base := write("base.yaml", "7", "1", "4000")
	same := write("same.yaml", "8", "1", "{auto: {decide: baseline, max: 4000}}")
	slow := write("slow.yaml", "8", "1.2", "{auto: {decide: baseline, max: 4000}}")
	reg := filepath.Join(work, "reg")
	if out, err := perfdagChild("run", base, "--out", filepath.Join(work, "base")).CombinedOutput(); err != nil {
		t.Fatalf("baseline run: %v\n%s", err, out)
	}
	if out, err := perfdagChild("baseline", "record", filepath.Join(work, "base"), "--name", "ref", "--registry", reg).CombinedOutput(); err != nil {
		t.Fatalf("record: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		file, verdict, decision string
		most                    func(c int) int
	}{
		{same, "GREEN", schema.VerdictMeets, func(int) int { return fixedNeed - 1 }},
		{slow, "RED", schema.VerdictMisses, func(c int) int { return schema.DecideFirstTurns * c }},
	} {
		root := filepath.Join(work, "runs-"+filepath.Base(tc.file))
		out, err := perfdagChild("schedule", "--once", tc.file, "--root", root, "--registry", reg, "--json").Output()
		var ee *exec.ExitError
		if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == ExitFailed) {
			t.Fatalf("schedule %s: %v\n%s", tc.file, err, out)
		}
		var vs []schema.Verdict
		if err := json.Unmarshal(out, &vs); err != nil || len(vs) != 1 || vs[0].Diff == nil {
			t.Fatalf("schedule %s: %v\n%s", tc.file, err, out)
		}
		v := vs[0]
		if v.Verdict != tc.verdict {
			t.Errorf("%s: verdict %s, want %s", filepath.Base(tc.file), v.Verdict, tc.verdict)
		}
		dirs, _ := filepath.Glob(filepath.Join(root, "2*"))
		if len(dirs) != 1 {
			t.Fatalf("%s: campaign directories %v", root, dirs)
		}
		frozen, err := os.ReadFile(campaigndir.Config(dirs[0]))
		if err != nil || !strings.Contains(string(frozen), "baseline_ref:") || !strings.Contains(string(frozen), "sha256: "+v.Diff.BaselineSHA256) {
			t.Fatalf("%s: frozen config.yaml has no baseline_ref of the baseline diffed against (%v)", filepath.Base(tc.file), err)
		}
		rows := atlasRows(t, dirs[0])
		for _, row := range rows {
			d := row.Decision
			if d == nil || d.Verdict != tc.decision || !strings.HasPrefix(d.Reference, "baseline ref sha256:") {
				t.Errorf("%s c%d: decision %+v, want %s against baseline ref", filepath.Base(tc.file), row.Concurrency, d, tc.decision)
				continue
			}
			if row.NumPrompts > tc.most(row.Concurrency) {
				t.Errorf("%s c%d: %d requests, want at most %d", filepath.Base(tc.file), row.Concurrency, row.NumPrompts, tc.most(row.Concurrency))
			}
			t.Logf("%s c%d: %s after %d requests (%d looks)", filepath.Base(tc.file), row.Concurrency, d.Verdict, row.NumPrompts, d.Looks)
		}
		// every decided clause is its diff row's verdict: inside is never RED, beyond always is
		decided := 0
		for _, r := range v.Diff.Rows {
			switch {
			case strings.HasPrefix(r.Note, "decided inside"):
				decided++
				if r.Verdict != "GREEN" {
					t.Errorf("%s c%d %s: decided inside but %s", filepath.Base(tc.file), r.Concurrency, r.Metric, r.Verdict)
				}
			case strings.HasPrefix(r.Note, "decided beyond"):
				decided++
				if r.Verdict != "RED" {
					t.Errorf("%s c%d %s: decided beyond but %s", filepath.Base(tc.file), r.Concurrency, r.Metric, r.Verdict)
				}
			}
			if tc.verdict == "GREEN" && r.Verdict == "RED" {
				t.Errorf("same server: row c%d %s RED (%s)", r.Concurrency, r.Metric, r.Note)
			}
		}
		if decided == 0 {
			t.Errorf("%s: no diff row took a decision", filepath.Base(tc.file))
		}
		if tc.verdict != "GREEN" {
			continue
		}
		// the frozen file measures the same points again, outside the scheduler
		again := filepath.Join(work, "again")
		if out, err := perfdagChild("run", campaigndir.Config(dirs[0]), "--out", again).CombinedOutput(); err != nil {
			t.Fatalf("run the frozen config: %v\n%s", err, out)
		}
		for i, row := range atlasRows(t, again) {
			if row.NumPrompts != rows[i].NumPrompts || row.Decision == nil || row.Decision.Verdict != rows[i].Decision.Verdict {
				t.Errorf("rerun c%d: %d requests, decision %+v; the scheduled run had %d, %s", row.Concurrency, row.NumPrompts, row.Decision, rows[i].NumPrompts, rows[i].Decision.Verdict)
			}
		}
	}
}
