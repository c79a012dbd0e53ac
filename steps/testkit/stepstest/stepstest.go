// Package stepstest runs step kinds through the real engine for the step packages' tests.
package stepstest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/engine/checkpoint"
	"github.com/perfdag/perfdag/engine/diag"
	"github.com/perfdag/perfdag/engine/load"
	"github.com/perfdag/perfdag/engine/plan"
	"github.com/perfdag/perfdag/engine/run"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps"
	runshape "github.com/perfdag/perfdag/steps/run-shape"
)

// noEnv is the environment lookup of every load here: no variable is set.
func noEnv(string) (string, bool) { return "", false }

// Run runs campaign source src through the engine with steps.Registry() in campaign directory
// dir, with base as the campaign file's directory and log taking the nodes' logs (nil discards
// them); it returns the outcome of every node and the checkpoint records (results). Its
// run-shape measures nothing: it offers the point a test staged with WritePoint (and the
// samples staged beside it) as its result, so the steps downstream read them exactly as they
// read a measurement; a point not staged fails.
func Run(t testing.TB, dir, base, src string, log io.Writer) (map[string]string, map[string]*checkpoint.Record) {
	t.Helper()
	reg, err := Registry()
	if err != nil {
		t.Fatal(err)
	}
	c, err := load.Bytes("campaign.yaml", base, []byte(src), reg, load.Options{Lookup: noEnv})
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	p, err := plan.Compile(c)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := run.New(p, dir, run.Options{Registry: reg, Parallel: 2, Log: log}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, n := range sum.Nodes {
		out[n.Node] = n.Outcome
		if n.Outcome == run.OutFailed {
			t.Logf("%s failed: %s", n.Node, n.Reason)
		}
	}
	recs, err := checkpoint.ReadOnly(dir).LoadAll()
	if err != nil {
		t.Fatal(err)
	}
	return out, recs
}

// Validate loads campaign source src with steps.Registry() and returns its problems (nil when valid).
func Validate(t testing.TB, src string) error {
	t.Helper()
	reg, err := steps.Registry()
	if err != nil {
		t.Fatal(err)
	}
	_, err = load.Bytes("campaign.yaml", t.TempDir(), []byte(src), reg, load.Options{Lookup: noEnv})
	return err
}

// OneProblem validates campaign source src and returns its one problem, failing t unless
// there is exactly one.
func OneProblem(t testing.TB, src string) *diag.Diagnostic {
	t.Helper()
	var l diag.List
	if err := Validate(t, src); !errors.As(err, &l) || len(l) != 1 {
		t.Fatalf("want one problem, got %v", err)
	}
	return l[0]
}

// Result decodes node's recorded result in recs into v, failing t when there is none.
func Result(t testing.TB, recs map[string]*checkpoint.Record, node string, v any) {
	t.Helper()
	r := recs[node]
	if r == nil {
		t.Fatalf("no checkpoint for %s", node)
	}
	if err := json.Unmarshal(r.Result, v); err != nil {
		t.Fatalf("%s result: %v", node, err)
	}
}

// OKPoint is a valid point at concurrency c on 8 GPUs with round numbers: 4·c prompts (so no
// steady-window undercount), TTFT 100+c ms, ITL 20 ms, output 50·c tok/s/GPU.
func OKPoint(cell string, c int) schema.Point {
	n := 4 * c
	return schema.Point{
		Schema: "point_v1", Cell: cell, Concurrency: c, Shape: "aa-1k", Mode: "synthetic", GPUs: 8,
		NumPrompts: n, RequestCount: n, Status: "ok", WindowS: 60,
		StartedAt: "2026-05-01T10:00:00Z", EndedAt: "2026-05-01T10:01:00Z",
		TTFT:                  &schema.Stat{Unit: "ms", Count: n, Avg: 100 + float64(c), P50: 90, P90: 150, P95: 160, P99: 200},
		ITL:                   &schema.Stat{Unit: "ms", Count: n, Avg: 20, P50: 19, P99: 30},
		RequestLatency:        &schema.Stat{Unit: "ms", Count: n, Avg: 20000, P50: 19000, P99: 25000},
		TPSUser:               &schema.Stat{Unit: "tok/s", Count: n, Avg: 50},
		TTFOCoverage:          1,
		RequestThroughput:     0.5 * float64(c),
		OutputTokenThroughput: 400 * float64(c),
		TotalTokenThroughput:  800 * float64(c),
		OutputTokPerSPerGPU:   50 * float64(c),
		TotalTokPerSPerGPU:    100 * float64(c),
		AAOutputSpeed:         51,
		MeanISL:               1000,
		MeanOSL:               1000,
	}
}

// WritePoint stages p where run-shape writes a point, for Run's run-shape to offer.
func WritePoint(t testing.TB, dir string, p schema.Point) {
	t.Helper()
	if _, err := campaigndir.WriteJSON(dir, campaigndir.Point(p.Cell, p.PointLoad()), p); err != nil {
		t.Fatal(err)
	}
}

// AtlasRows reads a campaign directory's atlas back, a row a line; a missing, empty or
// unreadable atlas fails the test.
func AtlasRows(t testing.TB, dir string) []schema.AtlasRow {
	t.Helper()
	b, err := os.ReadFile(campaigndir.Abs(dir, campaigndir.Atlas()))
	if err != nil {
		t.Fatal(err)
	}
	var rows []schema.AtlasRow
	for line := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
		var r schema.AtlasRow
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%s: %v", campaigndir.Atlas(), err)
		}
		rows = append(rows, r)
	}
	return rows
}

