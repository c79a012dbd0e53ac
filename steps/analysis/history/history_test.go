package history

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/testkit"
)

func f64(x float64) *float64 { return &x }

// runDir writes a judged run's directory: verdict.json, a searched cell's sweep and its atlas
// (c1 with an ITL interval, c8 without), every value scaled by slow.
func runDir(t *testing.T, root, name, verdict, trigger, started string, knee int, slow float64) string {
	t.Helper()
	dir := filepath.Join(root, name)
	v := schema.Verdict{Schema: schema.SchemaVerdict, Campaign: "nightly", Slot: started, Trigger: trigger, Started: started,
		Ended: started, Outcome: "succeeded", Verdict: verdict,
		Diff: &schema.BaselineDiff{Baseline: "reg/inference/ref/1", BaselineSHA256: "beef", Verdict: verdict, Red: map[bool]int{true: 2}[verdict == "RED"]}}
	sw := schema.SweepResult{Schema: "sweep_v1", Cell: "chat", Mode: schema.SweepSearch, SLO: "itl_avg_ms <= 50", From: 1, To: 64,
		Knee: knee, KneeLo: knee - 1, KneeHi: knee + 1}
	var atlas bytes.Buffer
	for _, c := range []int{1, 8} {
		r := schema.AtlasRow{Schema: "atlas_v1", Campaign: "nightly", CellID: "chat", Concurrency: c, Load: schema.Conc(c),
			Model: "org/m", Engine: "vllm", EngineVersion: "v0.11.0", OutputTokPerS: f64(100 * float64(c) / slow),
			TTFTP50Ms: f64(20 * slow), ITLP50Ms: f64(10 * slow)}
		if c == 1 {
			r.Intervals = schema.Intervals{"itl_p50_ms": {Lo: 9 * slow, Hi: 11 * slow, Method: "batch-means", N: 20}}
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		atlas.Write(append(b, '\n'))
	}
	for rel, body := range map[string]any{campaigndir.Verdict(): v, campaigndir.Sweep("chat"): sw} {
		b, _ := json.Marshal(body)
		testkit.WriteFile(t, filepath.Join(dir, rel), string(b))
	}
	testkit.WriteFile(t, filepath.Join(dir, campaigndir.Atlas()), atlas.String())
	return dir
}

func opts() DirOptions {
	return DirOptions{
		Open: func(dir string) (campaigndir.Finished, error) {
			if _, err := os.Stat(filepath.Join(dir, campaigndir.Atlas())); err != nil {
				return campaigndir.Finished{}, errors.New("not a finished campaign")
			}
			return campaigndir.Finished{Dir: dir, Spec: &schema.Campaign{Source: &schema.Source{Commit: "abc123"}}, Files: campaigndir.Unrecorded(dir),
				Evidence: campaigndir.Evidence{Atlas: campaigndir.Atlas(), Sweeps: []string{campaigndir.Sweep("chat")}}}, nil
		},
		ID: func(dir, _ string) string { return filepath.Base(dir) },
	}
}

func historyLine(t *testing.T, state string, l line) {
	t.Helper()
	b, _ := json.Marshal(l)
	if err := os.MkdirAll(state, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(state, historyFile), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(append(b, '\n')); err != nil {
		t.Fatal(err)
	}
}

// TestFromDirs: a state directory's history lists each run from its directory — knee and
// band, points with their intervals, versions — oldest first whatever order the lines are in,
// keeps a run with no directory (from its line) and a run whose directory does not read (with
// a note), skips other campaigns, and makes one series per (cell, load, metric) and the knee.
func TestFromDirs(t *testing.T) {
	root := t.TempDir()
	state := filepath.Join(root, ".schedule")
	slow := runDir(t, root, "20260102T030000Z-nightly", "RED", "scheduled", "2026-01-02T03:00:00Z", 29, 1.2)
	fast := runDir(t, root, "20260101T030000Z-nightly", "GREEN", "manual", "2026-01-01T03:00:00Z", 37, 1)
	broken := filepath.Join(root, "20260103T030000Z-nightly")
	testkit.WriteFile(t, filepath.Join(broken, campaigndir.Verdict()), `{"schema":"verdict_v1","campaign":"nightly","slot":"2026-01-03T03:00:00Z","trigger":"scheduled","started":"2026-01-03T03:00:00Z","ended":"2026-01-03T03:00:09Z","outcome":"failed","verdict":"FAILED","error":"step run-shape failed"}`)
	historyLine(t, state, line{Campaign: "nightly", Dir: slow, Verdict: "RED", Trigger: "scheduled"})
	historyLine(t, state, line{Campaign: "other", Dir: fast, Verdict: "GREEN"})
	historyLine(t, state, line{Campaign: "nightly", Dir: fast, Verdict: "GREEN", Trigger: "manual"})
	historyLine(t, state, line{Campaign: "nightly", Dir: broken, Verdict: "FAILED"})
	historyLine(t, state, line{Campaign: "nightly", Slot: "2026-01-04T03:00:00Z", Time: "2026-01-04T03:00:01Z", Trigger: "scheduled", Outcome: "failed", Verdict: "FAILED", Error: "campaign file unreadable"})

	got, err := Locate(root)
	if err != nil || got != state {
		t.Fatalf("Locate(root) = %q, %v; want %s", got, err, state)
	}
	o := opts()
	o.Campaign = "nightly"
	hs, err := FromDirs(context.Background(), state, root, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(hs) != 1 || hs[0].Campaign != "nightly" {
		t.Fatalf("campaigns %+v", hs)
	}
	h := hs[0]
	var ids []string
	for _, r := range h.Runs {
		ids = append(ids, r.ID+" "+r.Trigger+" "+r.Verdict)
	}
	want := []string{"20260101T030000Z-nightly manual GREEN", "20260102T030000Z-nightly scheduled RED",
		"20260103T030000Z-nightly scheduled FAILED", "2026-01-04T03:00:00Z scheduled FAILED"}
	if !reflect.DeepEqual(ids, want) {
		t.Fatalf("runs %v, want %v", ids, want)
	}
	first := h.Runs[0]
	if first.Baseline != "reg/inference/ref/1" || first.BaselineSHA256 != "beef" || first.Dir != fast ||
		!reflect.DeepEqual(first.Knees, []schema.Knee{{Cell: "chat", SLO: "itl_avg_ms <= 50", Knee: 37, KneeLo: 36, KneeHi: 38}}) ||
		!reflect.DeepEqual(first.Versions, Versions{Engine: "vllm", EngineVersion: "v0.11.0", Commit: "abc123", Models: []string{"org/m"}}) {
		t.Errorf("first run %+v", first)
	}
	if h.Runs[1].RedRows != 2 || len(h.Runs[1].Points) != 2 {
		t.Errorf("RED run %+v", h.Runs[1])
	}
	if r := h.Runs[2]; len(r.Points) != 0 || !strings.Contains(r.Note, "not a finished campaign") || r.Error != "step run-shape failed" {
		t.Errorf("unreadable run %+v", r)
	}
	if r := h.Runs[3]; r.Note != "the run made no campaign directory" || r.Error != "campaign file unreadable" {
		t.Errorf("run without a directory %+v", r)
	}
	var keys []string
	for _, s := range h.Series {
		keys = append(keys, fmt.Sprintf("%s/%s/%s:%d", s.Cell, s.Load, s.Metric, len(s.Points)))
	}
	wantKeys := []string{"chat//knee:2", "chat/c1/output_tok_s:2", "chat/c1/ttft_p50_ms:2", "chat/c1/itl_p50_ms:2",
		"chat/c8/output_tok_s:2", "chat/c8/ttft_p50_ms:2", "chat/c8/itl_p50_ms:2"}
	if !reflect.DeepEqual(keys, wantKeys) {
		t.Errorf("series %v, want %v", keys, wantKeys)
	}
	itl := h.Series[3].Points
	if itl[0].Run != "20260101T030000Z-nightly" || itl[0].Value != 10 || *itl[0].Lo != 9 || *itl[0].Hi != 11 || itl[1].Value != 12 || itl[0].Time != "2026-01-01T03:00:00Z" {
		t.Errorf("ITL p50 at c1: %+v %+v", itl[0], itl[1])
	}
	if k := h.Series[0].Points[1]; k.Value != 29 || *k.Lo != 28 || *k.Hi != 30 {
		t.Errorf("knee of the RED run %+v", k)
	}
	if h.Series[4].Points[0].Lo != nil {
		t.Error("a metric the point has no interval for got one")
	}

	// every campaign of the directory when none is named
	all, err := FromDirs(context.Background(), state, root, opts())
	if err != nil || len(all) != 2 || all[0].Campaign != "nightly" || all[1].Campaign != "other" || len(all[1].Runs) != 1 {
		t.Errorf("all campaigns: %v %v", all, err)
	}
}

// TestFolderOfVerdicts: a folder of run directories without a history file (copied from
// another machine) lists the runs with a verdict.json; a folder with none is refused.
func TestFolderOfVerdicts(t *testing.T) {
	root := t.TempDir()
	runDir(t, root, "20260102T030000Z-nightly", "RED", "scheduled", "2026-01-02T03:00:00Z", 29, 1.2)
	runDir(t, root, "20260101T030000Z-nightly", "GREEN", "manual", "2026-01-01T03:00:00Z", 37, 1)
	if err := os.MkdirAll(filepath.Join(root, "not-a-run"), 0o755); err != nil {
		t.Fatal(err)
	}
	state, err := Locate(root)
	if err != nil || state != "" {
		t.Fatalf("Locate = %q, %v", state, err)
	}
	hs, err := FromDirs(context.Background(), "", root, opts())
	if err != nil || len(hs) != 1 || len(hs[0].Runs) != 2 || hs[0].Runs[0].Verdict != "GREEN" || hs[0].Runs[1].Verdict != "RED" {
		t.Fatalf("folder: %+v %v", hs, err)
	}
	if _, err := FromDirs(context.Background(), "", t.TempDir(), opts()); err == nil || !strings.Contains(err.Error(), "not a scheduled campaign's runs") {
		t.Errorf("empty folder: %v", err)
	}
	if _, err := Locate(filepath.Join(root, "missing")); err == nil {
		t.Error("Locate of a missing directory succeeded")
	}
}

// fakeLake serves records as a lake would, by table and campaign id.
type fakeLake struct {
	ids  []string
	recs map[string][]string // table/id → row_json
}

func (l *fakeLake) Runs(context.Context, string) ([]string, error) { return l.ids, nil }
func (l *fakeLake) Records(_ context.Context, table, id string) ([]string, error) {
	return l.recs[table+"/"+id], nil
}

// TestFromLakeEqualsDirs: the rows a publish puts in the lake (history_v1 from RowOf, the
// atlas rows, campaign_v1 with the versions) give the history the directories give.
func TestFromLakeEqualsDirs(t *testing.T) {
	root := t.TempDir()
	state := filepath.Join(root, ".schedule")
	lk := &fakeLake{recs: map[string][]string{}}
	for _, d := range []string{
		runDir(t, root, "20260101T030000Z-nightly", "GREEN", "manual", "2026-01-01T03:00:00Z", 37, 1),
		runDir(t, root, "20260102T030000Z-nightly", "RED", "scheduled", "2026-01-02T03:00:00Z", 29, 1.2),
	} {
		historyLine(t, state, line{Campaign: "nightly", Dir: d})
		fin, _ := opts().Open(d)
		row, err := RowOf(fin)
		if err != nil || row == nil {
			t.Fatalf("RowOf: %v %v", row, err)
		}
		id := filepath.Base(d)
		lk.ids = append(lk.ids, id)
		b, _ := json.Marshal(row)
		lk.recs["history_v1/"+id] = []string{string(b)}
		b, _ = json.Marshal(schema.CampaignRow{Schema: schema.SchemaCampaignRow, Campaign: "nightly", Engine: "vllm", EngineVersion: "v0.11.0", Commit: "abc123"})
		lk.recs["campaign_v1/"+id] = []string{string(b)}
		atlas, _ := os.ReadFile(filepath.Join(d, campaigndir.Atlas()))
		lk.recs["atlas_v1/"+id] = strings.Split(strings.TrimSpace(string(atlas)), "\n")
	}
	dirs, err := FromDirs(context.Background(), state, root, opts())
	if err != nil {
		t.Fatal(err)
	}
	fromLake, err := FromLake(context.Background(), lk, "nightly")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromLake, dirs[0]) {
		a, _ := json.Marshal(dirs[0])
		b, _ := json.Marshal(fromLake)
		t.Errorf("lake history differs:\n%s\n%s", a, b)
	}
	delete(lk.recs, "campaign_v1/"+lk.ids[1])
	if _, err := FromLake(context.Background(), lk, "nightly"); err == nil || !strings.Contains(err.Error(), "campaign_v1 holds 0 rows") {
		t.Errorf("a run without its campaign row: %v", err)
	}
}

// TestTableAndMarks: the table prints runs, knees with their bands and points with their
// intervals; marks an annotator adds show in the table and the JSON.
func TestTableAndMarks(t *testing.T) {
	root := t.TempDir()
	state := filepath.Join(root, ".schedule")
	historyLine(t, state, line{Campaign: "nightly", Dir: runDir(t, root, "20260101T030000Z-nightly", "GREEN", "manual", "2026-01-01T03:00:00Z", 37, 1)})
	historyLine(t, state, line{Campaign: "nightly", Dir: runDir(t, root, "20260102T030000Z-nightly", "RED", "scheduled", "2026-01-02T03:00:00Z", 29, 1.2)})
	o := opts()
	o.Annotate = []Annotator{func(h *History) error {
		s := &h.Series[0]
		s.Marks = append(s.Marks, Mark{Kind: "change_point", Run: s.Points[1].Run, Cell: s.Cell, Metric: s.Metric, Detail: "knee fell by 8"})
		return nil
	}}
	hs, err := FromDirs(context.Background(), state, root, o)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteTable(&buf, hs); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"nightly: 2 runs", "manual", "RED", "reg/inference/ref/1", "vllm v0.11.0 · commit abc123 · org/m",
		"c37 (c36–c38)", "c29 (c28–c30)", "10 [9, 11]", "12 [10.8, 13.2]",
		"20260102T030000Z-nightly change_point chat knee: knee fell by 8"} {
		if !strings.Contains(buf.String(), s) {
			t.Errorf("table lacks %q:\n%s", s, buf.String())
		}
	}
	b, _ := json.Marshal(hs[0].Series[0])
	if !strings.Contains(string(b), `"marks":[{"kind":"change_point","run":"20260102T030000Z-nightly"`) {
		t.Errorf("series JSON %s", b)
	}
	o.Annotate = []Annotator{func(*History) error { return errors.New("detector failed") }}
	if _, err := FromDirs(context.Background(), state, root, o); err == nil {
		t.Error("an annotator's error was dropped")
	}
}

// TestRateKneeSeries: a search over request rate puts its knee in a knee_rate series in
// requests/s with its band, and the table names it by rate (a concurrency knee of 0 before).
func TestRateKneeSeries(t *testing.T) {
	sw := schema.SweepResult{Cell: "chat", Mode: schema.SweepSearch, SLO: "ttft_p50_ms <= 60", Over: schema.SearchOverRate,
		FromRate: 1, ToRate: 64, KneeRate: 29.9, KneeRateLo: 28.4, KneeRateHi: 31.5}
	v := &schema.Verdict{Campaign: "nightly", Verdict: "GREEN", Started: "2026-01-01T03:00:00Z"}
	row := schema.NewHistoryRow(v, "/runs/a", []schema.SweepResult{sw})
	h, err := Build("nightly", []Run{{ID: "a", HistoryRow: row, Points: []Point{}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Series) != 1 || h.Series[0].Metric != KneeRateMetric || h.Series[0].Points[0].Value != 29.9 ||
		*h.Series[0].Points[0].Lo != 28.4 || *h.Series[0].Points[0].Hi != 31.5 {
		t.Fatalf("series %+v, want one knee_rate series at 29.9 in [28.4, 31.5]", h.Series)
	}
	var b strings.Builder
	if err := WriteTable(&b, []*History{h}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "r29.9 (r28.4–r31.5)") {
		t.Errorf("table lacks the rate knee:\n%s", b.String())
	}
}
