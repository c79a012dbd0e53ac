package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfdag/perfdag/engine/checkpoint"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/lake"
	"github.com/perfdag/perfdag/steps/testkit"
)

// TestPropertyEditKillResume is issue 9's property: a random campaign (deterministic simulator
// cells, gates, an exec step) runs; a random edit of its file is run into the same directory
// while the process is SIGKILLed at random moments and resumed until it completes. Then
// status --json, the atlas, the report's text and the lake rows equal those of a from-scratch
// run of the final file in a fresh directory (run ids, timestamps and paths normalized), and
// `run --dry-run` of the final file on the pre-existing directory predicted exactly the set of
// nodes the real (killed and resumed) run then ran.
//
// Three trials by default; PERFDAG_PROPERTY_TRIALS=N runs N, PERFDAG_PROPERTY_SEED=S starts
// from seed S (a failure prints the seed that reproduces it).
func TestPropertyEditKillResume(t *testing.T) {
	if testing.Short() {
		t.Skip("the property trials run real campaigns (~15 s each)")
	}
	pdftotext := testkit.NeedTool(t, "pdftotext")
	trials := 3
	if s := os.Getenv("PERFDAG_PROPERTY_TRIALS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("PERFDAG_PROPERTY_TRIALS=%q: want a positive number", s)
		}
		trials = n
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("PERFDAG_PROPERTY_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("PERFDAG_PROPERTY_SEED=%q: %v", s, err)
		}
		seed = n
	}
	var st propStats
	var failed []uint64
	start := time.Now()
	for i := range trials {
		s := seed + uint64(i)
		ok := t.Run(fmt.Sprintf("seed=%d", s), func(t *testing.T) {
			propTrial(t, pdftotext, s, &st)
		})
		if !ok {
			failed = append(failed, s)
			t.Errorf("trial %d failed; reproduce with PERFDAG_PROPERTY_SEED=%d PERFDAG_PROPERTY_TRIALS=1 go test ./cmd/perfdag -run TestPropertyEditKillResume", i, s)
		}
	}
	t.Logf("failed seeds: %v", failed)
	t.Logf("%d trials, %d perfdag processes, %d SIGKILLs landed mid-run, %s", trials, st.processes, st.kills, time.Since(start).Round(time.Second))
}

type propStats struct{ processes, kills int }

