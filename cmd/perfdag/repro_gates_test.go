package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/testkit"
)

const gatesCampaign = `version: 1
campaign: gates
endpoints:
  main: {url: "sim://", model: m, sim: {deterministic: true}}
cells:
  - {id: a, workload: {shape: custom, input_tokens: 100, output_tokens: 20}, concurrencies: [1, 2]}
gates:
  - {id: fast, on: run-shape, rule: RULE, severity: fail}
publish: {lake: "sqlite://lake.db", strict: false}
`

// Issue 9, reproduction 2: a tightened gate re-run into the same directory. The dry run
// predicts that the readers of verdicts re-run (and the measurements are reused), the real run
// does exactly that and exits 4, status shows the new rule's failure on the reused nodes, and
// the publish records the standing fail verdicts.
func TestEditedGateLeavesNoStaleVerdict(t *testing.T) {
	work := t.TempDir()
	dir := filepath.Join(work, "out")
	write := func(rule string) string {
		f := filepath.Join(work, "gates.yaml")
		if err := os.WriteFile(f, []byte(strings.Replace(gatesCampaign, "RULE", rule, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	if out, err := perfdagChild("run", write("ttft_p50_ms < 1000"), "--out", dir).CombinedOutput(); err != nil {
		t.Fatalf("first run: %v\n%s", err, out)
	}
	verdicts := func() map[string]string {
		m := map[string]string{}
		for node, gates := range statusVerdicts(t, dir) {
			for _, g := range gates {
				m[node] = g.Gate + "=" + map[bool]string{true: "pass", false: "fail"}[g.Passed]
			}
		}
		return m
	}
	if v := verdicts(); v["run-shape[a/c1]"] != "fast=pass" || v["run-shape[a/c2]"] != "fast=pass" {
		t.Fatalf("verdicts after the first run: %v", v)
	}
	file := write("ttft_p50_ms < 1")
	dry, err := perfdagChild("run", file, "--out", dir, "--dry-run").CombinedOutput()
	if err != nil {
		t.Fatalf("dry run: %v\n%s", err, dry)
	}
	predicted := map[string]string{}
	for _, line := range strings.Split(string(dry), "\n") {
		f := strings.Fields(line)
		for i, w := range f {
			if (w == "run" || w == "reuse") && i > 1 {
				predicted[f[1]] = w
				break
			}
		}
	}
	for node, want := range map[string]string{"run-shape[a/c1]": "reuse", "run-shape[a/c2]": "reuse", "aggregate": "run", "render": "run", "strict-publish": "run"} {
		if predicted[node] != want {
			t.Errorf("dry run predicts %s for %s, want %s:\n%s", predicted[node], node, want, dry)
		}
	}
	cmd := perfdagChild("run", file, "--out", dir)
	out, _ := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != ExitRefused {
		t.Fatalf("second run exited %d, want %d:\n%s", code, ExitRefused, out)
	}
	if v := verdicts(); v["run-shape[a/c1]"] != "fast=fail" || v["run-shape[a/c2]"] != "fast=fail" {
		t.Errorf("status after the tightened gate shows stale verdicts: %v", v)
	}
	pub, _ := perfdagChild("publish", dir, "--no-strict").CombinedOutput()
	if !strings.Contains(string(pub), "fast on run-shape[a/c1]") {
		t.Errorf("publish does not record the standing fail verdict:\n%s", pub)
	}
}

// Issue 9, reproduction 1: a fail gate that every point fails keeps the evidence. The run
// exits 4, the atlas keeps both measured points, and the report states the coverage of
// those points and the refused gate plainly.
func TestFailGateKeepsEvidence(t *testing.T) {
	work := t.TempDir()
	file := filepath.Join(work, "gates.yaml")
	if err := os.WriteFile(file, []byte(strings.Replace(gatesCampaign, "RULE", "ttft_p50_ms < 1", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(work, "out")
	cmd := perfdagChild("run", file, "--out", dir)
	out, _ := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != ExitRefused {
		t.Fatalf("run exited %d, want %d:\n%s", code, ExitRefused, out)
	}
	atlas, err := os.ReadFile(campaigndir.Abs(dir, campaigndir.Atlas()))
	if err != nil || strings.Count(string(atlas), "\n") != 2 {
		t.Fatalf("atlas (%v) does not keep both failing points:\n%s", err, atlas)
	}
	tool := testkit.NeedTool(t, "pdftotext")
	text, err := exec.Command(tool, campaigndir.Abs(dir, campaigndir.Report()), "-").Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	for _, want := range []string{"2 plot-ready concurrency points", "FAILED fast (fail): ttft_p50_ms < 1 failed — on run-shape[a/c1] (ttft_p50_ms = ", "run-shape[a/c2] (ttft_p50_ms = "} {
		if !strings.Contains(string(text), want) {
			t.Errorf("report lacks %q:\n%.1500s", want, text)
		}
	}
}
