package championselect_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/perfdag/perfdag/engine/checkpoint"
	"github.com/perfdag/perfdag/engine/load"
	"github.com/perfdag/perfdag/engine/plan"
	"github.com/perfdag/perfdag/engine/run"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps"
)

// campaignRun runs campaign source through the real engine with the shipped registry, in the
// campaign directory dir, with base as the campaign file's directory. It returns the outcome
// of every node and the checkpoint records (results).
func campaignRun(t *testing.T, dir, base, src string) (map[string]string, map[string]*checkpoint.Record) {
	t.Helper()
	reg, err := steps.Registry()
	if err != nil {
		t.Fatal(err)
	}
	c, err := load.Bytes("campaign.yaml", base, []byte(src), reg, load.Options{Lookup: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	p, err := plan.Compile(c)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := run.New(p, dir, run.Options{Registry: reg, Parallel: 2}).Run(context.Background())
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

// validate loads campaign source and returns its problems (nil when valid).
func validate(t *testing.T, src string) error {
	t.Helper()
	reg, err := steps.Registry()
	if err != nil {
		t.Fatal(err)
	}
	_, err = load.Bytes("campaign.yaml", t.TempDir(), []byte(src), reg, load.Options{Lookup: func(string) (string, bool) { return "", false }})
	return err
}

// result decodes a node's recorded result into v.
func result(t *testing.T, recs map[string]*checkpoint.Record, node string, v any) {
	t.Helper()
	r := recs[node]
	if r == nil {
		t.Fatalf("no checkpoint for %s", node)
	}
	if err := json.Unmarshal(r.Result, v); err != nil {
		t.Fatalf("%s result: %v", node, err)
	}
}

// okPoint is a valid point at concurrency c on 8 GPUs with round numbers: 4·c prompts (so no
// steady-window undercount), TTFT 100+c ms, ITL 20 ms, output 50·c tok/s/GPU.
func okPoint(cell string, c int) schema.Point {
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

// writePoint writes cells/<cell>/raw/c<N>/point.json as run-shape does.
func writePoint(t *testing.T, dir string, p schema.Point) {
	t.Helper()
	writeJSON(t, filepath.Join(dir, "cells", p.Cell, "raw", "c"+strconv.Itoa(p.Concurrency), "point.json"), p)
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, string(b))
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
