package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/perfdag/perfdag/engine/campaign"
	"github.com/perfdag/perfdag/engine/checkpoint"
	"github.com/perfdag/perfdag/engine/events"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/testkit"
)

// signalAtEnv makes a perfdag child (perfdagChild) send itself a signal at one exact event of
// its run, so a test stops it at a chosen boundary instead of after a guessed delay. The value
// is "SIGNAL TYPE NODE N": SIGNAL is KILL or INT, TYPE an event type, NODE a prefix of the
// event's node ("-" for any), N which matching event counts (1 = the first). "KILL node_end -
// 5" dies right after the fifth node's end is checkpointed and logged; "INT progress
// run-shape[ 2" is Ctrl-C in the middle of the second measurement.
const signalAtEnv = "PERFDAG_TEST_SIGNAL_AT"

// stopAt is a parsed signalAtEnv value.
type stopAt struct {
	sig       syscall.Signal
	typ, node string
	n         int
}

func (s stopAt) String() string {
	name := map[syscall.Signal]string{syscall.SIGKILL: "KILL", syscall.SIGINT: "INT"}[s.sig]
	return fmt.Sprintf("%s %s %s %d", name, s.typ, s.node, s.n)
}

func parseStopAt(v string) (stopAt, error) {
	f := strings.Fields(v)
	sig := map[string]syscall.Signal{"KILL": syscall.SIGKILL, "INT": syscall.SIGINT}
	if len(f) != 4 || sig[f[0]] == 0 {
		return stopAt{}, fmt.Errorf("%s=%q: want \"KILL|INT TYPE NODE N\"", signalAtEnv, v)
	}
	n, err := strconv.Atoi(f[3])
	if err != nil || n < 1 {
		return stopAt{}, fmt.Errorf("%s=%q: N must be a positive number", signalAtEnv, v)
	}
	return stopAt{sig: sig[f[0]], typ: f[1], node: f[2], n: n}, nil
}

// signalAtFromEnv is the child's observer for signalAtEnv (nil when unset): it signals its own
// process once, from inside the event's emission, so nothing of the run happens in between;
// after a SIGINT it holds the emitting step until the signal has cancelled the run (a signal
// is delivered asynchronously, and on a loaded machine the run could otherwise go on).
func signalAtFromEnv() func(context.Context, events.Event) {
	v := os.Getenv(signalAtEnv)
	if v == "" {
		return nil
	}
	s, err := parseStopAt(v)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(ExitUsage)
	}
	var mu sync.Mutex
	seen := 0
	return func(ctx context.Context, e events.Event) {
		if e.Type != s.typ || s.node != "-" && !strings.HasPrefix(e.Node, s.node) {
			return
		}
		mu.Lock()
		seen++
		fire := seen == s.n
		mu.Unlock()
		if !fire {
			return
		}
		_ = syscall.Kill(os.Getpid(), s.sig)
		select {
		case <-ctx.Done():
		case <-time.After(time.Minute): // a polling deadline: the test then sees a run the signal did not stop
		}
	}
}

// sweepResumeCampaign is a deterministic-simulator campaign of one run-time cell (ITL is
// 10 + 1.1 (c − 1) ms exactly, as in kneeCampaign) published to a lake in the working
// directory, so every output the tests compare is a pure function of the file.
const sweepResumeCampaign = `version: 1
campaign: sweep-resume
endpoints:
  main:
    url: sim://
    model: perfdag/sim
    sim: {deterministic: true, ttft_ms: 20, tpot_ms: 10, batch_tpot_ms: 1.1, seed: 3}
defaults: {engine: vllm, hardware: H100, quant: FP8, tensor_parallel: 1}
cells:
  - id: knee
    workload: {shape: custom, input_tokens: 100, output_tokens: 12}
    requests_per_point: 2x
    %s
publish: {lake: "sqlite://lake.db", strict: false}
`

