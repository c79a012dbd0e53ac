package main

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfdag/perfdag/engine/checkpoint"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// crashCampaign is a campaign of exec steps; every step appends its node id to ran.log when
// its work is done, so the test can see exactly what ran.
const crashCampaign = `version: 1
campaign: crash
endpoints:
  main: {url: "sim://", model: m}
cells:
  - {id: a, workload: {}, concurrencies: [1, 2, 4]}
  - {id: b, workload: {}, concurrencies: [1, 2, 4]}
  - {id: c, workload: {}, concurrencies: [1, 2, 4]}
pipeline:
  - id: deploy
    kind: exec
    with: {command: [sh, -c, 'sleep 0.02; echo "$PERFDAG_NODE" >> "$PERFDAG_DIR/ran.log"; echo "{\"deployed\": 1}"']}
  - id: measure
    kind: exec
    foreach: point
    needs: [deploy]
    with: {command: [sh, -c, 'sleep 0.03; echo "$PERFDAG_NODE" >> "$PERFDAG_DIR/ran.log"; echo "{\"value\": $((PERFDAG_CONCURRENCY * 7))}"']}
  - id: summarize
    kind: exec
    foreach: cell
    needs: [measure]
    with: {command: [sh, -c, 'sleep 0.01; echo "$PERFDAG_NODE" >> "$PERFDAG_DIR/ran.log"; echo "{\"cell\": \"$PERFDAG_CELL\"}"']}
  - id: final
    kind: exec
    needs: [summarize]
    with: {command: [sh, -c, 'echo "$PERFDAG_NODE" >> "$PERFDAG_DIR/ran.log"; echo "{\"done\": true}"']}
`

func perfdagChild(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	return cmd
}

func finalState(t *testing.T, dir string) map[string]*checkpoint.Record {
	t.Helper()
	recs, err := checkpoint.ReadOnly(dir).LoadAll()
	if err != nil {
		t.Fatalf("read checkpoints of %s: %v", dir, err)
	}
	return recs
}

