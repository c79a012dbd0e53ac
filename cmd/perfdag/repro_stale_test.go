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

const staleCampaign = `version: 1
campaign: stale
endpoints:
  main: {url: "sim://", model: m, sim: {deterministic: true}}
cells:
  - {id: a, workload: {shape: custom, input_tokens: 100, output_tokens: OUT}, concurrencies: [1, 2, 4]}
pipeline:
  - {id: run-shape, kind: run-shape}
  - {id: aggregate, kind: aggregate, needs: [run-shape]}
  - {id: render, kind: render, needs: [aggregate]}
  - {id: strict-publish, kind: strict-publish, needs: [render]}
publish: {lake: "sqlite://lake.db", strict: false}
`

// Issue 9, reproduction 3: publish trusts no stale file. A campaign runs with output_tokens
// 60; the file is edited to 200 and run into the same directory, SIGKILLed right after
// run-shape[a/c1] ends (polling the journal). The directory now holds a point measured at 200
// beside results of the old file: publish refuses, naming the stale node and 'perfdag resume',
// instead of publishing the old atlas's output tokens.
func TestPublishRefusesStaleResults(t *testing.T) {
	work := t.TempDir()
	file := filepath.Join(work, "stale.yaml")
	write := func(out string) {
		if err := os.WriteFile(file, []byte(strings.Replace(staleCampaign, "OUT", out, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(work, "out")
	write("60")
	cmd := perfdagChild("run", file, "--out", dir)
	cmd.Dir = work
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("first run: %v\n%s", err, out)
	}
	first := finalState(t, dir)["run-shape[a/c1]"].RunID

	write("200")
	cmd = perfdagChild("run", file, "--out", dir)
	cmd.Dir = work
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for ended := false; !ended; {
		select {
		case err := <-done:
			t.Fatalf("the edited run ended (%v) before run-shape[a/c1] was seen ending", err)
		case <-time.After(2 * time.Millisecond):
		}
		recs, _ := checkpoint.ReadOnly(dir).LoadAll()
		r := recs["run-shape[a/c1]"]
		ended = r != nil && r.Status == checkpoint.Succeeded && r.RunID != first
	}
	_ = cmd.Process.Kill()
	<-done
	recs := finalState(t, dir)
	if r := recs["strict-publish"]; r == nil || r.RunID != first {
		t.Fatalf("the kill landed too late: strict-publish was re-run (%+v)", r)
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
	if !strings.Contains(string(out), "run-shape[a/c2]") && !strings.Contains(string(out), "aggregate") {
		t.Errorf("publish refusal names no stale node:\n%s", out)
	}
	if after, _ := os.ReadFile(campaigndir.Abs(dir, campaigndir.Receipt())); string(after) != string(receipt) {
		t.Errorf("a refused publish rewrote the receipt:\n%s", after)
	}
}
