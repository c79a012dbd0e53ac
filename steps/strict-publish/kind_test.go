package strictpublish_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/engine/diag"
	"github.com/perfdag/perfdag/engine/load"
	"github.com/perfdag/perfdag/engine/plan"
	"github.com/perfdag/perfdag/engine/run"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/testkit/campaigntest"
	"github.com/perfdag/perfdag/steps/testkit/laketest"
)

// TestCheck: problems of the publish: block are reported at validate time, at their key.
func TestCheck(t *testing.T) {
	tests := []struct {
		name    string
		publish string
		want    []string // "line:col: message fragment" of each problem, in order
		hint    string   // fragment of some problem's hint
	}{
		{name: "valid block", publish: "  lake: postgres://bench@db:5432/lake\n  strict: true\n  acknowledge: [steady_window_undercount]\n" +
			"  gates:\n    - {id: roofline-page, severity: warn}\n    - {id: enough, rule: plot_ready_points >= 10 and sol_rigor != \"L1\"}\n"},
		{name: "unsupported lake scheme", publish: "  lake: mysql://db/lake\n",
			want: []string{`11:9: publish.lake: lake URL "mysql://db/lake": scheme "mysql" is not supported`}, hint: "PGPASSWORD"},
		{name: "lake error hides the password", publish: "  lake: postgres://bench:hunter2@db:port/lake\n",
			want: []string{"11:9: publish.lake: lake URL \"postgres://bench:xxxxx@db:port/lake\" does not parse"}},
		{name: "misspelt fact in a rule", publish: "  gates:\n    - {id: grounded, rule: dcgm_grouned}\n",
			want: []string{`12:28: publish.gates[0].rule: rule "dcgm_grouned": unknown name dcgm_grouned`}, hint: `did you mean "dcgm_grounded"?`},
		{name: "rule that is not boolean", publish: "  gates:\n    - {id: count, rule: plot_ready_points}\n",
			want: []string{"12:25: publish.gates[0].rule: rule \"plot_ready_points\": expected boolean"}},
		{name: "gate without id, duplicate id, foreign on:, no rule", publish: "  gates:\n    - {rule: 'true'}\n    - {id: a, rule: 'true'}\n" +
			"    - {id: a, rule: 'true', on: run-shape}\n    - {id: b}\n",
			want: []string{"12:7: publish.gates[0]: strict gate 1 has no id", "14:12: publish.gates[2].id: strict gate id \"a\" is used twice",
				"14:33: publish.gates[2].on: strict gates read the campaign", "15:7: publish.gates[3]: strict gate b has no rule"}},
		{name: "unknown acknowledgement", publish: "  acknowledge: [steady_window_undercout]\n",
			want: []string{`11:17: publish.acknowledge[0]: "steady_window_undercout" is not an atlas flag`}, hint: `did you mean "steady_window_undercount"?`},
		{name: "acknowledging a word a custom gate reads", publish: "  acknowledge: [failed_cells]\n" +
			"  gates:\n    - {id: no-failures, rule: 'failed_cells == 0 or \"failed_cells\" in acknowledged'}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := campaigntest.Campaign{Spec: laketest.Spec{Campaign: "kimi", Cells: 1}, Publish: tt.publish}
			_, err := load.Bytes("campaign.yaml", t.TempDir(), []byte(c.YAML()), registry(t), load.Options{Lookup: noEnv})
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("valid campaign rejected:\n%s\n%v", c.YAML(), err)
				}
				return
			}
			var l diag.List
			if !errors.As(err, &l) {
				t.Fatalf("load = %v, want positioned problems", err)
			}
			if len(l) != len(tt.want) {
				t.Fatalf("%d problems, want %d:\n%v\n%s", len(l), len(tt.want), err, c.YAML())
			}
			hints := ""
			for i, d := range l {
				got := strings.TrimPrefix(d.Error(), "campaign.yaml:")
				line, msg, _ := strings.Cut(tt.want[i], " ")
				if !strings.HasPrefix(got, line+" ") || !strings.Contains(got, msg) {
					t.Errorf("problem %d = %q, want %q", i, got, tt.want[i])
				}
				if strings.Contains(got, "hunter2") {
					t.Errorf("problem leaks the password: %q", got)
				}
				hints += d.Hint + "\n"
			}
			if !strings.Contains(hints, tt.hint) {
				t.Errorf("hints %q lack %q", hints, tt.hint)
			}
		})
	}
}

// TestThroughTheEngine runs strict-publish as a node: it publishes and is reused on the next
// run; a refused campaign ends the run as refused (exit 4), not failed.
func TestThroughTheEngine(t *testing.T) {
	runOnce := func(t *testing.T, dir, base string, c campaigntest.Campaign) *run.Summary {
		t.Helper()
		loaded, err := load.Bytes("campaign.yaml", base, []byte(c.YAML()), registry(t), load.Options{Lookup: noEnv})
		if err != nil {
			t.Fatal(err)
		}
		p, err := plan.Compile(loaded)
		if err != nil {
			t.Fatal(err)
		}
		sum, err := run.New(p, dir, run.Options{Registry: registry(t), Parallel: 1}).Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return sum
	}
	t.Run("publishes, then reuses", func(t *testing.T) {
		base := t.TempDir()
		c := campaigntest.Campaign{Spec: good}
		dir := campaigntest.Write(t, t.TempDir(), base, c).Dir
		sum := runOnce(t, dir, base, c)
		if sum.Failed() || sum.Refused() || publishNode(sum).Outcome != run.OutRan {
			t.Fatalf("run: %+v", sum.Nodes)
		}
		tpm := laketest.TPM(good)
		// 3 cells × 3 + 8 roofline atlas rows, 1 campaign row, 8 roofline rows, TPM and cost rows.
		rows := 17 + 1 + 8 + len(tpm.TPMRows()) + len(tpm.CostRows())
		want := fmt.Sprintf("published %d rows to sqlite://%s (sol_rigor L3)", rows, filepath.Join(base, "lake.db"))
		if s := publishNode(sum).Summary; s != want {
			t.Errorf("summary %q, want %q", s, want)
		}
		if _, err := os.Stat(campaigndir.Abs(dir, campaigndir.Receipt())); err != nil {
			t.Fatal(err)
		}
		again := runOnce(t, dir, base, c)
		if publishNode(again).Outcome != run.OutReused {
			t.Errorf("second run: %s (%s), want reused", publishNode(again).Outcome, publishNode(again).Reason)
		}
	})
	t.Run("a refusal is not a failure", func(t *testing.T) {
		base := t.TempDir()
		c := campaigntest.Campaign{Spec: laketest.Spec{Campaign: "kimi", Cells: 2, Concs: 2}}
		dir := campaigntest.Write(t, t.TempDir(), base, c).Dir
		sum := runOnce(t, dir, base, c)
		if !sum.Refused() || sum.Failed() {
			t.Fatalf("refused %t failed %t: %+v", sum.Refused(), sum.Failed(), sum.Nodes)
		}
		if r := publishNode(sum).Reason; !strings.Contains(r, "dcgm-grounded: not DCGM-grounded") || !strings.Contains(r, "roofline-page: ") {
			t.Errorf("reason %q does not list the failed gates", r)
		}
	})
}
