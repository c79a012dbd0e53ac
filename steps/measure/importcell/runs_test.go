package importcell

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// sglangRuns writes an SGLang JSONL of n runs: the sample's line at concurrency 1..n.
func sglangRuns(t testing.TB, n int) string {
	b, err := os.ReadFile(filepath.Join(samples, "sglang-c4.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	line := strings.TrimSpace(string(b))
	var s strings.Builder
	for c := 1; c <= n; c++ {
		s.WriteString(strings.Replace(line, `"max_concurrency": 4`, fmt.Sprintf(`"max_concurrency": %d`, c), 1) + "\n")
	}
	f := filepath.Join(t.TempDir(), fmt.Sprintf("runs%d.jsonl", n))
	if err := os.WriteFile(f, []byte(s.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestBuildManyRunsIsLinear: importing a file of 4n runs allocates about 4× what a file of n
// runs does — each run is parsed once — not 16× (every run re-reading and re-parsing the
// whole file: a 1,000-run JSONL took 60 s and 2.2 GB). Bytes allocated, not time: the
// machine's load does not move them.
func TestBuildManyRunsIsLinear(t *testing.T) {
	alloc := func(n int) uint64 {
		f := sglangRuns(t, n)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		c, _, err := Build([]string{f}, Options{})
		runtime.ReadMemStats(&after)
		if err != nil || len(c.Import.Points) != n {
			t.Fatalf("%d runs: %v (%d points)", n, err, len(c.Import.Points))
		}
		return after.TotalAlloc - before.TotalAlloc
	}
	const n = 40
	small, large := alloc(n), alloc(4*n)
	t.Logf("%d runs: %d B; %d runs: %d B", n, small, 4*n, large)
	if ratio := float64(large) / float64(small); ratio > 8 {
		t.Errorf("%d runs allocate %d B, %d runs %d B: %.1f× for 4× the runs (quadratic: each run re-reads the file)", n, small, 4*n, large, ratio)
	}
}
