package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
	"github.com/spf13/cobra"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/steps/testkit/fixture"
)

// extract writes a script's files into a temp dir (the scripts hold the fixtures).
func extract(t *testing.T, script string) string {
	t.Helper()
	ar, err := txtar.ParseFile(filepath.Join("testdata", "script", script))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, f := range ar.Files {
		path := filepath.Join(dir, f.Name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// runVerb runs one verb's command the way Main would and returns its exit code.
func runVerb(t *testing.T, build func(*app) *cobra.Command, args ...string) (int, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	a := &app{stdout: &out, stderr: &errOut, testKinds: []engine.Kind{fixture.Kind}}
	cmd := build(a)
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.ExecuteContext(context.Background())
	return codeOf(err), out.String() + errOut.String()
}

// TestExitCodes pins the documented exit statuses: baseline diff 0 GREEN, 1 RED, 2 when the
// diff cannot be made; schedule --once 1 on a RED run, 0 when a baseline is only missing.
func TestExitCodes(t *testing.T) {
	dir := extract(t, "schedule_once.txtar")
	reg, runs := filepath.Join(dir, "reg"), filepath.Join(dir, "runs")
	baselineCmd := func(a *app) *cobra.Command { return a.baselineCmd() }
	scheduleCmd := func(a *app) *cobra.Command { return a.scheduleCmd() }
	runCmd := func(a *app) *cobra.Command { return a.runCmd() }
	steps := []struct {
		name  string
		build func(*app) *cobra.Command
		args  []string
		want  int
	}{
		{"run the fixture", runCmd, []string{filepath.Join(dir, "base.yaml"), "--out", filepath.Join(dir, "base")}, ExitOK},
		{"record", baselineCmd, []string{"record", filepath.Join(dir, "base"), "--name", "weekly-aa", "--registry", reg}, ExitOK},
		{"diff GREEN", baselineCmd, []string{"diff", "--baseline", "weekly-aa", "--current", filepath.Join(dir, "base"), "--registry", reg}, ExitOK},
		{"diff unknown baseline", baselineCmd, []string{"diff", "--baseline", "nope", "--current", filepath.Join(dir, "base"), "--registry", reg}, ExitUsage},
		{"diff bad tolerance", baselineCmd, []string{"diff", "--baseline", "weekly-aa", "--current", filepath.Join(dir, "base"), "--registry", reg, "--tolerance", "x=1"}, ExitUsage},
		{"schedule once RED", scheduleCmd, []string{"--once", filepath.Join(dir, "slow.yaml"), "--root", runs, "--registry", reg}, ExitFailed},
		{"schedule once FAILED", scheduleCmd, []string{"--once", filepath.Join(dir, "failing.yaml"), "--root", runs, "--registry", reg}, ExitFailed},
		{"schedule once NO_BASELINE", scheduleCmd, []string{"--once", filepath.Join(dir, "nobase.yaml"), "--root", runs, "--registry", reg}, ExitOK},
		{"schedule no schedule block", scheduleCmd, []string{filepath.Join(dir, "base.yaml")}, ExitUsage},
	}
	for _, s := range steps {
		if code, out := runVerb(t, s.build, s.args...); code != s.want {
			t.Errorf("%s: exit %d, want %d\n%s", s.name, code, s.want, out)
		}
	}
}
