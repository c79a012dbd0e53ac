package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/engine/campaign"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/analysis/baseline"
	"github.com/perfdag/perfdag/steps/lake"
	"github.com/perfdag/perfdag/steps/testkit"
)

// legacyRenamed are the node ids main (7ff4459) gave the open-loop cell's points, which were
// keyed by their in-flight cap alone: today they are rate points.
var legacyRenamed = map[string]string{"c2": "r20-cap2", "c8": "r20-cap8"}

// renameLegacy rewrites an id or text of the fixture's old run the way today names its points.
func renameLegacy(s string) string {
	for old, now := range legacyRenamed {
		s = strings.ReplaceAll(s, "[open/"+old+"]", "[open/"+now+"]")
	}
	return s
}

// legacyDir copies testdata/legacy-main (written by main before points were keyed by load) to
// a temporary folder: the campaign directory, the baselines and the lake.
func legacyDir(t *testing.T) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "legacy")
	if err := os.CopyFS(dst, os.DirFS(filepath.Join("..", "..", "testdata", "legacy-main"))); err != nil {
		t.Fatal(err)
	}
	return dst
}

func perfdagCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	a := testApp()
	a.stdout, a.stderr = &out, &errb
	return a.main(args), out.String(), errb.String()
}

func readGolden(t *testing.T, dir, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "golden", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("golden/%s: %v", name, err)
	}
}

// TestLegacyMainReads: a campaign directory, two baselines and a SQLite lake written by main
// before points were keyed by load are read by today's perfdag with the same numbers — status
// (every node succeeded, none stale, the old summaries and verdicts; the open-loop points under
// their new ids r20-cap2 and r20-cap8, saying what they were recorded as), the report's text,
// tpm, each baseline's diff against the directory, and every lake table row — and a resume
// reuses every node (the old points are the same measurements under their new ids) and changes
// no number.
func TestLegacyMainReads(t *testing.T) {
	root := legacyDir(t)
	dir := filepath.Join(root, "campaign")

	// status: the same nodes (renamed), states, summaries and verdicts; nothing stale
	var old, now campaign.Status
	readGolden(t, root, "status.json", &old)
	code, out, errs := perfdagCLI(t, "status", dir, "--json")
	if code != ExitOK {
		t.Fatalf("status: exit %d\n%s", code, errs)
	}
	if err := json.Unmarshal([]byte(out), &now); err != nil {
		t.Fatal(err)
	}
	if len(now.Nodes) != len(old.Nodes) || now.Counts["succeeded"] != len(old.Nodes) {
		t.Fatalf("status: %d nodes %v, want all %d succeeded", len(now.Nodes), now.Counts, len(old.Nodes))
	}
	byID := map[string]campaign.NodeStatus{}
	for _, n := range now.Nodes {
		byID[n.Node] = n
	}
	for _, o := range old.Nodes {
		id := renameLegacy(o.Node)
		n, ok := byID[id]
		if !ok {
			t.Errorf("status: node %s (was %s) missing", id, o.Node)
			continue
		}
		want := ""
		if id != o.Node {
			want = o.Node
		}
		if n.State != o.State || n.Summary != o.Summary || n.LastRun != o.LastRun || n.RecordedAs != want {
			t.Errorf("status %s: state %q summary %q last run %q recorded as %q; want %q %q %q %q", id, n.State, n.Summary, n.LastRun, n.RecordedAs, o.State, o.Summary, o.LastRun, want)
		}
		if len(n.Gates) != len(o.Gates) {
			t.Errorf("status %s: %d verdicts, want %d", id, len(n.Gates), len(o.Gates))
			continue
		}
		for i, v := range o.Gates {
			g := n.Gates[i]
			if g.Node != renameLegacy(v.Node) || g.Passed != v.Passed || g.Value != v.Value || g.Concurrency != v.Concurrency {
				t.Errorf("status %s: verdict %+v, want %+v", id, g, v)
			}
		}
	}
	if code, _, errs := perfdagCLI(t, "status", dir, "--check"); code != ExitOK {
		t.Errorf("status --check: exit %d\n%s", code, errs)
	}

	// tpm: the same summary
	code, out, errs = perfdagCLI(t, "tpm", dir)
	if want, _ := os.ReadFile(filepath.Join(root, "golden", "tpm.txt")); code != ExitOK || out != string(want) {
		t.Errorf("tpm: exit %d, output differs from main's:\n%s\nwant:\n%s\n%s", code, out, want, errs)
	}

	legacyBaselines(t, root, dir)
	legacyReport(t, root, dir)
	legacyLake(t, root, dir)
	legacyResume(t, root, dir)
}

