package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfdag/perfdag/engine/checkpoint"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// staleCampaign holds the measured points in a hold step (exec) before aggregate: the command
// marks HELD and waits for RELEASE (or its perfdag's death), so the test kills the run at an
// exact place — every point re-measured, aggregate, render and strict-publish not yet re-run.
const staleCampaign = `version: 1
campaign: stale
endpoints:
  main: {url: "sim://", model: m, sim: {deterministic: true}}
cells:
  - {id: a, workload: {shape: custom, input_tokens: 100, output_tokens: OUT}, concurrencies: [1, 2, 4]}
pipeline:
  - {id: run-shape, kind: run-shape}
  - {id: hold, kind: exec, needs: [run-shape], with: {command: [sh, -c, 'touch HELD; while [ ! -e RELEASE ] && kill -0 $$PPID; do sleep 0.02; done']}}
  - {id: aggregate, kind: aggregate, needs: [run-shape, hold]}
  - {id: render, kind: render, needs: [aggregate]}
  - {id: strict-publish, kind: strict-publish, needs: [render]}
publish: {lake: "sqlite://lake.db", strict: false}
`

// Issue 9, reproduction 3: publish trusts no stale file. A campaign runs with output_tokens
// 60; the file is edited to 200 and run into the same directory, SIGKILLed while its hold step
// waits (after every point was measured at 200, before aggregate). The directory now holds
// points measured at 200 beside the old file's atlas, report and receipt: publish refuses,
// naming the stale node and 'perfdag resume', instead of publishing the old atlas's output
// tokens. The kill waits on the hold step's mark, not on a clock, so load cannot move it.
func TestPublishRefusesStaleResults(t *testing.T) {
	work := t.TempDir()
	file := filepath.Join(work, "stale.yaml")
	held, release := filepath.Join(work, "HELD"), filepath.Join(work, "RELEASE")
	write := func(out string) {
		c := strings.Replace(staleCampaign, "OUT", out, 1)
		c = strings.Replace(strings.Replace(c, "HELD", held, 1), "RELEASE", release, 1)
		if err := os.WriteFile(file, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	touch := func(p string) {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(work, "out")
	write("60")
	touch(release) // the first run passes its hold at once
	cmd := perfdagChild("run", file, "--out", dir)
	cmd.Dir = work
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("first run: %v\n%s", err, out)
	}
	first := finalState(t, dir)

	write("200")
	for _, p := range []string{held, release} {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	cmd = perfdagChild("run", file, "--out", dir)
	cmd.Dir = work
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if _, err := os.Stat(held); err == nil {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the edited run ended (%v) before its hold step started", err)
		case <-tick.C:
		}
	}
	_ = cmd.Process.Kill()
	<-done
	recs := finalState(t, dir)
	for _, id := range []string{"run-shape[a/c1]", "run-shape[a/c2]", "run-shape[a/c4]"} {
		if r := recs[id]; r == nil || r.Status != checkpoint.Succeeded || r.RunID == first[id].RunID {
			t.Fatalf("%s was not re-measured before the hold: %+v", id, r)
		}
	}
	for _, id := range []string{"aggregate", "render", "strict-publish"} {
		if r := recs[id]; r == nil || r.RunID != first[id].RunID {
			t.Fatalf("%s is not the first run's: %+v", id, r)
		}
	}

	receipt, err := os.ReadFile(campaigndir.Abs(dir, campaigndir.Receipt()))
	if err != nil {
		t.Fatal(err)
	}
	pub := perfdagChild("publish", dir)
	pub.Dir = work
	out, _ := pub.CombinedOutput()
	t.Logf("publish:\n%s", out)
	if code := pub.ProcessState.ExitCode(); code == 0 {
		t.Fatalf("publish of a directory holding stale results exited 0:\n%s", out)
	}
	for _, want := range []string{"holds results older than its campaign file", "perfdag resume " + dir} {
		if !strings.Contains(string(out), want) {
			t.Errorf("publish refusal lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(string(out), "aggregate (") {
		t.Errorf("publish refusal does not name the stale aggregate:\n%s", out)
	}
	if after, _ := os.ReadFile(campaigndir.Abs(dir, campaigndir.Receipt())); string(after) != string(receipt) {
		t.Errorf("a refused publish rewrote the receipt:\n%s", after)
	}
}
