package baseline

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfdag/perfdag/engine/schedule"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/exec"
)

func TestJudge(t *testing.T) {
	root := t.TempDir()
	reg := filepath.Join(root, "reg")
	base, slow, empty := filepath.Join(root, "base"), filepath.Join(root, "slow"), filepath.Join(root, "empty")
	writeCampaign(t, base, 1)
	writeCampaign(t, slow, 1.2) // latencies +20 %, throughput −16.7 %
	must(t, os.MkdirAll(empty, 0o755))
	must(t, os.WriteFile(campaigndir.Config(empty), []byte(fixtureConfig), 0o644))
	if _, err := Record(context.Background(), RecordRequest{Campaign: finished(t, base), Registry: reg, Name: "weekly"}); err != nil {
		t.Fatal(err)
	}
	ok := schedule.Run{Campaign: "weekly", Slot: time.Date(2026, 5, 19, 3, 0, 0, 0, time.UTC), Trigger: schedule.TriggerScheduled, Outcome: schedule.Succeeded}
	with := func(dir, outcome string) schedule.Run {
		r := ok
		r.Dir, r.Outcome = dir, outcome
		if outcome == schedule.Failed {
			r.Err, r.Error = errors.New("step failed"), "step failed"
		}
		if outcome == schedule.Interrupted {
			r.Reason = "scheduler stopping"
		}
		return r
	}
	cases := []struct {
		name    string
		run     schedule.Run
		base    string
		verdict string
		errHas  string
	}{
		{"same numbers", with(base, schedule.Succeeded), "weekly", Green, ""},
		{"degraded", with(slow, schedule.Succeeded), "weekly", Red, ""},
		{"failed run", with(slow, schedule.Failed), "weekly", VerdictFailed, "step failed"},
		{"interrupted", with(slow, schedule.Interrupted), "weekly", VerdictInterrupted, "scheduler stopping"},
		{"no baseline named", with(slow, schedule.Succeeded), "", VerdictNotCompared, ""},
		{"baseline not recorded", with(slow, schedule.Succeeded), "nightly", VerdictNoBaseline, `no baseline named "nightly"`},
		{"no atlas to diff", with(empty, schedule.Succeeded), "weekly", VerdictError, "has not aggregated yet"},
	}
	for _, tc := range cases {
		open := func(dir string) (campaigndir.Finished, error) { return finished(t, dir), nil }
		v := Judge(context.Background(), tc.run, reg, tc.base, nil, open)
		if v.Verdict != tc.verdict || !strings.Contains(v.Error, tc.errHas) {
			t.Errorf("%s: verdict %s error %q, want %s with %q", tc.name, v.Verdict, v.Error, tc.verdict, tc.errHas)
		}
		if v.Slot != "2026-05-19T03:00:00Z" || v.Schema != schema.SchemaVerdict {
			t.Errorf("%s: slot %q schema %q", tc.name, v.Slot, v.Schema)
		}
		if alarming := tc.verdict == Red || tc.verdict == VerdictFailed || tc.verdict == VerdictError; Alarming(v.Verdict) != alarming {
			t.Errorf("%s: Alarming(%s) = %v", tc.name, v.Verdict, !alarming)
		}
	}
}

func TestVerdictFilesAndOnRed(t *testing.T) {
	dir, state := t.TempDir(), t.TempDir()
	v := &schema.Verdict{Schema: schema.SchemaVerdict, Campaign: "weekly", Slot: "2026-05-19T03:00:00Z", Outcome: schedule.Succeeded, Verdict: Red,
		Diff: &schema.BaselineDiff{Baseline: "reg/inference/weekly/20260512T030000Z", Red: 3, WithinNoise: 2,
			Rows: []schema.DiffRow{{Metric: "ttft_p50_ms", Verdict: WithinNoise, Note: "within noise: ±5.00%",
				ChangePct: &schema.Interval{Lo: 4, Hi: 14, Method: MethodQuadrature, N: 10}}}}}
	path, err := WriteVerdict(dir, v)
	must(t, err)
	var back schema.Verdict
	b, err := os.ReadFile(path)
	must(t, err)
	must(t, json.Unmarshal(b, &back))
	if back.Verdict != Red || back.Diff.Red != 3 || back.Diff.WithinNoise != 2 || back.Diff.Rows[0].ChangePct == nil ||
		back.Diff.Rows[0].ChangePct.Hi != 14 || back.Diff.Rows[0].Note != "within noise: ±5.00%" {
		t.Errorf("verdict.json read back %+v", back)
	}

	now := time.Date(2026, 5, 19, 3, 10, 0, 0, time.UTC)
	must(t, AppendHistory(state, dir, now, v))
	must(t, AppendHistory(state, dir, now, v))
	h, err := os.ReadFile(filepath.Join(state, HistoryFile))
	must(t, err)
	lines := strings.Split(strings.TrimSpace(string(h)), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"verdict":"RED"`) || !strings.Contains(lines[0], `"red_rows":3`) ||
		!strings.Contains(lines[0], `"within_noise_rows":2`) {
		t.Errorf("history:\n%s", h)
	}

	// on_red gets the verdict and directories in its environment, runs in dir by default.
	spec := schema.ExecSpec{Command: []string{"sh", "-c", `echo "$PERFDAG_VERDICT|$PERFDAG_CAMPAIGN_DIR|$PERFDAG_VERDICT_FILE|$PERFDAG_CAMPAIGN|$TEAM" > notified.txt`},
		Env: map[string]string{"TEAM": "perf"}}
	c := &schema.Campaign{Campaign: "weekly"}
	must(t, RunOnRed(context.Background(), exec.RunSpec, spec, c, t.TempDir(), dir, v))
	got, err := os.ReadFile(filepath.Join(dir, "notified.txt"))
	must(t, err)
	want := "RED|" + dir + "|" + campaigndir.Abs(dir, campaigndir.Verdict()) + "|weekly|perf\n"
	if string(got) != want {
		t.Errorf("on_red saw %q, want %q", got, want)
	}
	if spec.Env["PERFDAG_VERDICT"] != "" {
		t.Error("RunOnRed changed the caller's env map")
	}
	failing := schema.ExecSpec{Command: []string{"sh", "-c", "exit 4"}}
	if err := RunOnRed(context.Background(), exec.RunSpec, failing, c, t.TempDir(), dir, v); err == nil || !strings.Contains(err.Error(), "exited with status 4") {
		t.Errorf("failing on_red: %v", err)
	}
	slow := schema.ExecSpec{Command: []string{"sleep", "5"}, Timeout: schema.Duration{Duration: 100 * time.Millisecond}}
	if err := RunOnRed(context.Background(), exec.RunSpec, slow, c, t.TempDir(), dir, v); err == nil || !strings.Contains(err.Error(), "timed out") {
		t.Errorf("slow on_red: %v", err)
	}
}
