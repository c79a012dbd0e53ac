package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/analysis/history"
	"github.com/perfdag/perfdag/steps/testkit"
	"github.com/perfdag/perfdag/steps/testkit/laketest"
)

// Issue 31 items 1 and 2: `schedule --now` on the shipped nightly against the simulator it
// ships with is GREEN against a baseline of that simulator; the same campaign against a
// slower simulator (its current arm 20 % slower) is RED and runs on_red; `perfdag history`
// lists both manual fires with their verdicts, knees and series; and the history read back
// from a PostgreSQL lake the two runs were published to equals the one read from their
// directories. The state file is never written by a manual fire.
func TestScheduleNowAndHistory(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the nightly campaign three times (~40 s)")
	}
	src, err := os.ReadFile(filepath.Join("..", "..", "pipelines", "nightly-sweep.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	shipped := `sim: {deterministic: true, ttft_ms: 25, tpot_ms: 10, batch_tpot_ms: 1.1, seed: 11}`
	if !strings.Contains(string(src), shipped) {
		t.Fatal("the nightly campaign's current arm no longer has the simulator this test slows")
	}
	work := t.TempDir()
	nightly, slow := filepath.Join(work, "nightly.yaml"), filepath.Join(work, "nightly-slow.yaml")
	testkit.WriteFile(t, nightly, string(src))
	testkit.WriteFile(t, slow, strings.Replace(string(src), shipped, strings.Replace(shipped, "seed: 11}", "seed: 11, slowdown: 1.2}", 1), 1))
	reg, root := filepath.Join(work, "reg"), filepath.Join(work, "runs")
	// on_red runs in the run's campaign directory (PERFDAG_CAMPAIGN_DIR) and appends there
	alertsOf := func() []string {
		logs, _ := filepath.Glob(filepath.Join(root, "*", "nightly-alerts.log"))
		return logs
	}
	if out, err := perfdagChild("run", nightly, "--out", filepath.Join(work, "base")).CombinedOutput(); err != nil {
		t.Fatalf("baseline run: %v\n%s", err, out)
	}
	if out, err := perfdagChild("baseline", "record", filepath.Join(work, "base"), "--name", "nightly-aa-1k", "--cell", "aa-1k-current", "--registry", reg).CombinedOutput(); err != nil {
		t.Fatalf("record: %v\n%s", err, out)
	}
	fire := func(file string, wantCode int) schema.Verdict {
		t.Helper()
		cmd := perfdagChild("schedule", "--now", file, "--root", root, "--registry", reg, "--json")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		var vs []schema.Verdict
		if jerr := json.Unmarshal(out, &vs); jerr != nil || len(vs) != 1 || code != wantCode {
			t.Fatalf("schedule --now %s: exit %d (want %d), %v\n%s\n%s", filepath.Base(file), code, wantCode, jerr, out, stderr.String())
		}
		return vs[0]
	}
	green := fire(nightly, ExitOK)
	if green.Verdict != "GREEN" || green.Trigger != "manual" {
		t.Fatalf("the shipped nightly: %s (%s), want GREEN (manual)", green.Verdict, green.Trigger)
	}
	if logs := alertsOf(); len(logs) != 0 {
		t.Fatalf("on_red ran on a GREEN run: %v", logs)
	}
	red := fire(slow, ExitFailed)
	if red.Verdict != "RED" || red.Trigger != "manual" || red.OnRed != "ran ok" {
		t.Fatalf("the slower simulator: %s (%s), on_red %q; want RED (manual), on_red ran ok", red.Verdict, red.Trigger, red.OnRed)
	}
	if _, err := os.Stat(filepath.Join(root, ".schedule", "nightly-sweep.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a manual fire wrote the campaign's state file (watermark): %v", err)
	}

	fromDirs := readHistory(t, "history", nightly, "--root", root, "--json")
	if len(fromDirs.Campaigns) != 1 {
		t.Fatalf("history: %d campaigns", len(fromDirs.Campaigns))
	}
	h := fromDirs.Campaigns[0]
	var got []string
	for _, r := range h.Runs {
		got = append(got, r.Trigger+" "+r.Verdict)
	}
	if strings.Join(got, ", ") != "manual GREEN, manual RED" {
		t.Fatalf("history runs %v, want the manual GREEN then the manual RED", got)
	}
	logs := alertsOf()
	if len(logs) != 1 || filepath.Dir(logs[0]) != h.Runs[1].Dir {
		t.Fatalf("on_red's alert logs %v, want one, in the RED run's directory %s", logs, h.Runs[1].Dir)
	}
	if b, err := os.ReadFile(logs[0]); err != nil || strings.Count(string(b), "\n") != 1 || !strings.HasSuffix(string(b), " RED "+h.Runs[1].Dir+"\n") {
		t.Errorf("on_red's side effect %q (%v), want one line: time RED %s", b, err, h.Runs[1].Dir)
	}
	if h.Runs[1].OnRed != "ran ok" || h.Runs[0].Baseline == "" || h.Runs[0].Baseline != h.Runs[1].Baseline || len(h.Runs[0].Points) == 0 ||
		h.Runs[0].Versions.EngineVersion != "v0.11.0" || len(h.Runs[0].Versions.Models) != 1 || h.Runs[0].PerfdagVersion == "" ||
		h.Runs[0].Host == "" || len(h.Runs[0].Endpoints) != 2 || h.Runs[0].Endpoints[0].Model != "perfdag/sim-nightly" {
		t.Errorf("history runs lack what they recorded: %+v", h.Runs)
	}
	knee := series(h, "aa-1k-current", "", history.KneeMetric)
	if knee == nil || len(knee.Points) != 2 || knee.Points[0].Value != 37 || knee.Points[1].Value >= 37 || knee.Points[1].Run != h.Runs[1].ID {
		t.Errorf("knee series of aa-1k-current %+v, want c37 then a lower knee", knee)
	}
	if c1 := series(h, "aa-1k-current", "c1", "itl_p50_ms"); c1 == nil || len(c1.Points) != 2 || c1.Points[1].Value <= c1.Points[0].Value {
		t.Errorf("ITL p50 at c1 over the runs %+v, want two points, the slower run's higher", c1)
	}

	// both runs published to PostgreSQL read back as the same history
	pg := laketest.Postgres(t)
	t.Setenv("PGPASSWORD", pg.Password) // the children's environment: never on the command line
	for _, r := range h.Runs {
		cmd := perfdagChild("publish", r.Dir, "--no-strict", "--lake", pg.URLNoPassword())
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("publish %s: %v\n%s", r.Dir, err, out)
		}
	}
	fromLake := readHistory(t, "history", nightly, "--lake", pg.URLNoPassword(), "--json")
	if !reflect.DeepEqual(fromLake.Campaigns, fromDirs.Campaigns) {
		a, _ := json.MarshalIndent(fromDirs.Campaigns, "", " ")
		b, _ := json.MarshalIndent(fromLake.Campaigns, "", " ")
		t.Errorf("history from PostgreSQL differs from the directories':\n%s", firstDiff(string(a), string(b)))
	}
	if fromLake.Source != pg.URLNoPassword() || strings.Contains(fromLake.Source, pg.Password) {
		t.Errorf("lake source %q", fromLake.Source)
	}
}