// TestSweepInterruptedResumesAtOnce is issue 27's first item: a run-time fan-out (an SLO
// search, a stop_when list, sweep: auto) stopped at every boundary of its probes — SIGKILL and
// SIGINT right after each node of each probe, the sweep node and the analysis after it is
// checkpointed, SIGKILL when each measurement has just started, SIGINT in the middle of each
// measurement — is brought to its end by ONE `perfdag resume`: exit 0, and status, every file
// under cells/ (sweep_probes.json, points, records, normalized rows), the atlas, the TPM
// summaries, the report's text and the lake rows equal an uninterrupted run's. A probe whose
// point group had finished before the stop is not measured again.
func TestSweepInterruptedResumesAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("about a hundred interrupted runs and resumes (~2 min)")
	}
	pdftotext := testkit.NeedTool(t, "pdftotext")
	for _, c := range []struct {
		name, cell string
		probes     []string
	}{
		// c1 meets, c8 does not, then 4 (meets), 6 (does not), 5 (meets): knee c5
		{"search", fmt.Sprintf(`search: {slo: "itl_avg_ms <= %.2f", from: 1, to: 8}`, itlAt(5)+0.55), []string{"c1", "c8", "c4", "c6", "c5"}},
		// ITL 10, 11.1, 13.3, 17.7 ms: the rule first holds after c8, c16 is skipped
		{"stop_when", "concurrencies: [1, 2, 4, 8, 16]\n    stop_when: \"itl_avg_ms > 15\"", []string{"c1", "c2", "c4", "c8"}},
		// sweep: auto (issue 29 item 2): c1, the saturating c4, then three rates capped at 4
		{"auto", "max_in_flight: 4\n    sweep: {auto: {rates: 3}}", []string{"c1", "c4", "r13-cap4", "r18.4-cap4", "r23.9-cap4"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			sweepInterrupts(t, pdftotext, fmt.Sprintf(sweepResumeCampaign, c.cell), c.probes, nil)
		})
	}
}

// sweepInterrupts runs src uninterrupted (its sweep must make probes, by key, in that order),
// then stopped at each of the stops pick keeps of sweepStops (all when pick is nil) and
// resumed once, each outcome compared with the uninterrupted run's.
func sweepInterrupts(t *testing.T, pdftotext, src string, probes []string, pick func([]stopAt) []stopAt) {
	work := t.TempDir()
	var st propStats
	ref := filepath.Join(work, "reference")
	refDir := filepath.Join(ref, "out")
	if code, out := propRun(propWriteDir(t, ref, src), &st, "run", "c.yaml", "--out", refDir); code != 0 {
		t.Fatalf("uninterrupted run exited %d:\n%s", code, out)
	}
	if got := probeKeys(readSweep(t, refDir)); !slices.Equal(got, probes) {
		t.Fatalf("the uninterrupted run probed %v, want %v: the campaign no longer tests what it says", got, probes)
	}
	stops := sweepStops(t, refDir)
	if pick != nil {
		stops = pick(stops)
	}
	outputs := append([]campaignOutput{{"status --json", propStatus}}, campaignOutputs(pdftotext)...)
	want := map[string]string{}
	for _, o := range outputs {
		want[o.what] = propNormalize(o.get(t, ref, refDir), ref)
	}
	for i, s := range stops {
		t.Run(strings.ReplaceAll(s.String(), " ", "_"), func(t *testing.T) {
			t.Parallel()
			sweepStopResume(t, filepath.Join(work, strconv.Itoa(i)), src, s, refDir, outputs, want)
		})
	}
}

// sweepStopResume runs the campaign in base, stopped at s, resumes it once and compares the
// outcome with the uninterrupted run's in refDir.
func sweepStopResume(t *testing.T, base, src string, s stopAt, refDir string, outputs []campaignOutput, want map[string]string) {
	dir := stopAndResume(t, base, src, s)
	if n := sameFiles(t, refDir, dir, sweepVolatile); n < 15 {
		t.Errorf("compared only %d files", n)
	}
	for _, o := range outputs {
		if got := propNormalize(o.get(t, base, dir), base); got != want[o.what] {
			t.Errorf("%s after the first resume differs from the uninterrupted run's:\n%s", o.what, propDiff(got, want[o.what]))
		}
	}
}

