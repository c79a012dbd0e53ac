package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/perfdag/perfdag/engine/checkpoint"
	"github.com/perfdag/perfdag/engine/schedule"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/analysis/baseline"
)

// longCampaign runs every minute; its one step marks that it started, then works for 30 s.
const longCampaign = `version: 1
campaign: long
endpoints:
  main: {url: "sim://", model: m}
cells: []
pipeline:
  - {id: work, kind: exec, with: {command: [sh, -c, 'touch "$PERFDAG_DIR/started"; sleep 30']}}
schedule: {cron: "* * * * *"}
`

// TestScheduleSIGTERM starts the long-running scheduler (its first slot is on time at once),
// sends SIGTERM while the campaign runs, and checks that the campaign stopped checkpointed
// (node interrupted), the scheduler exited 130 with the run in its history, and the slot is
// recorded so a restart does not run it again.
func TestScheduleSIGTERM(t *testing.T) {
	work := t.TempDir()
	file := filepath.Join(work, "long.yaml")
	if err := os.WriteFile(file, []byte(longCampaign), 0o644); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(work, "runs")
	var stderr bytes.Buffer
	cmd := perfdagChild("schedule", file, "--root", root)
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var started []string
	for deadline := time.Now().Add(2 * time.Minute); len(started) == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("the scheduled run never started\n%s", stderr.String())
		}
		started, _ = filepath.Glob(filepath.Join(root, "*-long", "started"))
	}
	dir := filepath.Dir(started[0])
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != ExitInterrupted {
			t.Errorf("scheduler exit: %v, want status %d\n%s", err, ExitInterrupted, stderr.String())
		}
	case <-time.After(time.Minute): // a hang bound; the machine may be loaded
		_ = cmd.Process.Kill()
		t.Fatalf("scheduler did not stop within a minute of SIGTERM\n%s", stderr.String())
	}
	if !strings.Contains(stderr.String(), "continue it with 'perfdag resume "+dir+"'") {
		t.Errorf("no resume hint in:\n%s", stderr.String())
	}
	recs := finalState(t, dir)
	if r := recs["work"]; r == nil || r.Status != checkpoint.Interrupted {
		t.Errorf("node work = %+v, want interrupted", r)
	}
	hist, err := os.ReadFile(filepath.Join(root, ".schedule", "history.jsonl"))
	if err != nil || !strings.Contains(string(hist), `"verdict":"INTERRUPTED"`) {
		t.Errorf("history %q (%v), want an INTERRUPTED line", hist, err)
	}
	st, found, err := schedule.ReadState(filepath.Join(root, ".schedule"), "long")
	if err != nil || !found || st.Running != nil || st.LastRun == nil || st.LastRun.Outcome != schedule.Interrupted {
		t.Fatalf("state after SIGTERM: %+v found=%v err=%v", st, found, err)
	}
	// A restart never runs the decided slot again; when it also began and ended within that
	// slot's minute (a loaded machine may take the restart into the next minute, whose slot
	// is then rightly due) it runs nothing at all.
	slot := st.LastRun.Slot.Truncate(time.Minute)
	if began := time.Now(); began.Truncate(time.Minute).Equal(slot) {
		out, err := perfdagChild("schedule", "--once", file, "--root", root).CombinedOutput()
		ended := time.Now()
		slotJSON, _ := json.Marshal(st.LastRun.Slot)
		after, _ := os.ReadFile(filepath.Join(root, ".schedule", "history.jsonl"))
		if n, was := bytes.Count(after, slotJSON), bytes.Count(hist, slotJSON); was == 0 || n != was {
			t.Errorf("restart recorded slot %s again (%d history lines name it, %d before):\n%s", slotJSON, n, was, out)
		}
		if ended.Truncate(time.Minute).Equal(slot) && (err != nil || !strings.Contains(string(out), "nothing due now")) {
			t.Errorf("restart within the slot's minute: %v\n%s", err, out)
		}
	}
}

// killedCampaign runs every minute. Its first run marks that it started and works for 30 s
// (exec: the sleep itself dies with a killed perfdag); later runs end at once, so a restart
// in the next minute does not wait on a new slot. on_red appends to the file named in %q.
const killedCampaign = `version: 1
campaign: killed
endpoints:
  main: {url: "sim://", model: m}
cells: []
pipeline:
  - {id: work, kind: exec, with: {command: [sh, -c, 'for f in "$PERFDAG_DIR"/../*/started; do [ -e "$f" ] && exit 0; done; touch "$PERFDAG_DIR/started"; exec sleep 30']}}
schedule:
  cron: "* * * * *"
  on_red: {command: [sh, -c, 'echo "$PERFDAG_VERDICT $PERFDAG_CAMPAIGN_DIR" >> "$0"', %q]}
`