func readHistory(t *testing.T, args ...string) history.Document {
	t.Helper()
	cmd := perfdagChild(args...)
	out, err := cmd.Output()
	var doc history.Document
	if err != nil || json.Unmarshal(out, &doc) != nil || doc.Schema != history.Schema {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			out = append(out, ee.Stderr...)
		}
		t.Fatalf("perfdag %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return doc
}

func series(h *history.History, cell, load, metric string) *history.Series {
	for i, s := range h.Series {
		if s.Cell == cell && s.Load == load && s.Metric == metric {
			return &h.Series[i]
		}
	}
	return nil
}

// firstDiff shows the first line where two texts differ, with a little context.
func firstDiff(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(la), len(lb)) {
		if la[i] != lb[i] {
			return "directories: " + la[i] + "\nlake:        " + lb[i]
		}
	}
	return "lengths differ"
}

// publishedCampaign publishes itself (its pipeline ends with strict-publish, to a SQLite lake
// beside the file) and is scheduled against the baseline ref.
const publishedCampaign = `version: 1
campaign: published
endpoints:
  main: {url: "sim://", model: sim-model, sim: {deterministic: true, seed: 7, ttft_ms: 20, tpot_ms: 2}}
defaults: {model: org/sim-model, engine: vllm, engine_version: v0.11.0, hardware: H100, quant: FP8, tensor_parallel: 1}
cells:
  - id: small
    workload: {shape: custom, input_tokens: 64, output_tokens: 16}
    concurrencies: [1, 4]
    requests_per_point: 40
publish: {lake: "sqlite://lake.db", strict: false}
schedule: {cron: "0 3 * * *", baseline: ref}
`

