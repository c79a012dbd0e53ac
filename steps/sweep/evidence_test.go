package sweep

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// searchTask is a task of a cell searching [1, 16] for "error_count == 0 && ttft_p50_ms < 100".
func searchTask(t *testing.T) *engine.Task {
	t.Helper()
	c := &schema.Campaign{Version: 1, Campaign: "c", Endpoints: map[string]schema.Endpoint{"main": {URL: "sim://", Model: "m"}},
		Cells: []schema.Cell{{ID: "k", Search: &schema.Search{SLO: "error_count == 0 && ttft_p50_ms < 100", From: 1, To: 16}}}}
	return &engine.Task{Campaign: c, Cell: &c.Cells[0], Dir: t.TempDir()}
}

// probe is the group at conc whose run-shape had valid of n requests, the rest failing with
// class; a point without a valid request failed (as run-shape fails it), keeping its result.
func probe(conc, valid, n int, class string) engine.Probe {
	p := &campaigndir.PointResult{Cell: "k", Concurrency: conc, NumPrompts: n, RequestCount: valid, ErrorCount: n - valid, Status: "ok"}
	switch {
	case valid == 0:
		p.Status = "failed"
	case valid < n:
		p.Status = "partial"
	}
	if valid > 0 {
		ttft := 20.0
		p.TTFTP50Ms = &ttft
	}
	if n > valid {
		p.ErrorClasses = []string{fmt.Sprintf("%s=%d", class, n-valid)}
	}
	u := engine.Upstream{Node: fmt.Sprintf("run-shape[k/c%d]", conc), Step: "run-shape", Kind: "run-shape", Cell: "k", Load: schema.Conc(conc), Result: p}
	pr := engine.Probe{Load: schema.Conc(conc)}
	if valid == 0 {
		u.Failed = "no valid request"
		pr.Failed = u.Node + ": " + u.Failed
	}
	pr.Upstream = []engine.Upstream{u}
	return pr
}

func readSweepFile(t *testing.T, dir string) schema.SweepResult {
	t.Helper()
	var r schema.SweepResult
	b, err := os.ReadFile(filepath.Join(dir, campaigndir.Sweep("k")))
	if err == nil {
		err = json.Unmarshal(b, &r)
	}
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A probe with no valid request stops the search: Next asks for nothing more, and the sweep
// fails with its knee unknown, naming the probe and its error class. (Before, the dead c16
// counted as a miss and the search bisected down to a knee of c1.)
func TestSearchStopsOnProbeWithoutEvidence(t *testing.T) {
	task := searchTask(t)
	fo, err := start(task)
	if err != nil {
		t.Fatal(err)
	}
	ok, dead := probe(1, 2, 2, ""), probe(16, 0, 32, schema.ErrorConnect)
	next, err := fo.Next([]engine.Probe{ok}, nil)
	if err != nil || !slices.Equal(next, []schema.Load{schema.Conc(16)}) {
		t.Fatalf("after c1: next %v, %v; want [16]", next, err)
	}
	next, err = fo.Next([]engine.Probe{ok, dead}, nil)
	if err != nil || len(next) != 0 {
		t.Fatalf("after a dead c16: next %v, %v; want the search stopped", next, err)
	}

	task.Upstream = slices.Concat(ok.Upstream, dead.Upstream)
	res, err := run(t.Context(), task)
	if err == nil {
		t.Fatalf("a search stopped on a dead probe succeeded: %s", res.Summary)
	}
	for _, want := range []string{"knee unknown", "run-shape[k/c16] had no valid request (32 errors: connect=32)", "probes c16 again"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	r := readSweepFile(t, task.Dir)
	if r.Knee != 0 || !strings.Contains(r.KneeUnknown, "connect=32") || len(r.Probes) != 2 || !r.Probes[1].NoEvidence || r.Probes[0].NoEvidence || !r.Probes[0].Met {
		t.Fatalf("sweep_probes.json: knee %d unknown %q probes %+v; want knee unknown, c1 met, c16 without evidence", r.Knee, r.KneeUnknown, r.Probes)
	}
	if v, ok := res.Value.(*Result); !ok || v.Unknown == "" || v.Knee != 0 || len(res.Outputs) != 1 {
		t.Fatalf("result %+v outputs %v: want the knee unknown and sweep_probes.json kept as evidence", res.Value, res.Outputs)
	}
}

// A group that failed before measuring (no point at all, e.g. the model is not served) is no
// evidence either; its failure is named.
func TestSearchStopsOnProbeWithoutPoint(t *testing.T) {
	task := searchTask(t)
	fo, err := start(task)
	if err != nil {
		t.Fatal(err)
	}
	lost := engine.Probe{Load: schema.Conc(16), Failed: "run-shape[k/c16]: preflight: model m is not served",
		Upstream: []engine.Upstream{{Node: "run-shape[k/c16]", Step: "run-shape", Kind: "run-shape", Cell: "k", Load: schema.Conc(16), Failed: "preflight: model m is not served"}}}
	next, err := fo.Next([]engine.Probe{probe(1, 2, 2, ""), lost}, nil)
	if err != nil || len(next) != 0 {
		t.Fatalf("after a c16 without a point: next %v, %v; want the search stopped", next, err)
	}
	task.Upstream = slices.Concat(probe(1, 2, 2, "").Upstream, lost.Upstream)
	_, err = run(t.Context(), task)
	if err == nil || !strings.Contains(err.Error(), "c16 has no point: run-shape[k/c16]: preflight: model m is not served") {
		t.Fatalf("error %v: want the pointless probe named with its failure", err)
	}
}

// A probe with some valid requests is evidence, errors or not: the SLO decides (here its
// error_count == 0 clause misses), and the search bisects on.
func TestSearchPartialProbeIsEvidence(t *testing.T) {
	task := searchTask(t)
	fo, err := start(task)
	if err != nil {
		t.Fatal(err)
	}
	partial := probe(16, 30, 32, schema.ErrorHTTP)
	next, err := fo.Next([]engine.Probe{probe(1, 2, 2, ""), partial}, nil)
	if err != nil || !slices.Equal(next, []schema.Load{schema.Conc(8)}) {
		t.Fatalf("after a partial c16: next %v, %v; want the bisection's c8", next, err)
	}
	task.Upstream = slices.Concat(probe(1, 2, 2, "").Upstream, partial.Upstream)
	if _, err := run(t.Context(), task); err != nil {
		t.Fatal(err)
	}
	r := readSweepFile(t, task.Dir)
	if r.KneeUnknown != "" || r.Probes[1].Met || r.Probes[1].NoEvidence || !strings.Contains(r.Probes[1].Values, "error_count = 2") {
		t.Fatalf("partial c16: %+v (unknown %q); want it judged by the SLO as a miss", r.Probes[1], r.KneeUnknown)
	}
}