// legacyBaselines: each baseline main registered diffs against the directory as main's diff
// did, row for row; the open-loop cell's bare keys read as its rate points, with a note.
func legacyBaselines(t *testing.T, root, dir string) {
	t.Helper()
	for _, cell := range []string{"closed", "open"} {
		var old, now schema.BaselineDiff
		readGolden(t, root, "diff-"+cell+".json", &old)
		code, out, errs := perfdagCLI(t, "baseline", "diff", "--baseline", "legacy-"+cell, "--current", dir, "--registry", filepath.Join(root, "baselines"), "--json")
		if want := map[string]int{baseline.Green: ExitOK, baseline.Red: 1}[old.Verdict]; code != want {
			t.Errorf("baseline diff %s: exit %d, want %d\n%s", cell, code, want, errs)
		}
		if err := json.Unmarshal([]byte(out), &now); err != nil {
			t.Fatalf("baseline diff %s: %v\n%s", cell, err, out)
		}
		if now.Verdict != old.Verdict || now.Red != old.Red || now.Green != old.Green || now.Null != old.Null || len(now.Rows) != len(old.Rows) {
			t.Fatalf("baseline diff %s: %s (%d red, %d green, %d null, %d rows), want %s (%d, %d, %d, %d rows)", cell,
				now.Verdict, now.Red, now.Green, now.Null, len(now.Rows), old.Verdict, old.Red, old.Green, old.Null, len(old.Rows))
		}
		for i, o := range old.Rows {
			n := now.Rows[i]
			wantLoad := ""
			if cell == "open" && o.Concurrency > 0 {
				wantLoad = schema.RateAt(20, o.Concurrency).Key()
			}
			if n.Load != wantLoad {
				t.Errorf("baseline diff %s row %d: load %q, want %q", cell, i, n.Load, wantLoad)
			}
			n.Load = ""
			if !reflect.DeepEqual(n, o) {
				t.Errorf("baseline diff %s row %d:\n%+v\nwant\n%+v", cell, i, n, o)
			}
		}
		var extra []string
		for _, note := range now.Notes {
			if !slices.Contains(old.Notes, note) {
				extra = append(extra, note)
			}
		}
		switch {
		case cell == "closed" && len(extra) > 0:
			t.Errorf("baseline diff closed: new notes %q", extra)
		case cell == "open" && (len(extra) != 2 || !strings.Contains(extra[0], "baseline point 2 (a snapshot written before points were keyed by load) is read as r20-cap2")):
			t.Errorf("baseline diff open: new notes %q, want the two bare keys read as rate points", extra)
		}
	}
}

// numbers are the numeric tokens of a report's text, in order.
var numbers = regexp.MustCompile(`\d+(?:[.,]\d+)*`)

// legacyReport: the report of the directory shows every number main's report showed, and no
// other number than the rate its open-loop points now name (r20-cap2, not C=2) — but for what
// main's report got wrong by reading those points' caps as concurrencies: its heatmaps "at
// fixed concurrency" had tables at C = 2 and C = 8 holding the open-loop points r20-cap2 and
// r20-cap8, and the scatter's labels named concurrency 8. Today the heatmap tables are at the
// closed-loop cell's concurrencies (C = 1 and C = 4, its atlas values), with no rate point.
func legacyReport(t *testing.T, root, dir string) {
	t.Helper()
	pdftotext := testkit.NeedTool(t, "pdftotext")
	pdf := filepath.Join(t.TempDir(), "legacy.pdf")
	if code, _, errs := perfdagCLI(t, "report", dir, "--out", pdf); code != ExitOK {
		t.Fatalf("report: exit %d\n%s", code, errs)
	}
	txt, err := exec.Command(pdftotext, "-layout", pdf, "-").Output()
	if err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadFile(filepath.Join(root, "golden", "report.txt"))
	if err != nil {
		t.Fatal(err)
	}
	count := func(s string) map[string]int {
		m := map[string]int{}
		for _, n := range numbers.FindAllString(s, -1) {
			m[n]++
		}
		return m
	}
	heat, err := regexp.Compile(`(?s)\n\f? Heatmaps at fixed concurrency\n.*?\n\f? TPM supported across hardware types\n`)
	if err != nil {
		t.Fatal(err)
	}
	labels := regexp.MustCompile(`Labels mark concurrency[\s\d,]*;`)
	now := heat.FindString(string(txt))
	for _, want := range []string{"Concurrency C = 1\n", "H100 FP8 TP1 TP                                                    252                                                        21.7\n",
		"Concurrency C = 4\n", "H100 FP8 TP1 TP                                                    795                                                        21.7\n"} {
		if !strings.Contains(now, want) {
			t.Errorf("report: the heatmap page lacks %q\n%s", want, now)
		}
	}
	if strings.Contains(now, "C = 2") || strings.Contains(now, "C = 8") || strings.Contains(now, "168") {
		t.Errorf("report: the heatmap page has the open-loop points at their caps\n%s", now)
	}
	strip := func(s string) string { return labels.ReplaceAllString(heat.ReplaceAllString(s, "\n"), "") }
	o, n := count(strip(renameLegacy(string(old)))), count(strip(string(txt)))
	for tok, k := range o {
		if n[tok] < k {
			t.Errorf("report: %q appears %d times, main's report %d", tok, n[tok], k)
		}
	}
	for tok, k := range n {
		if k > o[tok] && tok != "20" {
			t.Errorf("report: %q appears %d times, main's report %d", tok, k, o[tok])
		}
	}
	if !strings.Contains(string(txt), "r20-cap8") {
		t.Errorf("report: the open-loop points are not named by their rate\n%s", txt)
	}
}

