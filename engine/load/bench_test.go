package load

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/engine/diag"
)

// The limits' promise — a hostile file is refused in well under a second — lives here, not in
// a timed test: `make bench` reports the time per rejection.

func benchReject(b *testing.B, class string, load func() error) {
	b.Helper()
	b.ReportAllocs()
	for b.Loop() {
		if err := load(); err == nil || !strings.Contains(fmt.Sprint(classesOf(err)), class) {
			b.Fatalf("want a %s problem, got %v", class, err)
		}
	}
}

func classesOf(err error) []string {
	var l diag.List
	errors.As(err, &l)
	return classes(l)
}

func BenchmarkReject50MBFile(b *testing.B) {
	path := filepath.Join(b.TempDir(), "big.yaml")
	if err := os.WriteFile(path, []byte(base+"# "), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.Truncate(path, 50<<20); err != nil {
		b.Fatal(err)
	}
	reg := testRegistry(b)
	benchReject(b, ClassFileSize, func() error { _, err := File(path, reg, Options{}); return err })
}

func BenchmarkReject100kDeep(b *testing.B) {
	src := []byte(base + "x-deep: " + strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000) + "\n")
	reg := testRegistry(b)
	benchReject(b, ClassDepth, func() error { _, err := Bytes("d.yaml", ".", src, reg, Options{}); return err })
}

func BenchmarkRejectBillionLaughs(b *testing.B) {
	var s strings.Builder
	s.WriteString(base + "x-l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&s, "x-l%d: &l%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d, ", i-1), 9), ", "))
	}
	src := []byte(s.String())
	reg := testRegistry(b)
	benchReject(b, ClassAliases, func() error { _, err := Bytes("l.yaml", ".", src, reg, Options{}); return err })
}

// BenchmarkLoadAtSizeLimit is the cost of a valid file at MaxFileBytes (a comment pads it).
func BenchmarkLoadAtSizeLimit(b *testing.B) {
	src := base + "# "
	src += strings.Repeat("x", MaxFileBytes-len(src)-1) + "\n"
	reg := testRegistry(b)
	for b.Loop() {
		if _, err := Bytes("at.yaml", ".", []byte(src), reg, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
