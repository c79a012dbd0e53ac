package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/engine/workspace"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/lake"
	"github.com/perfdag/perfdag/steps/testkit/campaigntest"
	"github.com/perfdag/perfdag/steps/testkit/fixture"
	"github.com/perfdag/perfdag/steps/testkit/laketest"
)

// publishCLI runs `perfdag publish ARGS` and returns its exit code and output.
func publishCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	a := &app{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, testKinds: []engine.Kind{fixture.Kind}}
	cmd := a.publishCmd()
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	cmd.SetArgs(args)
	cmd.SetOut(&stdout)
	cmd.SetErr(&stderr)
	err := cmd.ExecuteContext(context.Background())
	if err != nil {
		stderr.WriteString(err.Error())
	}
	return codeOf(err), stdout.String(), stderr.String()
}

func TestPublishCommand(t *testing.T) {
	ungrounded := campaigntest.Campaign{Spec: laketest.Spec{Campaign: "kimi", Cells: 2, Concs: 3}}
	good := campaigntest.Campaign{Spec: laketest.Spec{Campaign: "kimi", Cells: 2, Concs: 3, Grounded: true, Roofline: true}}

	t.Run("refused: exit 4, gates listed, nothing written", func(t *testing.T) {
		base := t.TempDir()
		dir := campaigntest.Write(t, t.TempDir(), base, ungrounded).Dir
		code, out, errOut := publishCLI(t, dir)
		if code != ExitRefused {
			t.Fatalf("exit %d, want %d\n%s%s", code, ExitRefused, out, errOut)
		}
		for _, want := range []string{"refused: campaign 20261202T130455Z-kimi failed strict gates",
			"  dcgm-grounded: not DCGM-grounded: 0 of 6 plot-ready points", "  roofline-page: a throughput campaign with 6 plot-ready points", "--no-strict"} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
		if !strings.Contains(errOut, "refused by strict gates: dcgm-grounded, roofline-page") {
			t.Errorf("stderr %q", errOut)
		}
		for _, p := range []string{campaigndir.Abs(dir, campaigndir.Receipt()), filepath.Join(base, "lake.db")} {
			if _, err := os.Stat(p); err == nil {
				t.Errorf("refused publish wrote %s", p)
			}
		}
	})

	t.Run("--no-strict publishes and records the gaps", func(t *testing.T) {
		base := t.TempDir()
		dir := campaigntest.Write(t, t.TempDir(), base, ungrounded).Dir
		code, out, errOut := publishCLI(t, dir, "--no-strict")
		if code != ExitOK {
			t.Fatalf("exit %d\n%s%s", code, out, errOut)
		}
		for _, want := range []string{"published 20261202T130455Z-kimi to sqlite://" + filepath.Join(base, "lake.db") + " (not strict; sol_rigor L1",
			"atlas_v1", "gates: dcgm-grounded:FAIL roofline-page:FAIL steady-window:pass", "gaps recorded on campaign_v1:\n  - dcgm-grounded: ",
			"receipt: " + campaigndir.Abs(dir, campaigndir.Receipt())} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
		if !regexp.MustCompile(`campaign_v1 +1 row +\(replaced 0\)`).MatchString(out) || strings.Contains(out, " 1 rows") {
			t.Errorf("one campaign_v1 row is not counted as \"1 row\":\n%s", out)
		}
	})

	t.Run("--json, --lake, and twice leaves one copy", func(t *testing.T) {
		dir := campaigntest.Write(t, t.TempDir(), t.TempDir(), good).Dir
		url := "sqlite://" + filepath.Join(t.TempDir(), "team.db")
		var last publishOutput
		for range 2 {
			code, out, errOut := publishCLI(t, dir, "--lake", url, "--json")
			if code != ExitOK {
				t.Fatalf("exit %d\n%s%s", code, out, errOut)
			}
			if err := json.Unmarshal([]byte(out), &last); err != nil {
				t.Fatalf("--json output: %v\n%s", err, out)
			}
		}
		if !last.Result.Published || !last.Result.Strict || last.Receipt == nil || last.Receipt.Lake != url || len(last.Gates) != 4 {
			t.Fatalf("json %+v", last)
		}
		l, err := lake.Open(context.Background(), url, "")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close(context.Background())
		counts, err := l.Count(context.Background(), last.Result.CampaignID)
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range counts {
			// no scheduler judged this run: no verdict.json, no history_v1 row
			if r := last.Receipt.Tables[i]; c.Rows != r.Rows || r.Replaced != r.Rows || (c.Rows == 0) != (c.Table == lake.HistoryTable) {
				t.Errorf("%s: lake %d rows; second publish inserted %d replacing %d", c.Table, c.Rows, r.Rows, r.Replaced)
			}
		}
	})

	t.Run("usage and state errors", func(t *testing.T) {
		dir := campaigntest.Write(t, t.TempDir(), t.TempDir(), good).Dir
		tests := []struct {
			args []string
			code int
			want string
		}{
			{[]string{}, ExitUsage, "accepts 1 arg"},
			{[]string{t.TempDir()}, ExitUsage, "a campaign directory?"},
			{[]string{dir, "--lake", "mysql://db/x"}, ExitUsage, `--lake: lake URL "mysql://db/x": scheme "mysql" is not supported`},
		}
		for _, tt := range tests {
			code, _, errOut := publishCLI(t, tt.args...)
			if code != tt.code || !strings.Contains(errOut, tt.want) {
				t.Errorf("publish %v: exit %d %q, want %d with %q", tt.args, code, errOut, tt.code, tt.want)
			}
		}
		unlock, err := workspace.Lock(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer unlock()
		if code, _, errOut := publishCLI(t, dir); code != ExitFailed || !strings.Contains(errOut, "being run by another perfdag process") {
			t.Errorf("publish of a running campaign: exit %d %q", code, errOut)
		}
	})
}
