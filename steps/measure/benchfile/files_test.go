package benchfile

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfdag/perfdag/steps/testkit/benchgen"
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
		r, err := fs.Read(SourceSGLang, path, Expect{Load: c}, opts)
		if err != nil {
			t.Fatal(err)
		}
		if r.Load != c || r.Point.Concurrency != c.Concurrency {
			t.Fatalf("read %s, got run at c%d", c, r.Concurrency)
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

// TestFilesHoldTheIndex: a Files that has listed and read every run of a 12 MB file with
// per-request details keeps where each run is, not the file: what it still holds afterwards
// is under a twentieth of the file (read whole, it held all of it, and the run-time import
// points of a campaign share one Files). Live heap after a collection: bytes, not time.
func TestFilesHoldTheIndex(t *testing.T) {
	path := filepath.Join(t.TempDir(), "details.jsonl")
	size, err := benchgen.SGLangDetails(path, 200, 200)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fs := NewFiles()
	runs, err := fs.Runs(SourceSGLang, path)
	if err != nil || len(runs) != 200 {
		t.Fatalf("runs %d, %v", len(runs), err)
	}
	for _, c := range runs {
		if r, err := fs.Read(SourceSGLang, path, Expect{Load: c}, opts); err != nil || len(r.Records) != 200 {
			t.Fatalf("%s: %v", c, err)
		}
	}
	_ = fs.Digest(path)
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	runtime.KeepAlive(fs)
	t.Logf("a Files that read every run of a %d-byte file holds %d bytes", size, held)
	if held > size/20 {
		t.Errorf("a Files that read every run of a %d-byte file holds %d bytes: it keeps the file, not where its runs are", size, held)
	}
}

// TestDigest: an output's digest is sha256 of "name:size\n" and its bytes (an AIPerf
// directory: its two files in name order; "name:missing\n" for one that cannot be read, so a
// FIFO is not waited on; "missing" for no such path), as the import kind's fingerprints hold
// it; a Files hashes each content once and again when the file changes.
func TestDigest(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "r.jsonl")
	body := []byte(read(t, "testdata/sglang-details.jsonl"))
	if err := os.WriteFile(file, body, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := func(parts ...string) string {
		s := sha256.Sum256([]byte(strings.Join(parts, "")))
		return hex.EncodeToString(s[:])
	}
	fs := NewFiles()
	want := sum(fmt.Sprintf("r.jsonl:%d\n", len(body)), string(body))
	for range 3 {
		if got := fs.Digest(file); got != want {
			t.Fatalf("digest %s, want %s", got, want)
		}
	}
	if fs.hashes != 1 {
		t.Errorf("three digests of one content hashed it %d times, want once", fs.hashes)
	}
	if err := os.WriteFile(file, body[:100], 0o644); err != nil {
		t.Fatal(err)
	}
	if got, want := fs.Digest(file), sum("r.jsonl:100\n", string(body[:100])); got != want || fs.hashes != 2 {
		t.Errorf("after a change: %s (%d hashes), want %s", got, fs.hashes, want)
	}

	ap := filepath.Join(dir, "aiperf")
	if err := os.Mkdir(ap, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ap, AIPerfAggregate), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(ap, AIPerfRecords), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, want := fs.Digest(ap), sum(AIPerfAggregate+":2\n{}", AIPerfRecords+":missing\n"); got != want {
		t.Errorf("AIPerf directory with a FIFO for records: %s, want %s", got, want)
	}
	if got := fs.Digest(filepath.Join(dir, "absent")); got != "missing" {
		t.Errorf("no such path: %q", got)
	}
}