// legacyLake: every row main published reads back with the same values, and load keys, from
// main's lake as it is; publishing the directory into it rebuilds atlas_v1 under today's key
// (cell, load) and the rows still read the same.
func legacyLake(t *testing.T, root, dir string) {
	t.Helper()
	var golden map[string]struct {
		Columns []string `json:"columns"`
		Rows    [][]any  `json:"rows"`
	}
	readGolden(t, root, "lake.json", &golden)
	const id = "20261207T010552Z-legacy"
	url := "sqlite://" + filepath.Join(root, "lake.db")
	wantLoads := []string{"c1", "c4", "r20-cap2", "r20-cap8"}
	check := func(when string) {
		l, err := lake.Open(context.Background(), url, "")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close(context.Background())
		for name, g := range golden {
			tb, _ := lake.TableNamed(name)
			rows, err := l.Read(context.Background(), name, id)
			if err != nil {
				t.Fatalf("%s: read %s: %v", when, name, err)
			}
			if len(rows) != len(g.Rows) {
				t.Fatalf("%s: %s has %d rows, want %d", when, name, len(rows), len(g.Rows))
			}
			for i, gr := range g.Rows {
				for j, col := range g.Columns {
					k := slices.IndexFunc(tb.Columns, func(c lake.Column) bool { return c.Name == col })
					if k < 0 {
						t.Errorf("%s: %s.%s is gone", when, name, col)
						continue
					}
					got, want := jsonOf(rows[i][k]), jsonOf(gr[j])
					if col == lake.ColRowJSON || col == "extra_json" {
						got, want = canonicalJSON(t, rows[i][k]), canonicalJSON(t, gr[j])
						if col == lake.ColRowJSON {
							got = dropKeys(t, got, "load", "request_rate")
						}
					}
					if got != want && !(col == "published_at" && when == "after publish") {
						t.Errorf("%s: %s row %d %s = %s, want %s", when, name, i, col, got, want)
					}
				}
			}
			if name != lake.AtlasTable {
				continue
			}
			k := slices.IndexFunc(tb.Columns, func(c lake.Column) bool { return c.Name == lake.ColLoad })
			var loads []string
			for _, r := range rows {
				loads = append(loads, r[k].(string))
			}
			if !slices.Equal(loads, wantLoads) {
				t.Errorf("%s: atlas_v1 loads %v, want %v", when, loads, wantLoads)
			}
		}
	}
	check("main's lake")
	if code, _, errs := perfdagCLI(t, "publish", dir, "--no-strict", "--lake", url); code != ExitOK {
		t.Fatalf("publish into main's lake: exit %d\n%s", code, errs)
	}
	check("after publish")
}

func jsonOf(v any) string {
	if f, ok := v.(float64); ok && f == float64(int64(f)) {
		v = int64(f) // JSON reads integers back as float64
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func canonicalJSON(t *testing.T, v any) string {
	t.Helper()
	s, ok := v.(string)
	if !ok {
		return jsonOf(v)
	}
	var x any
	if err := json.Unmarshal([]byte(s), &x); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(x)
	return string(b)
}

func dropKeys(t *testing.T, s string, keys ...string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return s
	}
	for _, k := range keys {
		delete(m, k)
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// legacyResume: resuming the directory measures nothing again — every node is reused, the
// open-loop points under their new ids, saying what they were recorded as — and the
// directory reads the same afterwards.
func legacyResume(t *testing.T, root, dir string) {
	t.Helper()
	code, out, errs := perfdagCLI(t, "resume", dir, "--dry-run")
	if code != ExitOK {
		t.Fatalf("resume --dry-run: exit %d\n%s", code, errs)
	}
	if !strings.Contains(out, "recorded as run-shape[open/c8] before points were keyed by load") || strings.Contains(out, " run ") {
		t.Errorf("resume --dry-run: want every node reused, the old points saying so:\n%s", out)
	}
	code, _, errs = perfdagCLI(t, "resume", dir)
	if code != ExitOK {
		t.Fatalf("resume: exit %d\n%s", code, errs)
	}
	var st campaign.Status
	_, out, _ = perfdagCLI(t, "status", dir, "--json")
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatal(err)
	}
	for _, n := range st.Nodes {
		if n.State != "succeeded" || n.LastRun != "reused" {
			t.Errorf("after resume: %s %s, last run %s; want succeeded and reused", n.Node, n.State, n.LastRun)
		}
	}
	code, out, _ = perfdagCLI(t, "tpm", dir)
	if want, _ := os.ReadFile(filepath.Join(root, "golden", "tpm.txt")); code != ExitOK || out != string(want) {
		t.Errorf("tpm after resume differs from main's:\n%s", out)
	}
}