func propTrial(t *testing.T, pdftotext string, seed uint64, st *propStats) {
	r := rand.New(rand.NewPCG(seed, 9))
	first := randCampaign(r)
	final, what := first.edit(r)
	t.Logf("edit: %s\nfinal campaign:\n%s", what, final.yaml())
	work := t.TempDir()
	edited, fresh := filepath.Join(work, "edited"), filepath.Join(work, "fresh")
	file := propWrite(t, edited, first.yaml())
	dir := filepath.Join(edited, "out")
	if code, out := propRun(edited, st, "run", file, "--out", dir); code != 0 && code != ExitRefused {
		t.Fatalf("first run exited %d:\n%s", code, out)
	}
	before := propRunIDs(t, dir)
	propWrite(t, edited, final.yaml())
	predicted := propDryRun(t, edited, file, dir)
	// run ids have a resolution of one second: start the edited run in a later second than the
	// first so its journal records are told apart (seeds 1121, 1130, 1133 on a fast machine)
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second + 10*time.Millisecond)))

	// The edited run, SIGKILLed 1–2 times at random moments, then resumed (or, when the kill
	// landed before the new file was frozen, run again) until it completes.
	code, out := 0, ""
	for kills := 1 + r.IntN(2); ; kills-- {
		args := []string{"run", file, "--out", dir}
		if frozen, _ := os.ReadFile(campaigndir.Config(dir)); string(frozen) == final.yaml() && len(propRunIDs(t, dir)) > len(before) {
			args = []string{"resume", dir}
		}
		if kills <= 0 {
			code, out = propRun(edited, st, args...)
			break
		}
		cmd := perfdagChild(args...)
		cmd.Dir = edited
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		st.processes++
		time.Sleep(time.Duration(20+r.IntN(1500)) * time.Millisecond)
		if cmd.Process.Kill() == nil {
			if err := cmd.Wait(); err != nil && cmd.ProcessState.ExitCode() == -1 {
				st.kills++
			}
		}
	}
	wantCode, freshOut := propRun(propWriteDir(t, fresh, final.yaml()), st, "run", filepath.Join(fresh, "c.yaml"), "--out", filepath.Join(fresh, "out"))
	if code != wantCode || (code != 0 && code != ExitRefused) {
		t.Fatalf("edited run completed with exit %d, the fresh run with %d:\n%s\n---\n%s", code, wantCode, out, freshOut)
	}
	ran, blocked := propRan(t, dir, before)
	for node, action := range predicted {
		// A node predicted to run whose upstream points are measured by this very run can be
		// blocked by their fail verdicts, which no dry run can know in advance.
		if (action == "run") != ran[node] && !(action == "run" && blocked[node]) {
			t.Errorf("dry run predicted %s for %s; the real run ran it: %v", action, node, ran[node])
		}
	}
	for node := range ran {
		if _, ok := predicted[node]; !ok {
			t.Errorf("%s ran but the dry run did not list it", node)
		}
	}
	freshDir := filepath.Join(fresh, "out")
	for _, c := range append([]campaignOutput{{"status --json", propStatus}}, campaignOutputs(pdftotext)...) {
		a := propNormalize(c.get(t, edited, dir), edited)
		b := propNormalize(c.get(t, fresh, freshDir), fresh)
		if a != b {
			t.Errorf("%s differs between the edited, killed and resumed directory and a fresh run:\n%s", c.what, propDiff(a, b))
		}
	}
}

// campaignOutput is one output two runs of a campaign are compared on, after propNormalize.
type campaignOutput struct {
	what string
	get  func(t *testing.T, base, dir string) string
}

// campaignOutputs are the outputs beyond the checkpoints that two runs of one campaign (a
// fresh one and an edited, killed and resumed one; one run and a Workflow's slices merged)
// must write alike: the atlas, the report's text and the lake rows.
func campaignOutputs(pdftotext string) []campaignOutput {
	return []campaignOutput{
		{"atlas", func(t *testing.T, _, dir string) string {
			b, err := os.ReadFile(campaigndir.Abs(dir, campaigndir.Atlas()))
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}},
		{"report text", func(t *testing.T, _, dir string) string {
			b, err := exec.Command(pdftotext, campaigndir.Abs(dir, campaigndir.Report()), "-").Output()
			if err != nil {
				t.Fatalf("pdftotext: %v", err)
			}
			return string(b)
		}},
		{"lake rows", propLake},
	}
}

func propWrite(t *testing.T, dir, text string) string {
	t.Helper()
	propWriteDir(t, dir, text)
	return filepath.Join(dir, "c.yaml")
}

func propWriteDir(t *testing.T, dir, text string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "c.yaml"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// propRun runs perfdag to completion in cwd and returns its exit code and output.
func propRun(cwd string, st *propStats, args ...string) (int, string) {
	cmd := perfdagChild(args...)
	cmd.Dir = cwd
	out, _ := cmd.CombinedOutput()
	st.processes++
	return cmd.ProcessState.ExitCode(), string(out)
}

// propDryRun returns the dry run's action (run, reuse, block) per node.
func propDryRun(t *testing.T, cwd, file, dir string) map[string]string {
	t.Helper()
	cmd := perfdagChild("run", file, "--out", dir, "--dry-run", "--json")
	cmd.Dir = cwd
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("dry run: %v\n%s", err, out)
	}
	var plan struct{ Nodes []struct{ ID, Action string } }
	if err := json.Unmarshal(out, &plan); err != nil || len(plan.Nodes) == 0 {
		t.Fatalf("dry run --json (%v):\n%s", err, out)
	}
	m := map[string]string{}
	for _, n := range plan.Nodes {
		m[n.ID] = n.Action
	}
	return m
}