// waitRunning waits until a child campaign has started node, failing (and killing the child)
// after timeout.
func waitRunning(t *testing.T, cmd *exec.Cmd, dir, node string, timeout time.Duration, out *bytes.Buffer) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		recs, _ := checkpoint.ReadOnly(dir).LoadAll()
		if r := recs[node]; r != nil && r.Status == checkpoint.Running {
			return
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("%s never started:\n%s", node, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func ranLines(dir string) []string {
	b, _ := os.ReadFile(filepath.Join(dir, "ran.log"))
	return strings.Fields(string(b))
}

// TestCrashSafety SIGKILLs a campaign of exec steps at random moments (20 kills or more, over
// at least 20 trials), resumes
// each, and checks that the final state equals an uninterrupted run's, that no node whose
// success was recorded ever ran again, and that every checkpoint read back was whole.
func TestCrashSafety(t *testing.T) {
	if testing.Short() {
		t.Skip("crash trials take ~30 s")
	}
	work := t.TempDir()
	file := filepath.Join(work, "campaign.yaml")
	if err := os.WriteFile(file, []byte(crashCampaign), 0o644); err != nil {
		t.Fatal(err)
	}
	refDir := filepath.Join(work, "reference")
	start := time.Now()
	if out, err := perfdagChild("run", file, "--out", refDir).CombinedOutput(); err != nil {
		t.Fatalf("reference run: %v\n%s", err, out)
	}
	refTime := time.Since(start)
	ref := finalState(t, refDir)
	if len(ref) != 14 || len(ranLines(refDir)) != 14 {
		t.Fatalf("reference: %d records, %d runs", len(ref), len(ranLines(refDir)))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	// Kill delays are drawn below the shortest full run seen so far, so a loaded machine that
	// slowed the reference run does not make kills land after the end; trials continue until
	// at least 20 kills have landed mid-run.
	kills, trials := 0, 0
	for trial := 0; kills < 20 || trial < 20; trial++ {
		if trial == 60 {
			t.Fatalf("only %d kills landed mid-run in 60 trials", kills)
		}
		trials++
		dir := filepath.Join(work, "trial", strconv.Itoa(trial))
		args := []string{"run", file, "--out", dir}
		for attempt := 0; ; attempt++ {
			var stderr bytes.Buffer
			cmd := perfdagChild(args...)
			cmd.Stderr = &stderr
			succeeded := map[string]bool{}
			for id, r := range finalState(t, dir) { // every record read back must be whole
				if r.Status == checkpoint.Succeeded {
					succeeded[id] = true
				}
			}
			before := len(ranLines(dir))
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			killed := false
			began := time.Now()
			if attempt == 0 || (attempt < 3 && rng.IntN(2) == 0) {
				delay := time.Duration(rng.Int64N(int64(refTime * 9 / 10)))
				timer := time.AfterFunc(delay, func() { _ = cmd.Process.Signal(syscall.SIGKILL) })
				err := cmd.Wait()
				killed = !timer.Stop() && err != nil
				if !killed && attempt == 0 {
					refTime = min(refTime, time.Since(began)) // a whole run was quicker than the reference
				}
			} else if err := cmd.Wait(); err != nil {
				t.Fatalf("trial %d attempt %d: %v\n%s", trial, attempt, err, stderr.String())
			}
			for _, id := range ranLines(dir)[before:] {
				if succeeded[id] {
					t.Errorf("trial %d: %s ran again after its success was recorded", trial, id)
				}
			}
			if !killed {
				if !cmd.ProcessState.Success() {
					t.Fatalf("trial %d attempt %d exited %v\n%s", trial, attempt, cmd.ProcessState, stderr.String())
				}
				break
			}
			kills++
			if _, err := os.Stat(campaigndir.RunInfo(dir)); err == nil {
				args = []string{"resume", dir}
			} // else: killed before the config was frozen — the user runs the file again

		}
		got := finalState(t, dir)
		if len(got) != len(ref) {
			t.Fatalf("trial %d: %d records, want %d", trial, len(got), len(ref))
		}
		for id, want := range ref {
			g := got[id]
			if g == nil || g.Status != checkpoint.Succeeded || g.Fingerprint != want.Fingerprint || g.Digest != want.Digest {
				t.Errorf("trial %d: %s = %+v, want the reference's fingerprint %s and digest %s", trial, id, g, want.Fingerprint, want.Digest)
			}
		}
	}
	t.Logf("%d SIGKILLs over %d trials (shortest full run %s)", kills, trials, refTime)
}

// SIGINT stops a running campaign (its running node sleeps an hour, so only the signal can
// end it, well before the test's polling deadline): the running node is recorded as
// interrupted, the process exits 130, and resume finishes the work.
func TestInterruptExits130(t *testing.T) {
	work := t.TempDir()
	file := filepath.Join(work, "slow.yaml")
	src := `version: 1
campaign: slow
endpoints:
  main: {url: "sim://", model: m}
cells: []
pipeline:
  - {id: quick, kind: exec, with: {command: [echo, '{"ok": true}']}}
  - {id: slow, kind: exec, needs: [quick], with: {command: [sleep, "3600"]}}
  - {id: after, kind: exec, needs: [slow], with: {command: [echo, done]}}
`
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(work, "out")
	cmd := perfdagChild("run", file, "--out", dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitRunning(t, cmd, dir, "slow", 20*time.Second, &stderr)
	_ = cmd.Process.Signal(syscall.SIGINT)
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	var err error
	select {
	case err = <-waited:
	case <-time.After(2 * time.Minute): // a polling deadline: a stuck run would take an hour
		_ = cmd.Process.Kill()
		<-waited
		t.Fatalf("SIGINT did not stop the run:\n%s", stderr.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != ExitInterrupted {
		t.Fatalf("exit %d (%v), want %d:\n%s", code, err, ExitInterrupted, stderr.String())
	}
	recs, _ := checkpoint.ReadOnly(dir).LoadAll()
	if recs["slow"].Status != checkpoint.Interrupted || recs["quick"].Status != checkpoint.Succeeded || recs["after"] != nil {
		t.Fatalf("after SIGINT: slow %s, quick %s, after %v", recs["slow"].Status, recs["quick"].Status, recs["after"])
	}
	if !strings.Contains(stderr.String(), "perfdag resume "+dir) {
		t.Errorf("no resume hint in:\n%s", stderr.String())
	}
}