// stopAndResume runs the campaign src in base (its directory base/out) stopped at s and resumes
// it once, which must exit 0 without measuring again a point whose group (its run-shape and
// scrape-spec) had finished before the stop; it returns the campaign directory.
func stopAndResume(t *testing.T, base, src string, s stopAt) string {
	t.Helper()
	var st propStats
	dir := filepath.Join(base, "out")
	cmd := perfdagChild("run", "c.yaml", "--out", dir)
	cmd.Dir = propWriteDir(t, base, src)
	cmd.Env = append(cmd.Env, signalAtEnv+"="+s.String())
	out, _ := cmd.CombinedOutput()
	if !stoppedBy(cmd, s.sig) {
		t.Fatalf("the interrupted run ended %v, want it stopped by the signal:\n%s", cmd.ProcessState, out)
	}
	before := finalState(t, dir)
	stoppedListsItsProbes(t, dir, before, s)
	runs := propRunIDs(t, dir)
	if code, resumed := propRun(base, &st, "resume", dir); code != 0 {
		t.Fatalf("the first resume exited %d:\n%s", code, resumed)
	}
	ran, _ := propRan(t, dir, runs)
	for id, r := range before {
		after := before[strings.Replace(id, "run-shape[", "scrape-spec[", 1)]
		if r.Kind == "run-shape" && r.Status == checkpoint.Succeeded && after != nil && after.Status == checkpoint.Succeeded && ran[id] {
			t.Errorf("%s was measured again, though its point group had finished before the stop", id)
		}
	}
	return dir
}

// stoppedListsItsProbes: what a stopped run journalled is what status shows — every node with
// a record (a search's measured probes among them), with that record's state. Before, a
// search stopped mid-expansion had no record of its own, so status listed none of its probes
// and the user saw minutes of measurement as lost.
func stoppedListsItsProbes(t *testing.T, dir string, recs map[string]*checkpoint.Record, s stopAt) {
	t.Helper()
	code, out, errs := perfdagCLI(t, "status", dir, "--json")
	var st campaign.Status
	if err := json.Unmarshal([]byte(out), &st); code != ExitOK || err != nil {
		t.Fatalf("status after %s: exit %d, %v\n%s", s, code, err, errs)
	}
	listed := map[string]string{}
	for _, n := range st.Nodes {
		listed[n.Node] = n.State
	}
	for id, r := range recs {
		if got, ok := listed[id]; !ok {
			t.Errorf("after %s, status does not list %s (journalled %s)", s, id, r.Status)
		} else if r.Status == checkpoint.Succeeded && got != "succeeded" {
			t.Errorf("after %s, status says %s is %s; its record says succeeded", s, id, got)
		}
	}
}

// sweepVolatile are the files two runs of one campaign legitimately write apart (run ids,
// clocks, durations, what was reused, the report PDF's creation date, the lock holder's pid):
// the checkpoints, the event log, run.json, summary.md, the publish receipt, report.pdf
// (compared as text) and the locks.
func sweepVolatile(rel string) bool {
	return strings.HasPrefix(rel, campaigndir.StateDir("")+string(filepath.Separator)) || slices.Contains([]string{campaigndir.Events(""),
		campaigndir.RunInfo(""), campaigndir.Summary(""), campaigndir.Receipt(), campaigndir.Report(),
		campaigndir.Lock(""), campaigndir.FreezeLock("")}, rel)
}

// sweepStops are the places an uninterrupted run of the campaign in refDir is stopped at,
// counted from its event log: SIGKILL and SIGINT after each node's end (every probe's nodes,
// the sweep node, the analysis after it), SIGKILL at the start of each measurement and SIGINT
// in the middle of it.
func sweepStops(t *testing.T, refDir string) []stopAt {
	b, err := os.ReadFile(campaigndir.Events(refDir))
	if err != nil {
		t.Fatal(err)
	}
	ends, searchEnds, measures, progress := 0, 0, 0, 0
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var e events.Event
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("event log: %v", err)
		}
		switch {
		case e.Type == events.NodeEnd:
			ends++
			if strings.HasPrefix(e.Node, "sweep[") {
				searchEnds = ends
			}
		case e.Type == events.NodeStart && strings.HasPrefix(e.Node, "run-shape["):
			measures++
		case e.Type == events.Progress && strings.HasPrefix(e.Node, "run-shape["):
			progress++
		}
	}
	if searchEnds == 0 || measures == 0 || progress < measures {
		t.Fatalf("reference events: %d node ends (the sweep's the %dth), %d measurements, %d progress lines", ends, searchEnds, measures, progress)
	}
	var out []stopAt
	for k := 1; k <= ends; k++ {
		out = append(out, stopAt{syscall.SIGKILL, events.NodeEnd, "-", k}, stopAt{syscall.SIGINT, events.NodeEnd, "-", k})
	}
	for k := 1; k <= measures; k++ {
		out = append(out, stopAt{syscall.SIGKILL, events.NodeStart, "run-shape[", k},
			stopAt{syscall.SIGINT, events.Progress, "run-shape[", k})
	}
	return out
}

