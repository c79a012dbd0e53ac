package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportIntoKeepsTheFile: --into rewrites the campaign file atomically (no temp file
// left beside it), through a symlink to the file it names (the link stays a link), keeping
// the file's mode.
func TestImportIntoKeepsTheFile(t *testing.T) {
	dir := t.TempDir()
	src, err := filepath.Abs("../../testdata/imports")
	if err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(dir, "real.yaml")
	importInto := func(into, cell, file string) {
		t.Helper()
		var out, errOut bytes.Buffer
		if code := Main([]string{"import", filepath.Join(src, file), "--into", into, "--cell", cell}, nil, &out, &errOut); code != ExitOK {
			t.Fatalf("import %s: exit %d\n%s%s", file, code, out.String(), errOut.String())
		}
	}
	importInto(real, "vllm", "vllm-c4.json") // creates the campaign
	if err := os.Chmod(real, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.yaml")
	if err := os.Symlink("real.yaml", link); err != nil {
		t.Fatal(err)
	}
	importInto(link, "sglang", "sglang-c4.jsonl")

	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("link.yaml is no longer a symlink: %v %v", st.Mode(), err)
	}
	st, err := os.Stat(real)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want the file's own 0600", st.Mode().Perm())
	}
	b, _ := os.ReadFile(real)
	if !strings.Contains(string(b), "id: vllm") || !strings.Contains(string(b), "id: sglang") {
		t.Errorf("real.yaml lacks a cell:\n%s", b)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("directory holds %v, want real.yaml and link.yaml only", names)
	}
}
