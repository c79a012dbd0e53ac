package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/analysis/history"
	"github.com/perfdag/perfdag/steps/testkit"
)

// driftCampaign is a scheduled campaign on the deterministic simulator slowed by slowdown, with
// tolerances no run breaks against its baseline and the drift rule at 5 %.
func driftCampaign(slowdown float64) string {
	return fmt.Sprintf(`version: 1
campaign: drifty
kind: latency
endpoints:
  sim:
    url: sim://
    model: perfdag/sim-1
    sim: {deterministic: true, ttft_ms: 25, tpot_ms: 10, batch_tpot_ms: 1.1, seed: 11, slowdown: %g}
defaults: {hardware: H100, quant: FP8, tensor_parallel: 1, parallel_strategy: TP, engine: sim}
cells:
  - id: a
    workload: {shape: aa-1k}
    concurrencies: [1]
    requests_per_point: 2x
schedule:
  cron: "0 3 * * *"
  baseline: drifty-a
  tolerances: {drift: 5, ttft_p50_ms: 100, ttft_p95_ms: 100, ttft_p99_ms: 100, itl_p50_ms: 100, throughput_toks_per_s: 100, tps_per_user: 100, request_latency_p50_ms: 100}
  on_red:
    command: [sh, -c, 'echo "$PERFDAG_VERDICT" >> drift-alerts.log']
`, slowdown)
}

// TestDriftRuleTurnsARunRed: six runs of one simulator, then four each 3 % slower than the last
// (TTFT +3, +6, +9, +12 %), every one within its tolerances against the baseline: the drift
// rule turns the tenth RED — its change point starts at the seventh run — runs on_red once, and
// leaves every earlier verdict as it was; history --json marks the change at the seventh run.
func TestDriftRuleTurnsARunRed(t *testing.T) {
	if testing.Short() {
		t.Skip("fires a scheduled campaign ten times (~40 s)")
	}
	work := t.TempDir()
	file, reg, root := filepath.Join(work, "drifty.yaml"), filepath.Join(work, "reg"), filepath.Join(work, "runs")
	testkit.WriteFile(t, file, driftCampaign(1))
	if out, err := perfdagChild("run", file, "--out", filepath.Join(work, "base")).CombinedOutput(); err != nil {
		t.Fatalf("baseline run: %v\n%s", err, out)
	}
	if out, err := perfdagChild("baseline", "record", filepath.Join(work, "base"), "--name", "drifty-a", "--registry", reg).CombinedOutput(); err != nil {
		t.Fatalf("record: %v\n%s", err, out)
	}
	slowdowns := []float64{1, 1, 1, 1, 1, 1, 1.03, 1.06, 1.09, 1.12}
	var verdicts []schema.Verdict
	for i, s := range slowdowns {
		testkit.WriteFile(t, file, driftCampaign(s))
		cmd := perfdagChild("schedule", "--now", file, "--root", root, "--registry", reg, "--json")
		out, err := cmd.Output()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		var vs []schema.Verdict
		if jerr := json.Unmarshal(out, &vs); jerr != nil || len(vs) != 1 {
			t.Fatalf("run %d: %v\n%s", i+1, jerr, out)
		}
		want, wantCode := "GREEN", ExitOK
		if i == len(slowdowns)-1 {
			want, wantCode = "RED", ExitFailed
		}
		if vs[0].Verdict != want || code != wantCode {
			t.Fatalf("run %d (slowdown %g): %s exit %d, want %s exit %d; drift %+v", i+1, s, vs[0].Verdict, code, want, wantCode, vs[0].Drift)
		}
		verdicts = append(verdicts, vs[0])
	}
	doc := readHistory(t, "history", file, "--root", root, "--json")
	h := doc.Campaigns[0]
	if len(h.Runs) != len(slowdowns) {
		t.Fatalf("history holds %d runs, want %d", len(h.Runs), len(slowdowns))
	}
	last := verdicts[len(verdicts)-1]
	if last.Diff == nil || last.Diff.Red != 0 || last.OnRed != "ran ok" || len(last.Drift) == 0 {
		t.Fatalf("the RED run: diff red rows %v, on_red %q, drift %+v; want no red row, on_red ran, drift findings", last.Diff, last.OnRed, last.Drift)
	}
	for _, d := range last.Drift {
		if d.SinceDir != h.Runs[6].Dir || d.Runs != 4 || d.Pct <= 5 || d.PctLo <= 0 || d.Limit != 5 || !strings.HasPrefix(d.Metric, "ttft") {
			t.Errorf("drift finding %+v, want a TTFT change from the seventh run (%s), 4 runs, beyond 5 %%", d, h.Runs[6].Dir)
		}
	}
	// earlier verdicts are untouched: each run's verdict.json still says what it said
	for i, r := range h.Runs {
		var v schema.Verdict
		b, err := os.ReadFile(campaigndir.Abs(r.Dir, campaigndir.Verdict()))
		if err != nil || json.Unmarshal(b, &v) != nil {
			t.Fatalf("run %d verdict.json: %v", i+1, err)
		}
		if v.Verdict != verdicts[i].Verdict || len(v.Drift) != len(verdicts[i].Drift) || r.Verdict != v.Verdict {
			t.Errorf("run %d: verdict.json %s (%d drift), history %s; it was judged %s", i+1, v.Verdict, len(v.Drift), r.Verdict, verdicts[i].Verdict)
		}
	}
	if h.Runs[9].DriftChanges != len(last.Drift) || h.Runs[8].DriftChanges != 0 {
		t.Errorf("history drift_changes: run 9 %d, run 10 %d; want 0, %d", h.Runs[8].DriftChanges, h.Runs[9].DriftChanges, len(last.Drift))
	}
	var marked int
	for _, m := range h.Runs[6].Marks {
		if m.Kind == history.KindChangePoint && m.Worse {
			marked++
		}
	}
	if marked < len(last.Drift) {
		t.Errorf("history marks %d regressions at the seventh run, want at least the %d drift findings", marked, len(last.Drift))
	}
	logs, _ := filepath.Glob(filepath.Join(root, "*", "drift-alerts.log"))
	if len(logs) != 1 || filepath.Dir(logs[0]) != h.Runs[9].Dir {
		t.Fatalf("on_red alert logs %v, want one, in the tenth run's directory", logs)
	}
	if b, _ := os.ReadFile(logs[0]); string(b) != "RED\n" {
		t.Errorf("on_red wrote %q, want RED", b)
	}
}
