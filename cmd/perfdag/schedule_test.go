package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfdag/perfdag/engine/checkpoint"
	"github.com/perfdag/perfdag/engine/schedule"
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
	if Main([]string{"schedule", "--help"}, nil, io.Discard, io.Discard) != ExitOK {
		t.Skip("the schedule verb is not wired into root.go's commands() yet")
	}
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
	for deadline := time.Now().Add(20 * time.Second); len(started) == 0; time.Sleep(50 * time.Millisecond) {
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
	case <-time.After(15 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("scheduler did not stop within 15 s of SIGTERM\n%s", stderr.String())
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
	// Restarting within the same minute runs nothing: the slot was decided.
	if time.Now().Truncate(time.Minute).Equal(st.LastRun.Slot.Truncate(time.Minute)) {
		out, err := perfdagChild("schedule", "--once", file, "--root", root).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "nothing due now") {
			t.Errorf("restart: %v\n%s", err, out)
		}
	}
}
