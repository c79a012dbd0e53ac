package testkit

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// update is the one -update flag of every test binary that imports testkit: such a test
// package must not declare its own.
var update = flag.Bool("update", false, "rewrite golden files instead of comparing with them")

// Update reports whether the test binary runs with -update (rewrite golden files).
func Update() bool { return *update }

// Golden fails t when got differs from the golden file at path; with -update it first
// rewrites the file (and its directory), so the comparison then passes.
func Golden(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run go test -update after checking the change):\n%s", path, firstDiff(got, want))
	}
}

// firstDiff describes the first line where got and want differ.
func firstDiff(got, want []byte) string {
	g, w := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
	for i := 0; ; i++ {
		if i >= len(g) || i >= len(w) || !bytes.Equal(g[i], w[i]) {
			return fmt.Sprintf("line %d:\n got: %s\nwant: %s", i+1, line(g, i), line(w, i))
		}
	}
}

func line(lines [][]byte, i int) string {
	if i >= len(lines) {
		return "(end of file)"
	}
	return string(lines[i])
}
