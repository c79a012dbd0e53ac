package rooflineimport_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/perfdag/perfdag/engine/checkpoint"
	"github.com/perfdag/perfdag/engine/load"
	"github.com/perfdag/perfdag/engine/plan"
	"github.com/perfdag/perfdag/engine/run"
	"github.com/perfdag/perfdag/steps"
)

// campaignRun runs campaign source through the real engine with the shipped registry, in the
// campaign directory dir, with base as the campaign file's directory. It returns the outcome
// of every node and the checkpoint records (results).
func campaignRun(t *testing.T, dir, base, src string, log io.Writer) (map[string]string, map[string]*checkpoint.Record) {
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

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// copyDir copies a flat directory of files (a roofline bundle) so a test can edit its copy.
func copyDir(t *testing.T, from, to string) {
	t.Helper()
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(to, e.Name()), string(b))
	}
}
