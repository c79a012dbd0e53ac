package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/perfdag/perfdag/engine/checkpoint"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/sim"
)

// downCampaign searches [1, 16] of a real HTTP server for an SLO that reads only counts, so
// the knee is the same on any machine: with 2 requests per concurrency, request_count <= 8
// holds up to c4.
const downCampaign = `version: 1
campaign: down
endpoints:
  main: {url: "http://%s", model: perfdag/sim-1}
cells:
  - id: knee
    workload: {shape: custom, input_tokens: 100, output_tokens: 12}
    requests_per_point: 2x
    search: {slo: "request_count <= 8 && error_count == 0", from: 1, to: 16}
`

// dyingSim serves the simulator for its first alive chat requests, then dies: the request
// that finds it dead has its connection cut and the listener closes, so every later request
// is refused. With then set, it serves then instead (a server restarted differently).
func dyingSim(t *testing.T, ln net.Listener, alive int64, then http.Handler) *http.Server {
	t.Helper()
	s := newSim(t, "perfdag/sim-1")
	var left atomic.Int64
	left.Store(alive)
	srv := &http.Server{}
	srv.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case left.Load() > 0 || then == nil && r.URL.Path != "/v1/chat/completions":
			if r.URL.Path == "/v1/chat/completions" {
				left.Add(-1)
			}
			s.ServeHTTP(w, r)
			return
		case then != nil:
			then.ServeHTTP(w, r)
			return
		}
		go srv.Close()
		if c, _, err := http.NewResponseController(w).Hijack(); err == nil {
			_ = c.Close()
		}
	})
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return srv
}

