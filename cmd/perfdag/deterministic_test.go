package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/perfdag/perfdag/schema/campaigndir"
)

const deterministicCampaign = `version: 1
campaign: det
endpoints:
  main: {url: "sim://", model: m, sim: {deterministic: true, reasoning: true, reasoning_tokens: 5, faults: {http_500: 0.1}}}
cells:
  - {id: a, workload: {shape: custom, input_tokens: 100, output_tokens: 20}, concurrencies: [1, 4]}
  - {id: b, workload: {shape: custom, input_tokens: 300, output_tokens: 10}, concurrencies: [2]}
`

// Two runs of a campaign on a deterministic simulator write identical measurements: every
// file under cells/ (records, points, normalized rows, DCGM and spec results) and the atlas
// are byte-equal, though the runs' ids, directories and clocks differ.
func TestDeterministicSimRunsEqual(t *testing.T) {
	work := t.TempDir()
	file := filepath.Join(work, "det.yaml")
	if err := os.WriteFile(file, []byte(deterministicCampaign), 0o644); err != nil {
		t.Fatal(err)
	}
	var dirs [2]string
	for i := range dirs {
		dirs[i] = filepath.Join(work, []string{"one", "two"}[i])
		if out, err := perfdagChild("run", file, "--out", dirs[i]).CombinedOutput(); err != nil {
			t.Fatalf("run %d: %v\n%s", i, err, out)
		}
	}
	skip := func(rel string) bool { // run ids, clocks and the report's creation date live there
		return rel != campaigndir.Atlas() && filepath.Dir(rel) == "." || filepath.Dir(rel) == "state"
	}
	if files := sameFiles(t, dirs[0], dirs[1], skip); files < 10 {
		t.Fatalf("compared only %d files", files)
	}
}

// sameFiles reports every file of a or b (relative paths skip does not exclude) that the other
// lacks or holds with other bytes, and returns how many files were compared.
func sameFiles(t *testing.T, a, b string, skip func(rel string) bool) int {
	t.Helper()
	files := 0
	for i, dir := range []string{a, b} {
		other := []string{b, a}[i]
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(dir, path)
			if skip(rel) {
				return nil
			}
			x, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			y, err := os.ReadFile(filepath.Join(other, rel))
			switch {
			case err != nil:
				t.Errorf("%s: only in %s", rel, dir)
			case i == 0 && !bytes.Equal(x, y):
				t.Errorf("%s differs:\n%.400s\n---\n%.400s", rel, x, y)
			case i == 0:
				files++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return files
}
