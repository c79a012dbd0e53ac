package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
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

// --print and --json refuse what --into refuses, with the same exit code and the same
// problems: an output the readers refuse (exit 1), and a cell the campaign would refuse
// (exit 3) — which --print used to print, exit 0.
func TestImportPrintRefusesWhatIntoRefuses(t *testing.T) {
	src, err := filepath.Abs("../../testdata/imports")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	vllm, err := os.ReadFile(filepath.Join(src, "vllm-c4.json"))
	if err != nil {
		t.Fatal(err)
	}
	frac := filepath.Join(dir, "frac.json")
	if err := os.WriteFile(frac, bytes.Replace(vllm, []byte(`"max_concurrency": 4`), []byte(`"max_concurrency": 4.5`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	problem := regexp.MustCompile(`(?m)^(?:perfdag: )?\S+:\d+(?::\d+)?: (.+)$`)
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"a fractional concurrency", []string{frac}, ExitFailed, "max_concurrency: holds 4.5: a concurrency is a whole number from 1 to 100000"},
		{"a cell id no campaign takes", []string{filepath.Join(src, "vllm-c4.json"), "--cell", "Bad ID"}, ExitInvalid, `cell id "Bad ID" is not a valid id`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var problems []string
			for _, mode := range [][]string{{"--into", filepath.Join(t.TempDir(), "imported.yaml")}, {"--print"}, {"--json"}} {
				var out, errOut bytes.Buffer
				code := Main(append(append([]string{"import"}, tc.args...), mode...), nil, &out, &errOut)
				var got []string
				for _, m := range problem.FindAllStringSubmatch(errOut.String(), -1) {
					got = append(got, m[1])
				}
				if code != tc.code || out.Len() != 0 || !strings.Contains(errOut.String(), tc.want) {
					t.Errorf("%s: exit %d (want %d), stdout %q\n%s", mode[0], code, tc.code, out.String(), errOut.String())
				}
				if problems == nil {
					problems = got
				} else if !slices.Equal(got, problems) {
					t.Errorf("%s says %q, --into says %q", mode[0], got, problems)
				}
			}
			if len(problems) == 0 {
				t.Errorf("no positioned problem in the refusal")
			}
		})
	}
}
