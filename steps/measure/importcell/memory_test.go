package importcell

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/steps/testkit/benchgen"
)

// memChild, when set, names the file the child process of TestBuildMemoryIsOneRun builds a
// cell of.
const memChild = "PERFDAG_TEST_IMPORT_MEM_FILE"

// TestBuildMemoryIsOneRun: building the cell of a 40 MB SGLang JSONL of 600 runs with
// per-request details (about 70 kB a run) holds about one run at a time, not the file: the
// heap the Go runtime took from the OS during the build (HeapSys, which never shrinks: a
// high-water mark) grows by less than a third of the file. Read whole, the file, its copy
// with Infinity quoted and every run's records peaked at several times its size. Measured in
// a child process, whose heap no other test has grown, collecting garbage early (GOGC=10) so
// its heap follows what is live; bytes, not time.
func TestBuildMemoryIsOneRun(t *testing.T) {
	if path := os.Getenv(memChild); path != "" {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		c, points, err := Build([]string{path}, Options{})
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("points=%d heap-sys-growth=%d\n", len(c.Import.Points), after.HeapSys-before.HeapSys)
		runtime.KeepAlive(points)
		return
	}
	const runs = 600
	path := filepath.Join(t.TempDir(), "details.jsonl")
	size, err := benchgen.SGLangDetails(path, runs, 220)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestBuildMemoryIsOneRun$", "-test.count=1")
	cmd.Env = append(os.Environ(), memChild+"="+path, "GOGC=10") // collect early: the heap then follows what is live
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var n int
	var growth uint64
	line := out[strings.Index(string(out), "points="):]
	if _, err := fmt.Sscanf(string(line), "points=%d heap-sys-growth=%d", &n, &growth); err != nil || n != runs {
		t.Fatalf("child said %q (%v), want %d points", out, err, runs)
	}
	t.Logf("file %s MB, %d runs: the heap grew by %s MB", mb(uint64(size)), runs, mb(growth))
	if growth > uint64(size)/3 {
		t.Errorf("building the cell of a %s MB file of %d runs grew the heap by %s MB: more than a third of the file, so it holds the file, not one run",
			mb(uint64(size)), runs, mb(growth))
	}
}

func mb(n uint64) string { return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) }
