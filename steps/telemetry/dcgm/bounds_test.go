package dcgm

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/engine/bounded"
)

// A frozen file is read only when it is a regular file of at most MaxFrozenBytes.
func TestLoadFrozenBounds(t *testing.T) {
	valid, err := os.ReadFile("testdata/dcgm_frozen_example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	at := filepath.Join(dir, "at.yaml")
	padded := append(valid, '#')
	padded = append(padded, strings.Repeat("x", MaxFrozenBytes-len(padded)-1)+"\n"...)
	if err := os.WriteFile(at, padded, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadFrozen(at); err != nil {
		t.Fatalf("a file of exactly %d bytes: %v", MaxFrozenBytes, err)
	}
	past := filepath.Join(dir, "past.yaml")
	if err := os.WriteFile(past, append(padded, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadFrozen(past); !errors.Is(err, bounded.ErrTooLarge) {
		t.Fatalf("one byte past the limit: %v, want too_large", err)
	}
	if _, err := LoadFrozen("/dev/zero"); !errors.Is(err, bounded.ErrNotRegular) {
		t.Fatalf("/dev/zero: %v, want not_regular_file", err)
	}
}
