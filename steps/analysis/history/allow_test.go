package history

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// Allow vets a run's directory before anything in it is read: a refused run is its line alone,
// its note the refusal, its id the directory's name (no run.json read); Campaigns lists the
// campaigns a history.jsonl names in order.
func TestAllowAndCampaigns(t *testing.T) {
	root := t.TempDir()
	state := filepath.Join(root, ".schedule")
	in := runDir(t, root, "20260101T030000Z-nightly", "GREEN", "manual", "2026-01-01T03:00:00Z", 37, 1)
	out := runDir(t, t.TempDir(), "20260102T030000Z-nightly", "RED", "scheduled", "2026-01-02T03:00:00Z", 29, 1.2)
	historyLine(t, state, line{Campaign: "nightly", Dir: in, Verdict: "GREEN"})
	historyLine(t, state, line{Campaign: "other", Dir: in, Verdict: "GREEN"})
	historyLine(t, state, line{Campaign: "nightly", Dir: out, Verdict: "RED", Time: "2026-01-02T03:00:00Z"})
	o := opts()
	o.Campaign = "nightly"
	var opened []string
	open := o.Open
	o.Open = func(dir string) (campaigndir.Finished, error) { opened = append(opened, dir); return open(dir) }
	o.ID = func(dir, _ string) string {
		if dir == out {
			t.Errorf("the refused directory's id was read from it")
		}
		return filepath.Base(dir)
	}
	o.Allow = func(dir string) error {
		if dir != in {
			return errors.New("not served")
		}
		return nil
	}
	hs, err := FromDirs(context.Background(), state, root, o)
	if err != nil {
		t.Fatal(err)
	}
	rs := hs[0].Runs
	if len(rs) != 2 || len(rs[0].Points) == 0 || rs[1].Note != "not served" || len(rs[1].Points) != 0 || rs[1].ID != filepath.Base(out) || rs[1].Verdict != "RED" {
		t.Fatalf("runs: %+v", rs)
	}
	if len(opened) != 1 || opened[0] != in {
		t.Errorf("opened %q, want only the allowed run", opened)
	}
	f, err := os.Open(filepath.Join(state, historyFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	names, err := Campaigns(f)
	if err != nil || strings.Join(names, ",") != "nightly,other" {
		t.Errorf("Campaigns = %q, %v", names, err)
	}
	if _, err := Campaigns(strings.NewReader("{not json\n")); err == nil {
		t.Errorf("a broken history.jsonl read as campaigns")
	}
}

// BaselineValues maps a verdict's diff rows onto the history's series: the diff's names and
// units (attainment in %, the knee's sweep-wide row), its cell, each point's load.
func TestBaselineValues(t *testing.T) {
	v := &schema.Verdict{Diff: &schema.BaselineDiff{CurrentCell: "chat", Rows: []schema.DiffRow{
		{Concurrency: 8, Metric: "throughput_toks_per_s", Baseline: f64(812)},
		{Concurrency: 8, Metric: "slo_attainment_pct", Baseline: f64(99.5)},
		{Load: "r2.5-cap64", Metric: "ttft_p50_ms", Baseline: f64(31)},
		{Metric: "slo_knee_concurrency", Baseline: f64(32)},
		{Concurrency: 8, Metric: "ttft_p99_ms", Baseline: f64(90)}, // no history series
		{Concurrency: 8, Metric: "itl_p50_ms"},                     // no baseline value (a legacy null)
	}}}
	got := BaselineValues(v)
	want := map[Key]float64{{"chat", "c8", "output_tok_s"}: 812, {"chat", "c8", "slo_attainment"}: 0.995,
		{"chat", "r2.5-cap64", "ttft_p50_ms"}: 31, {"chat", "", KneeMetric}: 32}
	if len(got) != len(want) {
		t.Errorf("BaselineValues = %v, want %v", got, want)
	}
	for k, w := range want {
		if g, ok := got[k]; !ok || g != w {
			t.Errorf("%v: %v, want %v", k, g, w)
		}
	}
	if len(BaselineValues(&schema.Verdict{})) != 0 || len(BaselineValues(nil)) != 0 {
		t.Errorf("a verdict without a diff has baseline values")
	}
}
