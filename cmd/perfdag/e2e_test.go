package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfdag/perfdag/engine/checkpoint"
	"github.com/perfdag/perfdag/engine/load"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps"
)

// Every shipped campaign — pipelines/ and the docs' examples — validates, and says at its top
// what it is for and how to run it.
func TestPipelinesValidate(t *testing.T) {
	reg, err := steps.Registry()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []struct {
		dir, schema string
		want        []string
	}{
		{"pipelines", "../schema/campaign.schema.json",
			[]string{"quickstart.yaml", "aa-shapes.yaml", "roofline.yaml", "champion-ab.yaml", "nightly-sweep.yaml", "imports.yaml", "variant-ab.yaml"}},
		{"docs/examples", "../../schema/campaign.schema.json",
			[]string{"vllm.yaml", "sglang.yaml", "llama-cpp.yaml", "postgres-lake.yaml", "argo.yaml"}},
	} {
		files, _ := filepath.Glob(filepath.Join("..", "..", filepath.FromSlash(d.dir), "*.yaml"))
		want := map[string]bool{}
		for _, f := range d.want {
			want[f] = true
		}
		for _, f := range files {
			delete(want, filepath.Base(f))
			src, _ := os.ReadFile(f)
			if !strings.HasPrefix(string(src), "# yaml-language-server: $schema="+d.schema+"\n#\n# "+strings.TrimSuffix(filepath.Base(f), ".yaml")+" — ") {
				t.Errorf("%s does not open with its schema line and a comment naming what it is", f)
			}
			if _, err := load.File(f, reg, load.Options{Lookup: func(string) (string, bool) { return "", false }}); err != nil {
				t.Errorf("%s: %v", f, err)
			}
		}
		for f := range want {
			t.Errorf("%s/%s is missing", d.dir, f)
		}
	}
}

// The quickstart, killed mid-sweep with SIGKILL and resumed, ends complete: every node
// succeeded, the report exists, and nothing that had finished before the kill ran again
// (but the before-scrape bracketing the interrupted point and the settle preceding it).
func TestQuickstartKilledAndResumed(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the quickstart twice over (~1.5 min)")
	}
	dir := filepath.Join(t.TempDir(), "qs")
	cmd := perfdagChild("run", "../../pipelines/quickstart.yaml", "--out", dir)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// kill once the first cell's sweep is done, while the second cell is being measured
	waitRunning(t, cmd, dir, "run-shape[aa-10k/c1]", 3*time.Minute, &out)
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	before, err := checkpoint.ReadOnly(dir).LoadAll()
	if err != nil {
		t.Fatal(err)
	}
	done := map[string]string{}
	for id, r := range before {
		if r.Status == checkpoint.Succeeded {
			done[id] = r.RunID
		}
	}
	if len(done) < 10 {
		t.Fatalf("only %d nodes had finished before the kill", len(done))
	}
	resume := perfdagChild("resume", dir)
	if b, err := resume.CombinedOutput(); err != nil {
		t.Fatalf("resume: %v\n%s", err, b)
	}
	after, _ := checkpoint.ReadOnly(dir).LoadAll()
	if len(after) != 32 {
		t.Fatalf("%d nodes recorded, want 32", len(after))
	}
	for id, r := range after {
		if r.Status != checkpoint.Succeeded {
			t.Errorf("%s ended %s", id, r.Status)
		}
		// the before-scrape and the settle of the interrupted point are the exceptions, by
		// design: a window re-measured needs a fresh before-scrape, and a point re-run starts
		// right after its settle
		again := id == "scrape-spec:before[aa-10k/c1]" || id == "settle[aa-10k/c1]"
		if run, ok := done[id]; ok && r.RunID != run && !again {
			t.Errorf("%s finished before the kill but ran again on resume", id)
		}
		if b := before[id]; again && b != nil && r.RunID == b.RunID {
			t.Errorf("%s was reused on resume: the interrupted point needs it afresh", id)
		}
	}
	if st, err := os.Stat(campaigndir.Abs(dir, campaigndir.Report())); err != nil || st.Size() < 10000 {
		t.Fatalf("report.pdf: %v", err)
	}
	atlas, _ := os.ReadFile(campaigndir.Abs(dir, campaigndir.Atlas()))
	if n := strings.Count(string(atlas), "\n"); n != 6 {
		t.Errorf("atlas has %d rows, want 6", n)
	}
}