// A scheduled run whose own pipeline publishes it reaches the lake before its verdict exists;
// the scheduler publishes it again once judged, so the lake's history equals the directories'
// without a manual publish. The baseline's run, published by its pipeline but never judged,
// has no history row.
func TestScheduledRunPublishedWithItsVerdict(t *testing.T) {
	work := t.TempDir()
	file := filepath.Join(work, "published.yaml")
	testkit.WriteFile(t, file, publishedCampaign)
	reg, root := filepath.Join(work, "reg"), filepath.Join(work, "runs")
	if out, err := perfdagChild("run", file, "--out", filepath.Join(work, "base")).CombinedOutput(); err != nil {
		t.Fatalf("baseline run: %v\n%s", err, out)
	}
	if out, err := perfdagChild("baseline", "record", filepath.Join(work, "base"), "--name", "ref", "--registry", reg).CombinedOutput(); err != nil {
		t.Fatalf("record: %v\n%s", err, out)
	}
	out, err := perfdagChild("schedule", "--now", file, "--root", root, "--registry", reg).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "with its verdict (history_v1)") {
		t.Fatalf("schedule --now: %v\n%s", err, out)
	}
	fromDirs := readHistory(t, "history", file, "--root", root, "--json")
	fromLake := readHistory(t, "history", file, "--lake", "sqlite://"+filepath.Join(work, "lake.db"), "--json")
	if len(fromDirs.Campaigns) != 1 || len(fromDirs.Campaigns[0].Runs) != 1 || fromDirs.Campaigns[0].Runs[0].Verdict != "GREEN" {
		t.Fatalf("history from the directories: %+v", fromDirs.Campaigns)
	}
	if !reflect.DeepEqual(fromLake.Campaigns, fromDirs.Campaigns) {
		a, _ := json.MarshalIndent(fromDirs.Campaigns, "", " ")
		b, _ := json.MarshalIndent(fromLake.Campaigns, "", " ")
		t.Errorf("history from the lake differs from the directories':\n%s", firstDiff(string(a), string(b)))
	}

	// perfdag report DIR re-renders the judged run's report and publishes it again, so the run
	// stays a finished campaign: its history (from the directories and the lake) is unchanged
	// and nothing of it is left out of date
	dir := fromDirs.Campaigns[0].Runs[0].Dir
	rep := perfdagChild("report", dir)
	var stderr strings.Builder
	rep.Stderr = &stderr
	if out, err := rep.Output(); err != nil || strings.TrimSpace(string(out)) != campaigndir.Abs(dir, campaigndir.Report()) ||
		!strings.Contains(stderr.String(), "\nstrict-publish: published 8 rows to sqlite://") {
		t.Fatalf("report DIR: %v\n%s%s", err, out, stderr.String())
	}
	if st, err := perfdagChild("status", dir).CombinedOutput(); err != nil || strings.Contains(string(st), "stale") || !strings.Contains(string(st), "): 10 succeeded\n") {
		t.Errorf("status after report DIR: %v\n%s", err, st)
	}
	again := readHistory(t, "history", file, "--root", root, "--json")
	if !reflect.DeepEqual(again.Campaigns, fromDirs.Campaigns) {
		a, _ := json.MarshalIndent(fromDirs.Campaigns, "", " ")
		b, _ := json.MarshalIndent(again.Campaigns, "", " ")
		t.Errorf("history after report DIR differs:\n%s", firstDiff(string(a), string(b)))
	}
	if lake := readHistory(t, "history", file, "--lake", "sqlite://"+filepath.Join(work, "lake.db"), "--json"); !reflect.DeepEqual(lake.Campaigns, fromDirs.Campaigns) {
		t.Error("the lake's history after report DIR differs from the directories'")
	}
}

