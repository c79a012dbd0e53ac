package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// selectionCampaign is a campaign of exec steps: deploy, measure[a/c1], measure[a/c2],
// summarize[a].
const selectionCampaign = `version: 1
campaign: pick
endpoints:
  main: {url: "sim://", model: m}
cells:
  - {id: a, workload: {}, concurrencies: [1, 2]}
pipeline:
  - {id: deploy, kind: exec, with: {command: [echo, "{}"]}}
  - {id: measure, kind: exec, foreach: point, needs: [deploy], with: {command: [echo, "{}"]}}
  - {id: summarize, kind: exec, foreach: cell, needs: [measure], with: {command: [echo, done]}}
`

// A node pattern that matches no node — a misspelt or stale cell id in --only, a line of
// --only-list (what every exported Argo task runs), --force — is bad usage (exit 2) naming the
// pattern and the closest node ids, for run, resume and their dry runs alike, and no campaign
// directory is made for it; it used to report every node "ignored" and exit 0.
func TestSelectionMatchingNothing(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "pick.yaml")
	if err := os.WriteFile(file, []byte(selectionCampaign), 0o644); err != nil {
		t.Fatal(err)
	}
	quickstart := filepath.Join("..", "..", "pipelines", "quickstart.yaml")
	done, root := filepath.Join(dir, "done"), filepath.Join(dir, "campaigns")
	main := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		a := testApp()
		a.stdout, a.stderr = &out, &errb
		return a.main(args), out.String(), errb.String()
	}
	if code, _, errs := main("run", file, "--out", done); code != ExitOK {
		t.Fatalf("the campaign does not run: exit %d\n%s", code, errs)
	}
	for _, c := range []struct {
		name string
		args []string
		want []string // in stderr
	}{
		{"run --only on the quickstart", []string{"run", quickstart, "--root", root, "--only", "run-shape[nosuch/c1]"},
			[]string{`--only "run-shape[nosuch/c1]" matches no node of campaign quickstart; closest: run-shape[aa-1k/c1], run-shape[aa-10k/c1], run-shape[aa-1k/c4]`}},
		{"run --only-list, one stale line", []string{"run", file, "--root", root, "--only-list", "measure[a/c1]\nmeasure[a/c4]\n"},
			[]string{`--only "measure[a/c4]" matches no node of campaign pick; closest: measure[a/c1], measure[a/c2]`}},
		{"run --force typo", []string{"run", file, "--root", root, "--force", "mesure[*]"},
			[]string{`--force "mesure[*]" matches no node`}},
		{"run --dry-run", []string{"run", file, "--root", root, "--dry-run", "--only", "sumarize[a]"},
			[]string{`--only "sumarize[a]" matches no node of campaign pick; closest: summarize[a]`}},
		{"resume --only and --force", []string{"resume", done, "--only", "measure[b/*]", "--force", "deploy", "--force", "deplyo"},
			[]string{`--only "measure[b/*]" matches no node`, `--force "deplyo" matches no node of campaign pick; closest: deploy`, "'perfdag plan FILE' lists every node id"}},
		{"resume --dry-run", []string{"resume", done, "--dry-run", "--force", "x"},
			[]string{`--force "x" matches no node`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := main(c.args...)
			if code != ExitUsage {
				t.Fatalf("exit %d, want %d (bad usage)\nstdout:\n%s\nstderr:\n%s", code, ExitUsage, out, errs)
			}
			for _, w := range c.want {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errs)
				}
			}
			if strings.Contains(errs, `"deploy" matches`) {
				t.Errorf("a pattern that matches was refused:\n%s", errs)
			}
		})
	}
	if _, err := os.Stat(root); !os.IsNotExist(err) {
		t.Errorf("a refused run made campaign directories under %s (%v)", root, err)
	}
	// a pattern that matches still runs what it selects
	if code, out, errs := main("resume", done, "--only", "measure[a/*]", "--force", "measure[a/c2]"); code != ExitOK || !strings.Contains(out, "1 ran, 2 reused, 1 ignored") {
		t.Errorf("a matching selection: exit %d\n%s%s", code, out, errs)
	}
}