// stoppedBy reports whether a finished child was stopped by sig: SIGKILL ends it on the spot,
// SIGINT makes it checkpoint what was cut short and exit 130.
func stoppedBy(cmd *exec.Cmd, sig syscall.Signal) bool {
	if sig == syscall.SIGINT {
		return cmd.ProcessState.ExitCode() == ExitInterrupted
	}
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// TestSweepWithExporterResumesAtOnce is the dcgm-correlate side of issue 27's first item: on
// the real-time simulator every point also writes DCGM exporter samples, which dcgm-correlate
// reads for every point of a stop_when list and every probe of a search. Stopped at every
// boundary (as above), one resume exits 0 with every node succeeded, the same probes and
// skipped points, a correlation over the same points and an atlas of as many rows as an
// uninterrupted run's (the measured values are the wall clock's, so they are not compared).
func TestSweepWithExporterResumesAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("about fifty interrupted runs and resumes")
	}
	for _, c := range []struct{ name, cell, want string }{
		{"stop_when", "concurrencies: [1, 2, 4]\n    stop_when: \"points >= 2\"", "probes [1 2] skipped [c4]; exporter correlated [1 2]"},
		{"search", `search: {slo: "error_count == 0", from: 1, to: 4}`, "probes [1 4] skipped []; exporter correlated [1 4]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			exporterInterrupts(t, strings.Replace(fmt.Sprintf(sweepResumeCampaign, c.cell), "deterministic: true, ", "", 1), c.want)
		})
	}
}

func exporterInterrupts(t *testing.T, src, sweep string) {
	work := t.TempDir()
	var st propStats
	ref := filepath.Join(work, "reference")
	refDir := filepath.Join(ref, "out")
	if code, out := propRun(propWriteDir(t, ref, src), &st, "run", "c.yaml", "--out", refDir); code != 0 {
		t.Fatalf("uninterrupted run exited %d:\n%s", code, out)
	}
	want := exporterOutcome(t, refDir)
	if !strings.Contains(want, sweep) {
		t.Fatalf("the uninterrupted run: %s, want %s: the campaign no longer tests what it says", want, sweep)
	}
	for i, s := range sweepStops(t, refDir) {
		t.Run(strings.ReplaceAll(s.String(), " ", "_"), func(t *testing.T) {
			t.Parallel()
			var st propStats
			base := filepath.Join(work, strconv.Itoa(i))
			dir := filepath.Join(base, "out")
			cmd := perfdagChild("run", "c.yaml", "--out", dir)
			cmd.Dir = propWriteDir(t, base, src)
			cmd.Env = append(cmd.Env, signalAtEnv+"="+s.String())
			out, _ := cmd.CombinedOutput()
			if !stoppedBy(cmd, s.sig) {
				t.Fatalf("the interrupted run ended %v, want it stopped by the signal:\n%s", cmd.ProcessState, out)
			}
			if code, out := propRun(base, &st, "resume", dir); code != 0 {
				t.Fatalf("the first resume exited %d:\n%s", code, out)
			}
			if got := exporterOutcome(t, dir); got != want {
				t.Errorf("after the first resume: %s\nuninterrupted: %s", got, want)
			}
		})
	}
}

// exporterOutcome is what a real-time run of the exporter campaign must end with, whatever
// its measured values: every node's last status, the sweep's probes and skipped points, the
// concurrencies dcgm-correlate correlated from the exporter's samples, the atlas's row count.
func exporterOutcome(t *testing.T, dir string) string {
	t.Helper()
	var nodes []string
	for id, r := range finalState(t, dir) {
		nodes = append(nodes, id+"="+r.Status)
	}
	slices.Sort(nodes)
	sw := readSweep(t, dir)
	var corr schema.DCGMCorrelation
	b, err := os.ReadFile(campaigndir.Abs(dir, campaigndir.DCGMCorrelation("knee")))
	if err == nil {
		err = json.Unmarshal(b, &corr)
	}
	if err != nil {
		t.Fatalf("dcgm correlation: %v", err)
	}
	var correlated []int
	for _, p := range corr.Points {
		correlated = append(correlated, p.Concurrency)
	}
	atlas, err := os.ReadFile(campaigndir.Abs(dir, campaigndir.Atlas()))
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("nodes %v; probes %v skipped %v; %s correlated %v; %d atlas rows", nodes, probeSet(sw), sw.Skipped,
		corr.Source, correlated, strings.Count(string(atlas), "\n"))
}
