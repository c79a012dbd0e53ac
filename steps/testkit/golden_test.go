package testkit

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB that keeps the failures instead of failing the test.
type recorder struct {
	testing.TB
	errors, fatals []string
}

type fatal struct{}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.fatals = append(r.fatals, fmt.Sprintf(format, args...))
	panic(fatal{})
}

func golden(t *testing.T, path string, got []byte) (r *recorder) {
	r = &recorder{TB: t}
	defer func() {
		if v := recover(); v != nil && v != (fatal{}) {
			panic(v)
		}
	}()
	Golden(r, path, got)
	return r
}

func TestGolden(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.golden")
	if r := golden(t, path, []byte("a\n")); len(r.fatals) != 1 || !strings.Contains(r.fatals[0], "-update") {
		t.Errorf("missing file: fatals %q", r.fatals)
	}
	WriteFile(t, path, "a\nb\nc\n")
	if r := golden(t, path, []byte("a\nb\nc\n")); len(r.errors)+len(r.fatals) != 0 {
		t.Errorf("equal: %q %q", r.errors, r.fatals)
	}
	r := golden(t, path, []byte("a\nB\nc\n"))
	if len(r.errors) != 1 || !strings.Contains(r.errors[0], "line 2:\n got: B\nwant: b") {
		t.Errorf("differs: %q", r.errors)
	}
	r = golden(t, path, []byte("a\nb\nc"))
	if len(r.errors) != 1 || !strings.HasSuffix(r.errors[0], "line 4:\n got: (end of file)\nwant: ") {
		t.Errorf("missing newline: %q", r.errors)
	}

	if err := flag.Set("update", "true"); err != nil {
		t.Fatal(err)
	}
	defer flag.Set("update", "false")
	sub := filepath.Join(t.TempDir(), "new", "y.golden")
	if r := golden(t, sub, []byte("new\n")); len(r.errors)+len(r.fatals) != 0 {
		t.Errorf("update: %q %q", r.errors, r.fatals)
	}
	if b, err := os.ReadFile(sub); err != nil || string(b) != "new\n" {
		t.Errorf("update wrote %q, %v", b, err)
	}
}