// TestScheduleSIGKILLRecordsFailedRun kills a real scheduler with SIGKILL while its campaign
// runs, then restarts it: the lost slot becomes a FAILED history line naming the pid and the
// campaign directory, on_red runs, verdict.json lands in the directory, and a further restart
// records nothing twice.
func TestScheduleSIGKILLRecordsFailedRun(t *testing.T) {
	work := t.TempDir()
	file, notified := filepath.Join(work, "killed.yaml"), filepath.Join(work, "notified.txt")
	if err := os.WriteFile(file, fmt.Appendf(nil, killedCampaign, notified), 0o644); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(work, "runs")
	stateDir := filepath.Join(root, ".schedule")
	logf, err := os.Create(filepath.Join(work, "scheduler.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd := perfdagChild("schedule", file, "--root", root)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	log := func() string { b, _ := os.ReadFile(logf.Name()); return string(b) }
	var started []string
	for deadline := time.Now().Add(2 * time.Minute); len(started) == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("the scheduled run never started\n%s", log())
		}
		started, _ = filepath.Glob(filepath.Join(root, "*-killed", "started"))
	}
	dir := filepath.Dir(started[0])
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err == nil {
		t.Fatal("the killed scheduler exited cleanly")
	}
	st, found, err := schedule.ReadState(stateDir, "killed")
	if err != nil || !found || st.Running == nil || st.Running.PID != cmd.Process.Pid || st.Running.Dir != dir {
		t.Fatalf("state left by the killed scheduler: %+v found=%v err=%v; want running, pid %d, dir %s", st.Running, found, err, cmd.Process.Pid, dir)
	}

	reason := fmt.Sprintf("scheduler stopped during the run (pid %d, started ", cmd.Process.Pid)
	out, err := perfdagChild("schedule", "--once", file, "--root", root).CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != ExitFailed {
		t.Errorf("restart: %v, want exit %d", err, ExitFailed)
	}
	if !strings.Contains(string(out), "killed slot "+st.Running.Time.Format(time.RFC3339)+" (scheduled): FAILED") || !strings.Contains(string(out), reason) {
		t.Errorf("restart output does not report the lost run:\n%s", out)
	}
	hist, err := os.ReadFile(filepath.Join(stateDir, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []baseline.HistoryLine
	for _, l := range strings.Split(strings.TrimSpace(string(hist)), "\n") {
		var h baseline.HistoryLine
		if err := json.Unmarshal([]byte(l), &h); err != nil {
			t.Fatalf("history line %q: %v", l, err)
		}
		if h.Outcome == schedule.Failed {
			lines = append(lines, h)
		}
	}
	if len(lines) != 1 || lines[0].Verdict != baseline.VerdictFailed || lines[0].Dir != dir || !strings.HasPrefix(lines[0].Error, reason) ||
		lines[0].OnRed != "ran ok" || lines[0].Slot != st.Running.Time.Format(time.RFC3339) {
		t.Errorf("failed history lines %+v, want one FAILED line for %s with %q and on_red ran", lines, dir, reason)
	}
	if b, err := os.ReadFile(notified); err != nil || string(b) != "FAILED "+dir+"\n" {
		t.Errorf("on_red wrote %q (%v), want FAILED %s", b, err, dir)
	}
	if _, err := os.Stat(campaigndir.Abs(dir, campaigndir.Verdict())); err != nil {
		t.Errorf("no verdict in the lost run's directory: %v", err)
	}

	// Another restart records nothing twice (and a new minute's slot ends at once).
	if out, err := perfdagChild("schedule", "--once", file, "--root", root).CombinedOutput(); err != nil {
		t.Errorf("second restart: %v\n%s", err, out)
	}
	if hist2, _ := os.ReadFile(filepath.Join(stateDir, "history.jsonl")); strings.Count(string(hist2), `"outcome":"failed"`) != 1 {
		t.Errorf("history after the second restart:\n%s", hist2)
	}
}

// A tolerance on an unknown metric makes the campaign file invalid: schedule exits 3 as its
// help says (it exited 1, the code of a RED run), before anything is scheduled.
func TestScheduleInvalidToleranceExit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "badtol.yaml")
	src := "version: 1\ncampaign: badtol\nendpoints:\n  main: {url: \"sim://\", model: m}\ncells: []\n" +
		"schedule:\n  cron: \"0 3 * * 1\"\n  tolerances:\n    ttft: 8\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out := runVerb(t, func(a *app) *cobra.Command { return a.scheduleCmd() }, "--list", path)
	if code != ExitInvalid || !strings.Contains(out, "badtol.yaml:9:5: schedule.tolerances.ttft: unknown metric") {
		t.Fatalf("exit %d, want %d (invalid campaign file); output:\n%s", code, ExitInvalid, out)
	}
}
