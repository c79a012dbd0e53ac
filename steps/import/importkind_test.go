package importkind

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
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
	return &engine.Task{Node: "import[sg]", Cell: cell, Load: schema.Conc(conc), Dir: t.TempDir(), BaseDir: filepath.Dir(file), Env: env}
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
// second point does not index the file again, it reads its own run only. Shown by changing
// the first run behind the reader's back without changing the file's size or time: a point
// reading the file anew would see the change.
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
	first := bytes.IndexByte(src, '\n')
	if err := os.WriteFile(file, append([]byte(strings.Repeat("x", first)), src[first:]...), 0o644); err != nil {
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

// The import points of one run share the digest of their file (a fingerprint input): a file
// of a thousand runs is hashed once, not once a point. Shown as above: after the file changes
// behind the reader's back (same size and time), the second point's digest is the first's,
// a point without the run's reader sees the change. The digest is the one fingerprints held
// before it was shared: sha256 of "name:size\n" and the bytes.
func TestPointsShareTheDigest(t *testing.T) {
	src, err := os.ReadFile("../measure/benchfile/testdata/sglang-details.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "runs.jsonl")
	if err := os.WriteFile(file, src, 0o644); err != nil {
		t.Fatal(err)
	}
	content := func(tk *engine.Task) string { return inputs(tk).(map[string]any)["content"].(string) }
	env := &runEnv{files: benchfile.NewFiles()}
	first := content(task(t, file, 1, env))
	sum := sha256.Sum256(append([]byte(fmt.Sprintf("runs.jsonl:%d\n", len(src))), src...))
	if first != hex.EncodeToString(sum[:]) {
		t.Errorf("digest %s, want sha256 of \"runs.jsonl:%d\\n\" and the file: %x", first, len(src), sum)
	}
	st, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, bytes.Repeat([]byte("x"), len(src)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(file, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	if got := content(task(t, file, 2, env)); got != first {
		t.Errorf("the second point hashed the file again: %s, want %s", got, first)
	}
	if got := content(task(t, file, 2, nil)); got == first {
		t.Error("a point without the run's reader did not see the file's new content")
	}
}
