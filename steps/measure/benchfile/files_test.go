package benchfile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// manyRuns writes an SGLang JSONL of n runs (the sample's line at concurrency 1..n).
func manyRuns(t testing.TB, n int) string {
	line := strings.TrimSpace(read(t, "testdata/sglang-bench_serving.jsonl"))
	var b strings.Builder
	for c := 1; c <= n; c++ {
		b.WriteString(strings.Replace(line, `"max_concurrency": 4`, fmt.Sprintf(`"max_concurrency": %d`, c), 1))
		b.WriteByte('\n')
	}
	f := filepath.Join(t.TempDir(), "runs.jsonl")
	if err := os.WriteFile(f, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// parses counts the full parses of path's runs by a Files.
func parses(fs *Files, path string) int {
	n := 0
	for _, r := range fs.serve[path].runs {
		n += r.parses
	}
	return n
}

// TestFilesReadOnce: reading every run of a 1,000-run file through one Files reads the file
// once and parses each run once, plus the first once more (its keys say what the file is):
// the import CLI. Reading one run parses that run and the first, not the other 998: an
// import point at run time. A file changed on disk is read again.
func TestFilesReadOnce(t *testing.T) {
	const n = 1000
	path := manyRuns(t, n)
	fs := NewFiles()
	runs, err := fs.Runs(SourceSGLang, path)
	if err != nil || len(runs) != n {
		t.Fatalf("runs %d, %v", len(runs), err)
	}
	for _, c := range runs {
		r, err := fs.Read(SourceSGLang, path, Expect{Concurrency: c}, opts)
		if err != nil {
			t.Fatal(err)
		}
		if r.Concurrency != c || r.Point.Concurrency != c {
			t.Fatalf("read c%d, got run at c%d", c, r.Concurrency)
		}
	}
	if fs.reads != 1 || parses(fs, path) != n+1 {
		t.Errorf("%d runs read through one Files: the file read %d times, %d run parses; want 1 read, %d parses", n, fs.reads, parses(fs, path), n+1)
	}

	one := NewFiles()
	if _, err := one.Read(SourceSGLang, path, Expect{Concurrency: 500}, opts); err != nil {
		t.Fatal(err)
	}
	if got := parses(one, path); got != 2 {
		t.Errorf("one run of %d read: %d run parses, want 2 (the first and run 500)", n, got)
	}

	later := time.Now().Add(time.Second)
	if err := os.WriteFile(path, []byte(read(t, "testdata/sglang-bench_serving.jsonl")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	if r, err := fs.Read(SourceSGLang, path, Expect{Concurrency: 4}, opts); err != nil || fs.reads != 2 || len(fs.serve[path].runs) != 1 || r.Concurrency != 4 {
		t.Errorf("after the file changed: %d reads, %v", fs.reads, err)
	}
}

// The import points of a run read through one Files at once (nodes run in parallel): each
// gets its own run, and the file is read once (go test -race checks the sharing).
func TestFilesConcurrentReads(t *testing.T) {
	path := manyRuns(t, 64)
	fs := NewFiles()
	errs := make(chan error, 64)
	for c := 1; c <= 64; c++ {
		go func() {
			r, err := fs.Read(SourceSGLang, path, Expect{Concurrency: c}, opts)
			if err == nil && r.Point.Concurrency != c {
				err = fmt.Errorf("read c%d, got the run at c%d", c, r.Point.Concurrency)
			}
			errs <- err
		}()
	}
	for range 64 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if fs.reads != 1 {
		t.Errorf("64 points read the file %d times, want once", fs.reads)
	}
}
