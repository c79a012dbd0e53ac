package importkind

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/benchfile"
)

// runEnv is a run environment holding the run's reader of imported files, as steps' Setup
// hands one to every node.
type runEnv struct{ files *benchfile.Files }

func (e *runEnv) ImportFiles() *benchfile.Files { return e.files }

func task(t *testing.T, file string, conc int, env any) *engine.Task {
	t.Helper()
	cell := &schema.Cell{ID: "sg", Workload: schema.Workload{Shape: "custom", InputTokens: 100, OutputTokens: 4},
		Import: &schema.CellImport{Format: benchfile.SourceSGLang, Points: []schema.ImportPoint{{Concurrency: 1, Path: file}, {Concurrency: 2, Path: file}}}}
	return &engine.Task{Node: "import[sg]", Cell: cell, Concurrency: conc, Dir: t.TempDir(), BaseDir: filepath.Dir(file), Env: env}
}

// The run line says where the statistics came from: per-request (with the failed requests
// left out) for a run with SGLang's --output-details lists, and what an aggregate-only run
// cannot know.
func TestRunLine(t *testing.T) {
	file, err := filepath.Abs("../measure/benchfile/testdata/sglang-details.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		conc int
		want []string
	}{
		{2, []string{"c2: sglang-bench (per-request stats), 4 requests (2 failed, left out), TTFT p50 60.0 ms, 28.0 tok/s"}},
		{1, []string{"c1: sglang-bench (aggregate stats; unknown: ", "ttft_ms p90", "osl"}},
	} {
		res, err := run(context.Background(), task(t, file, tc.conc, nil))
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			if !strings.Contains(res.Summary, w) {
				t.Errorf("c%d run line %q lacks %q", tc.conc, res.Summary, w)
			}
		}
		if r := res.Value.(*Result); tc.conc == 2 && (r.StatsFrom != benchfile.StatsPerRequest || r.ErrorCount != 2) {
			t.Errorf("c2 result: stats from %s, %d errors", r.StatsFrom, r.ErrorCount)
		}
	}
}

// The import points of one run read a file of several runs through the run's reader: the
// second point does not read the file again. Shown by changing the file behind the reader's
// back without changing its size or time: a point reading it anew would see the change.
func TestPointsShareTheRunsRead(t *testing.T) {
	src, err := os.ReadFile("../measure/benchfile/testdata/sglang-details.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "runs.jsonl")
	if err := os.WriteFile(file, src, 0o644); err != nil {
		t.Fatal(err)
	}
	env := &runEnv{files: benchfile.NewFiles()}
	if _, err := run(context.Background(), task(t, file, 1, env)); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(strings.Repeat("x", len(src))), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(file, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	if _, err := run(context.Background(), task(t, file, 2, env)); err != nil {
		t.Errorf("the second point read the file again: %v", err)
	}
	if _, err := run(context.Background(), task(t, file, 2, nil)); err == nil {
		t.Error("a point without the run's reader read the file's old content")
	}
}