type propEvent struct{ Run, Type, Node, Status string }

func propEvents(t *testing.T, dir string) []propEvent {
	t.Helper()
	b, err := os.ReadFile(campaigndir.Events(dir))
	if err != nil {
		t.Fatal(err)
	}
	var evs []propEvent
	for _, line := range strings.Split(string(b), "\n") {
		var e propEvent
		if json.Unmarshal([]byte(line), &e) == nil {
			evs = append(evs, e)
		}
	}
	return evs
}

// propRunIDs returns the runs the directory's events record.
func propRunIDs(t *testing.T, dir string) map[string]bool {
	m := map[string]bool{}
	for _, e := range propEvents(t, dir) {
		m[e.Run] = true
	}
	return m
}

// propRan returns the nodes that started in the runs after before, and those whose latest
// record is blocked,, read from the journal (a
// SIGKILL between a node's checkpoint and its events line loses the event, not the record;
// reused nodes keep the record, and run id, of the run that measured them).
func propRan(t *testing.T, dir string, before map[string]bool) (ran, blocked map[string]bool) {
	b, err := os.ReadFile(campaigndir.Journal(dir))
	if err != nil {
		t.Fatal(err)
	}
	ran, blocked = map[string]bool{}, map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		var r checkpoint.Record
		if json.Unmarshal([]byte(line), &r) == nil && !before[r.RunID] {
			ran[r.Node] = ran[r.Node] || r.Status == checkpoint.Running
			blocked[r.Node] = r.Status == checkpoint.Blocked
		}
	}
	return ran, blocked
}

// propStatus is status --json without what legitimately differs: when and how often a node
// ran, and whether it was reused.
func propStatus(t *testing.T, _, dir string) string {
	out, err := perfdagChild("status", dir, "--json").Output()
	if err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	var st map[string]any
	if err := json.Unmarshal(out, &st); err != nil {
		t.Fatal(err)
	}
	delete(st, "run")
	delete(st, "dir")
	nodes, _ := st["nodes"].([]any)
	for _, n := range nodes {
		if m, ok := n.(map[string]any); ok {
			for _, k := range []string{"started_at", "seconds", "attempt", "last_run", "why"} {
				delete(m, k)
			}
		}
	}
	b, _ := json.MarshalIndent(st, "", " ")
	return string(b)
}

// propLake is every lake table's rows of the directory's published campaign.
func propLake(t *testing.T, base, dir string) string {
	var receipt struct {
		CampaignID string `json:"campaign_id"`
		Lake       string
	}
	b, err := os.ReadFile(campaigndir.Abs(dir, campaigndir.Receipt()))
	if err != nil || json.Unmarshal(b, &receipt) != nil {
		t.Fatalf("publish receipt: %v\n%s", err, b)
	}
	ctx := context.Background()
	l, err := lake.Open(ctx, receipt.Lake, base)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close(ctx)
	var out strings.Builder
	for _, table := range lake.Tables() {
		rows, err := l.Read(ctx, table.Name, receipt.CampaignID)
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range rows {
			fmt.Fprintf(&out, "%s %v\n", table.Name, row)
		}
	}
	if out.Len() == 0 {
		t.Fatalf("no lake rows for %s", receipt.CampaignID)
	}
	return strings.ReplaceAll(out.String(), receipt.CampaignID, "CAMPAIGN-ID")
}

var propVolatile = regexp.MustCompile(`\d{8}T\d{6}Z|\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?Z?|\d{10,}`)

func propNormalize(s, base string) string {
	s = strings.ReplaceAll(s, base, "BASE")
	return propVolatile.ReplaceAllString(s, "T")
}

// propDiff shows the first differing lines.
func propDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out bytes.Buffer
	for i := 0; i < max(len(al), len(bl)) && out.Len() < 2000; i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			fmt.Fprintf(&out, "line %d:\n  edited: %s\n  fresh:  %s\n", i+1, x, y)
		}
	}
	return out.String()
}