// TestScheduleNowSIGKILLRecordsFailedRun kills `schedule --now` while its campaign runs; the
// next --now records the lost manual fire as a FAILED manual run (history, verdict.json in its
// directory, on_red with its directory) before it runs, and the history lists both.
func TestScheduleNowSIGKILLRecordsFailedRun(t *testing.T) {
	work := t.TempDir()
	file, notified := filepath.Join(work, "killed.yaml"), filepath.Join(work, "notified.txt")
	testkit.WriteFile(t, file, fmt.Sprintf(killedCampaign, notified))
	root := filepath.Join(work, "runs")
	cmd := perfdagChild("schedule", "--now", file, "--root", root)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var started []string
	for deadline := time.Now().Add(2 * time.Minute); len(started) == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) { // a hang bound: the machine may be loaded
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatal("the manual fire never started")
		}
		started, _ = filepath.Glob(filepath.Join(root, "*-killed", "started"))
	}
	dir := filepath.Dir(started[0])
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	out, err := perfdagChild("schedule", "--now", file, "--root", root).CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != ExitFailed {
		t.Errorf("the next --now: %v, want exit %d (the lost fire is FAILED)\n%s", err, ExitFailed, out)
	}
	reason := fmt.Sprintf("manual fire stopped during the run (pid %d, started ", cmd.Process.Pid)
	if !strings.Contains(string(out), "(manual): FAILED") || !strings.Contains(string(out), reason) {
		t.Errorf("the next --now does not report the lost fire:\n%s", out)
	}
	if b, err := os.ReadFile(notified); err != nil || string(b) != "FAILED "+dir+"\n" {
		t.Errorf("on_red wrote %q (%v), want FAILED %s", b, err, dir)
	}
	doc := readHistory(t, "history", file, "--root", root, "--json")
	var got []string
	for _, r := range doc.Campaigns[0].Runs {
		got = append(got, r.Trigger+" "+r.Verdict)
	}
	if strings.Join(got, ", ") != "manual FAILED, manual NOT_COMPARED" || doc.Campaigns[0].Runs[0].Dir != dir ||
		!strings.HasPrefix(doc.Campaigns[0].Runs[0].Error, reason) {
		t.Errorf("history %v (first %+v), want the lost manual FAILED in %s, then the new run", got, doc.Campaigns[0].Runs[0], dir)
	}
	if _, err := os.Stat(filepath.Join(root, ".schedule", "killed.manual.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the lost fire's record stayed: %v", err)
	}
}

// TestHistoryUsage pins history's exit codes and messages for what a user gets wrong.
func TestHistoryUsage(t *testing.T) {
	work := t.TempDir()
	scheduled, plain := filepath.Join(work, "s.yaml"), filepath.Join(work, "p.yaml")
	testkit.WriteFile(t, scheduled, publishedCampaign)
	testkit.WriteFile(t, plain, strings.Replace(publishedCampaign, `schedule: {cron: "0 3 * * *", baseline: ref}`, "", 1))
	empty := filepath.Join(work, "empty")
	if err := os.MkdirAll(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (int, string) {
		var out bytes.Buffer
		a := &app{stdout: &out, stderr: &out}
		cmd := a.historyCmd()
		cmd.SetArgs(args)
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		cmd.SilenceUsage, cmd.SilenceErrors = true, true
		err := cmd.ExecuteContext(context.Background())
		if err != nil {
			out.WriteString(err.Error())
		}
		return codeOf(err), out.String()
	}
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{nil, ExitUsage, "name a campaign file with schedule:"},
		{[]string{filepath.Join(work, "missing")}, ExitUsage, "want a campaign file with schedule:, a state directory"},
		{[]string{empty}, ExitUsage, "not a scheduled campaign's runs"},
		{[]string{plain}, ExitUsage, "none of the files has a schedule: block"},
		{[]string{"--lake", "sqlite://" + filepath.Join(work, "lake.db")}, ExitUsage, "name the campaign by its FILE or --campaign"},
		{[]string{empty, "--lake", "sqlite://" + filepath.Join(work, "lake.db")}, ExitUsage, "not a directory"},
		{[]string{scheduled, "--lake", "sqlite://" + filepath.Join(work, "lake.db")}, ExitUsage, "nothing was ever published there"},
		{[]string{scheduled, "--campaign", "other"}, ExitUsage, "--campaign other: " + scheduled + " schedules published"},
		{[]string{scheduled, "--root", filepath.Join(work, "runs")}, ExitOK, "published: no run recorded in " + filepath.Join(work, "runs", ".schedule")},
	} {
		code, out := run(tc.args...)
		if code != tc.code || !strings.Contains(out, tc.says) {
			t.Errorf("history %v: exit %d, want %d saying %q:\n%s", tc.args, code, tc.code, tc.says, out)
		}
	}
}