// Registry is steps.Registry() with run-shape replaced by one that offers staged points.
func Registry() (*engine.Registry, error) {
	reg, err := steps.Registry()
	if err != nil {
		return nil, err
	}
	var kinds []engine.Kind
	for _, name := range reg.Names() {
		k, _ := reg.Lookup(name)
		if name == runshape.Kind.Name {
			k.Run, k.Inputs = staged, func(t *engine.Task) any { return map[string]any{"cell": t.Cell.ID, "c": t.Load.Key()} }
		}
		kinds = append(kinds, k)
	}
	out, err := engine.NewRegistry(kinds...)
	if err != nil {
		return nil, err
	}
	out.Default, out.Setup, out.RuleContext = reg.Default, nil, reg.RuleContext
	return out, nil
}

// staged is the test run-shape: the staged point and whatever samples sit beside it.
func staged(_ context.Context, t *engine.Task) (engine.Result, error) {
	files := campaigndir.PointFiles{Cell: t.Cell.ID, Load: t.Load, Concurrency: t.Load.InFlight()}
	var p schema.Point
	found, err := campaigndir.ReadJSON(t.Dir, campaigndir.Point(t.Cell.ID, t.Load), &p)
	if err != nil || !found {
		return engine.Result{}, fmt.Errorf("no staged point for %s (stepstest.WritePoint): %v", t.Node, err)
	}
	files.Point = campaigndir.Point(t.Cell.ID, t.Load)
	for rel, dst := range map[string]*string{
		campaigndir.Records(t.Cell.ID, t.Load):        &files.Records,
		campaigndir.DCGMSamples(t.Cell.ID, t.Load):    &files.DCGMSamples,
		campaigndir.MetricsSamples(t.Cell.ID, t.Load): &files.MetricsSamples,
	} {
		if _, err := os.Stat(campaigndir.Abs(t.Dir, rel)); err == nil {
			*dst = rel
		}
	}
	res := runshape.ResultOf(p, files)
	out := engine.Result{Value: res, Outputs: files.List(), Summary: "staged " + t.Node}
	if p.Status == "failed" {
		return out, fmt.Errorf("staged point %s failed", t.Node)
	}
	return out, nil
}
