package importcell

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
)

const existing = "version: 1\ncampaign: c\n# kept\ncells:\n  - id: a\n    concurrencies: [1]\n"

// AppendInto writes the file only when the validator accepts the new text: created when
// missing, appended otherwise, through a symlink, keeping the mode; refused or unreadable,
// the file is left as it was and the error says why.
func TestAppendInto(t *testing.T) {
	accept := func([]byte) error { return nil }
	refuse := func([]byte) error { return errors.New("endpoint e: unknown") }
	cases := []struct {
		name     string
		setup    func(t *testing.T, dir string) string // returns the path passed
		cells    []schema.Cell
		validate func([]byte) error
		created  bool
		wantErr  string // "source", "append" (InvalidError, no Src), "validate" (InvalidError with Src)
	}{
		{name: "new file in a new directory", created: true, cells: []schema.Cell{testCell("new")}, validate: accept,
			setup: func(t *testing.T, dir string) string { return filepath.Join(dir, "sub", "imported.yaml") }},
		{name: "existing file keeps its mode", cells: []schema.Cell{testCell("new")}, validate: accept,
			setup: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "c.yaml")
				mustWrite(t, p, existing, 0o600)
				return p
			}},
		{name: "through a symlink", cells: []schema.Cell{testCell("new")}, validate: accept,
			setup: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "real.yaml")
				mustWrite(t, p, existing, 0o644)
				l := filepath.Join(dir, "link.yaml")
				if err := os.Symlink(p, l); err != nil {
					t.Fatal(err)
				}
				return l
			}},
		{name: "validator refuses", cells: []schema.Cell{testCell("new")}, validate: refuse, wantErr: "validate",
			setup: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "c.yaml")
				mustWrite(t, p, existing, 0o644)
				return p
			}},
		{name: "duplicate id", cells: []schema.Cell{testCell("a")}, validate: accept, wantErr: "append",
			setup: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "c.yaml")
				mustWrite(t, p, existing, 0o644)
				return p
			}},
		{name: "unreadable: a directory", cells: []schema.Cell{testCell("new")}, validate: accept, wantErr: "source",
			setup: func(t *testing.T, dir string) string { return dir }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := tc.setup(t, dir)
			before, _ := os.ReadFile(path)
			beforeSt, _ := os.Stat(path)
			var validated []byte
			created, err := AppendInto(path, tc.cells, func(src []byte) error {
				validated = src
				return tc.validate(src)
			})
			var (
				srcErr *SourceError
				invErr *InvalidError
			)
			switch tc.wantErr {
			case "source":
				if !errors.As(err, &srcErr) || srcErr.Path != path {
					t.Fatalf("err = %v, want a SourceError for %s", err, path)
				}
			case "append":
				if !errors.As(err, &invErr) || invErr.Src != nil || !strings.Contains(err.Error(), "a") {
					t.Fatalf("err = %#v, want an InvalidError without Src", err)
				}
			case "validate":
				if !errors.As(err, &invErr) || string(invErr.Src) != string(validated) || !strings.Contains(err.Error(), "endpoint e") {
					t.Fatalf("err = %#v, want the validator's InvalidError with the refused text", err)
				}
			case "":
				if err != nil {
					t.Fatal(err)
				}
			}
			if tc.wantErr != "" {
				after, _ := os.ReadFile(path)
				if string(after) != string(before) {
					t.Fatalf("refused, yet the file changed:\n%s", after)
				}
				return
			}
			if created != tc.created {
				t.Errorf("created = %v, want %v", created, tc.created)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(validated) {
				t.Errorf("wrote text other than the validated one:\n%s\nvalidated:\n%s", got, validated)
			}
			if !strings.Contains(string(got), "- id: new") || !created && !strings.HasPrefix(string(got), existing) {
				t.Errorf("file does not hold the old text then the new cell:\n%s", got)
			}
			if created {
				return
			}
			if lst, _ := os.Lstat(path); strings.HasSuffix(path, "link.yaml") && lst.Mode()&os.ModeSymlink == 0 {
				t.Errorf("the symlink was replaced by a file")
			}
			if st, _ := os.Stat(path); st.Mode().Perm() != beforeSt.Mode().Perm() {
				t.Errorf("mode = %v, want %v", st.Mode().Perm(), beforeSt.Mode().Perm())
			}
		})
	}
}

func mustWrite(t *testing.T, p, s string, perm os.FileMode) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, perm); err != nil { // umask
		t.Fatal(err)
	}
}