func newSim(t *testing.T, model string) *sim.Sim {
	t.Helper()
	s, err := sim.New(schema.SimConfig{ZeroDelay: true}, model, t.Context().Done())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// writeDown writes downCampaign for a server at addr and returns its path.
func writeDown(t *testing.T, dir, addr string) string {
	t.Helper()
	path := filepath.Join(dir, "down.yaml")
	if err := os.WriteFile(path, fmt.Appendf(nil, downCampaign, addr), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSearchServerDiesMidSearch: the server answers c1 and dies before c16. The dead probe is
// no evidence: the run fails naming it and its error class, sweep_probes.json leaves the knee
// unknown (before, the search bisected through dead probes down to "knee: 1"), and a resume
// with the server back probes c16 again and ends as an uninterrupted run does.
func TestSearchServerDiesMidSearch(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	dir := t.TempDir()
	path := writeDown(t, dir, addr)
	out := filepath.Join(dir, "out")
	srv := dyingSim(t, ln, 2, nil) // c1's two requests
	cmd := perfdagChild("run", path, "--out", out)
	b, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != ExitFailed {
		t.Fatalf("run against a server that died: exit %d (%v), want %d\n%s", code, err, ExitFailed, b)
	}
	_ = srv.Close()
	for _, re := range []string{
		`run-shape\[knee/c16\] +failed +no valid request at concurrency 16: 32 errors \(connect=32\)`,
		`sweep\[knee\] +failed +cell knee: the search stopped with its knee unknown: run-shape\[knee/c16\] had no valid request ` +
			`\(32 errors: connect=32\), which says nothing about the SLO request_count <= 8 && error_count == 0; ` +
			`once the endpoint answers, 'perfdag resume' probes c16 again`,
	} {
		if !regexp.MustCompile(re).Match(b) {
			t.Errorf("run output lacks %s:\n%s", re, b)
		}
	}
	r := readSweep(t, out)
	if r.Knee != 0 || r.KneeUnknown != "run-shape[knee/c16] had no valid request (32 errors: connect=32)" ||
		!slices.Equal(probeSet(r), []int{1, 16}) || !r.Probes[0].Met || r.Probes[1].Met || !r.Probes[1].NoEvidence {
		t.Fatalf("sweep_probes.json after the server died: knee %d unknown %q probes %+v; want c1 met, c16 without evidence, the knee unknown",
			r.Knee, r.KneeUnknown, r.Probes)
	}
	// an unknown knee is no baseline: a later diff would read it as "no knee any more"
	b, err = perfdagChild("baseline", "record", out, "--name", "down", "--registry", filepath.Join(dir, "baselines")).CombinedOutput()
	if err == nil || !regexp.MustCompile(`cell knee's search stopped with its knee unknown \(run-shape\[knee/c16\] had no valid request .*\): resume the campaign`).Match(b) {
		t.Errorf("baseline record of an unknown knee: %v\n%s", err, b)
	}
	recs := finalState(t, out)
	if rec := recs["sweep[knee]"]; rec == nil || rec.Status != checkpoint.Failed || !slices.Equal(rec.Fanout, []schema.Load{schema.Conc(1), schema.Conc(16)}) {
		t.Fatalf("sweep[knee] checkpoint %+v: want failed (so resume searches again)", rec)
	}

	// the server is back on the same port: the first resume probes c16 and finds the knee
	ln, err = net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	up := dyingSim(t, ln, 1<<40, nil)
	b, err = perfdagChild("resume", out).CombinedOutput()
	if err != nil {
		t.Fatalf("resume with the server back: %v\n%s", err, b)
	}
	if !regexp.MustCompile(`run-shape\[knee/c16\] c16: 32/32 ok`).Match(b) || !regexp.MustCompile(`out in .*: 8 ran, 1 reused\n`).Match(b) {
		t.Errorf("resume did not re-measure c16 and reuse c1:\n%s\nc16's failed requests: %s", b, failedRequests(out, "knee", schema.Conc(16)))
	}
	ref := filepath.Join(dir, "ref")
	if b, err := perfdagChild("run", path, "--out", ref).CombinedOutput(); err != nil {
		t.Fatalf("uninterrupted run: %v\n%s", err, b)
	}
	_ = up.Close()
	got, want := readSweep(t, out), readSweep(t, ref)
	if got.Knee != 4 || got.KneeUnknown != "" || !sameProbes(got, want) {
		t.Fatalf("after resume: knee c%d unknown %q probes %+v; uninterrupted: knee c%d probes %+v", got.Knee, got.KneeUnknown, got.Probes, want.Knee, want.Probes)
	}
	if g, w := atlasPoints(t, out), atlasPoints(t, ref); !slices.Equal(g, w) || len(g) != 6 {
		t.Errorf("atlas after resume %v, uninterrupted %v", g, w)
	}
	for _, d := range []string{out, ref} {
		if _, err := os.Stat(filepath.Join(d, campaigndir.Report())); err != nil {
			t.Errorf("%s: no report: %v", d, err)
		}
	}
	gotRecs, wantRecs := finalState(t, out), finalState(t, ref)
	if len(gotRecs) != len(wantRecs) {
		t.Errorf("resume left %d checkpoints, the uninterrupted run %d", len(gotRecs), len(wantRecs))
	}
	for id, w := range wantRecs {
		if g := gotRecs[id]; g == nil || g.Status != checkpoint.Succeeded || w.Status != checkpoint.Succeeded || !slices.Equal(g.Fanout, w.Fanout) {
			t.Errorf("%s: after resume %+v, uninterrupted %+v", id, g, w)
		}
	}
}

// sameProbes compares two searches' probes by what decided them (throughput is timing).
func sameProbes(a, b schema.SweepResult) bool {
	key := func(r schema.SweepResult) []string {
		var out []string
		for _, p := range r.Probes {
			out = append(out, fmt.Sprintf("c%d met=%v %s %s %v", p.Concurrency, p.Met, p.Status, p.Values, p.NoEvidence))
		}
		return out
	}
	return a.Knee == b.Knee && a.KneeAtTop == b.KneeAtTop && slices.Equal(key(a), key(b))
}

// atlasPoints lists an atlas's rows as cell/concurrency/status/request count.
func atlasPoints(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := campaigndir.ScanLines(dir, campaigndir.Atlas(), 1<<20, func(_ int, r *schema.AtlasRow) error {
		out = append(out, fmt.Sprintf("%s/c%d %s %d", r.CellID, r.Concurrency, r.CellStatus, r.NumPrompts))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// TestSearchProbeWithoutPoint: after c1 the server comes back serving another model, so c16's
// run-shape fails before measuring and leaves no point. That probe is no evidence either: the
// sweep fails naming it and why (before, the search bisected through such probes to c1).
func TestSearchProbeWithoutPoint(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path, out := writeDown(t, dir, ln.Addr().String()), filepath.Join(dir, "out")
	dyingSim(t, ln, 2, newSim(t, "other/model"))
	cmd := perfdagChild("run", path, "--out", out)
	b, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != ExitFailed {
		t.Fatalf("exit %d (%v), want %d\n%s", code, err, ExitFailed, b)
	}
	re := `sweep\[knee\] +failed +cell knee: the search stopped with its knee unknown: c16 has no point: run-shape\[knee/c16\]: ` +
		`endpoint main: preflight .*model "perfdag/sim-1" is not served.*; once the endpoint answers, 'perfdag resume' probes c16 again`
	if !regexp.MustCompile(re).Match(b) {
		t.Errorf("run output lacks %s:\n%s", re, b)
	}
	r := readSweep(t, out)
	if r.Knee != 0 || !slices.Equal(probeSet(r), []int{1, 16}) || !r.Probes[1].NoEvidence || r.Probes[1].Status != "failed" {
		t.Fatalf("sweep_probes.json: knee %d unknown %q probes %+v; want c1, then c16 without a point and the knee unknown", r.Knee, r.KneeUnknown, r.Probes)
	}
}

// failedRequests lists a point's failed requests (class and message) from its records.jsonl,
// for a failure message: which errors a run met says why it met them.
func failedRequests(dir, cell string, load schema.Load) string {
	b, err := os.ReadFile(campaigndir.Abs(dir, campaigndir.Records(cell, load)))
	if err != nil {
		return err.Error()
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		var r schema.RequestRecord
		if json.Unmarshal([]byte(line), &r) == nil && r.ErrorClass != "" {
			out = append(out, r.ErrorClass+": "+r.Error)
		}
	}
	return strings.Join(out, "; ")
}
