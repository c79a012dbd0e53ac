package baseline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfdag/perfdag/engine/diag"
	"github.com/perfdag/perfdag/engine/schedule"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/exec"
)

// TestNewScheduled: a file without a schedule: block is not scheduled; a bad tolerance is
// refused at its key's position; every endpoint URL but sim:// ones is exclusive.
func TestNewScheduled(t *testing.T) {
	eps := map[string]schema.Endpoint{"a": {URL: "http://gpu-1:8000"}, "b": {URL: "sim://fast"}, "c": {URL: "https://gpu-2"}}
	positions := map[string][2]int{"schedule.tolerances.bogus_metric": {7, 5}, "schedule.tolerances.ttft_p50_ms": {8, 5}}
	position := func(key string) (int, int) { p := positions[key]; return p[0], p[1] }
	cases := []struct {
		name      string
		sched     *schema.Schedule
		exclusive []string
		diags     []string // "line:col" of each problem, in order
	}{
		{name: "no schedule: block"},
		{name: "scheduled", sched: &schema.Schedule{Cron: "0 3 * * 1", Baseline: "weekly", Tolerances: map[string]float64{"ttft_p50_ms": 0.1}},
			exclusive: []string{"http://gpu-1:8000", "https://gpu-2"}},
		{name: "bad tolerances", sched: &schema.Schedule{Cron: "0 3 * * 1", Tolerances: map[string]float64{"bogus_metric": 1, "ttft_p50_ms": -1}},
			diags: []string{"7:5", "8:5"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spec := &schema.Campaign{Campaign: "weekly", Endpoints: eps, Schedule: tc.sched}
			s, err := NewScheduled("pipelines/weekly.yaml", "pipelines", spec, position)
			if tc.diags != nil {
				var l diag.List
				if !errors.As(err, &l) || len(l) != len(tc.diags) {
					t.Fatalf("err = %v, want %d positioned problems", err, len(tc.diags))
				}
				for i, d := range l {
					if got := fmt.Sprintf("%d:%d", d.Line, d.Col); got != tc.diags[i] || d.File != "pipelines/weekly.yaml" {
						t.Errorf("problem %d at %s:%s, want %s: %v", i, d.File, got, tc.diags[i], d)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.sched == nil {
				if s != nil {
					t.Fatalf("a campaign without a schedule: block is scheduled: %+v", s)
				}
				return
			}
			got := slices.Sorted(slices.Values(s.Job.Exclusive))
			if !slices.Equal(got, tc.exclusive) {
				t.Errorf("exclusive = %v, want %v", got, tc.exclusive)
			}
			if !filepath.IsAbs(s.Job.File) || !strings.HasSuffix(s.Job.File, "pipelines/weekly.yaml") || s.Job.Name != "weekly" ||
				s.Job.Schedule.Cron != tc.sched.Cron || s.Tol["ttft_p50_ms"] != 0.1 || s.BaseDir != "pipelines" || s.Spec != spec {
				t.Errorf("scheduled = %+v", s)
			}
		})
	}
}

// TestHook: each finished run is judged, its verdict written into its campaign directory,
// on_red run when alarming (in the state directory for a run with no campaign directory; its
// failure warned and recorded), a history line appended, and the verdict reported and kept.
func TestHook(t *testing.T) {
	slot := time.Date(2026, 5, 19, 3, 0, 0, 0, time.UTC)
	notify := &schema.ExecSpec{Command: []string{"sh", "-c", `echo "$PERFDAG_VERDICT" > notified.txt`}}
	failing := &schema.ExecSpec{Command: []string{"sh", "-c", "exit 4"}}
	cases := []struct {
		name     string
		onRed    *schema.ExecSpec
		outcome  string
		noDir    bool
		verdict  string
		onRedOut string // v.OnRed ("" when on_red did not run)
		warned   bool
		red      bool // a succeeded run 20 % slower than the registered baseline
	}{
		{name: "red against the baseline: on_red", onRed: notify, outcome: schedule.Succeeded, red: true, verdict: Red, onRedOut: "ran ok"},
		{name: "not compared: no on_red", onRed: notify, outcome: schedule.Succeeded, verdict: VerdictNotCompared},
		{name: "failed: on_red", onRed: notify, outcome: schedule.Failed, verdict: VerdictFailed, onRedOut: "ran ok"},
		{name: "failed, no campaign directory: on_red in the state directory", onRed: notify, outcome: schedule.Failed, noDir: true,
			verdict: VerdictFailed, onRedOut: "ran ok"},
		{name: "failed, on_red fails", onRed: failing, outcome: schedule.Failed, verdict: VerdictFailed, onRedOut: "exited with status 4", warned: true},
		{name: "failed, no on_red", outcome: schedule.Failed, verdict: VerdictFailed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir, state, reg := t.TempDir(), t.TempDir(), t.TempDir()
			spec := &schema.Campaign{Campaign: "weekly", Schedule: &schema.Schedule{Cron: "0 3 * * 1", OnRed: tc.onRed}}
			if tc.red {
				base := filepath.Join(t.TempDir(), "base")
				writeCampaign(t, base, 1)
				dir = filepath.Join(t.TempDir(), "slow")
				writeCampaign(t, dir, 1.2)
				if _, err := Record(context.Background(), RecordRequest{Campaign: finished(t, base), Registry: reg, Name: "weekly"}); err != nil {
					t.Fatal(err)
				}
				spec.Schedule.Baseline = "weekly"
			}
			s, err := NewScheduled("weekly.yaml", t.TempDir(), spec, func(string) (int, int) { return 0, 0 })
			must(t, err)
			var (
				mu       sync.Mutex
				warns    []string
				reported []string
			)
			h := NewHook([]*Scheduled{s}, HookOptions{Registry: reg, StateDir: state, Exec: exec.RunSpec,
				Open: func(d string) (campaigndir.Finished, error) { return finished(t, d), nil },
				Warn: func(c string, err error) { mu.Lock(); warns = append(warns, c+": "+err.Error()); mu.Unlock() },
				Report: func(v *schema.Verdict, d string) {
					mu.Lock()
					reported = append(reported, v.Verdict+" "+d)
					mu.Unlock()
				}})
			r := schedule.Run{Campaign: "weekly", Slot: slot, Trigger: schedule.TriggerScheduled, Outcome: tc.outcome, Dir: dir}
			if tc.noDir {
				r.Dir = ""
			}
			h.AfterRun(context.Background(), r)

			vs := h.Verdicts()
			if len(vs) != 1 || vs[0].Verdict != tc.verdict || !strings.Contains(vs[0].OnRed, tc.onRedOut) || (tc.onRedOut == "") != (vs[0].OnRed == "") {
				t.Fatalf("verdicts = %+v, want one %s with on_red %q", vs, tc.verdict, tc.onRedOut)
			}
			if want := []string{tc.verdict + " " + r.Dir}; !slices.Equal(reported, want) {
				t.Errorf("reported %q, want %q", reported, want)
			}
			if (len(warns) > 0) != tc.warned {
				t.Errorf("warnings %q, want some: %v", warns, tc.warned)
			}
			hist, err := os.ReadFile(filepath.Join(state, HistoryFile))
			must(t, err)
			var line HistoryLine
			must(t, json.Unmarshal(hist, &line))
			if line.Verdict != tc.verdict || line.Dir != r.Dir || line.OnRed != vs[0].OnRed {
				t.Errorf("history line %+v", line)
			}
			b, err := os.ReadFile(campaigndir.Abs(dir, campaigndir.Verdict()))
			if tc.noDir {
				if err == nil {
					t.Error("a run with no campaign directory got a verdict.json")
				}
			} else {
				var back schema.Verdict
				must(t, err)
				must(t, json.Unmarshal(b, &back))
				if back.Verdict != tc.verdict || back.OnRed != vs[0].OnRed {
					t.Errorf("verdict.json %+v", back)
				}
			}
			notifiedIn := dir
			if tc.noDir {
				notifiedIn = state
			}
			_, err = os.Stat(filepath.Join(notifiedIn, "notified.txt"))
			if ran := err == nil; ran != (tc.onRedOut == "ran ok") {
				t.Errorf("on_red ran in %s: %v, want %v", notifiedIn, ran, tc.onRedOut == "ran ok")
			}
		})
	}
}
