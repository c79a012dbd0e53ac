package rooflineimport

import (
	"os"
	"path/filepath"
	"testing"
)

// TestDigestBundle: any edit inside the bundle changes its digest; a file outside it reached
// through a symlink is never read, so editing that file does not.
func TestDigestBundle(t *testing.T) {
	root := t.TempDir()
	b := filepath.Join(root, "bundle")
	outside := filepath.Join(root, "secret.txt")
	write := func(path, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(b, "decode.json"), `{"points": []}`)
	write(filepath.Join(b, "extra", "notes.md"), "n")
	write(outside, "v1")
	if err := os.Symlink(outside, filepath.Join(b, "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("decode.json", filepath.Join(b, "inner.json")); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name    string
		edit    func()
		changes bool
	}{
		{"nothing", func() {}, false},
		{"file outside, reached by symlink", func() { write(outside, "v2") }, false},
		{"content", func() { write(filepath.Join(b, "decode.json"), `{"points": [1]}`) }, true},
		{"nested file", func() { write(filepath.Join(b, "extra", "notes.md"), "m") }, true},
		{"new file", func() { write(filepath.Join(b, "prefill.json"), "{}") }, true},
		{"rename", func() {
			if err := os.Rename(filepath.Join(b, "prefill.json"), filepath.Join(b, "prefill2.json")); err != nil {
				t.Fatal(err)
			}
		}, true},
	}
	prev := DigestBundle(b)
	for _, s := range steps {
		s.edit()
		got := DigestBundle(b)
		if (got != prev) != s.changes {
			t.Errorf("%s: digest changed = %v, want %v", s.name, got != prev, s.changes)
		}
		prev = got
	}
	if d := DigestBundle(filepath.Join(root, "missing")); d[:11] != "unreadable:" {
		t.Errorf("missing bundle digest %q", d)
	}
}
