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
	files := 0
	err := filepath.WalkDir(dirs[0], func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dirs[0], path)
		if rel != campaigndir.Atlas() && filepath.Dir(rel) == "." || filepath.Dir(rel) == "state" {
			return nil // run ids, clocks and the report's creation date live there
		}
		files++
		a, _ := os.ReadFile(path)
		b, err := os.ReadFile(filepath.Join(dirs[1], rel))
		if err != nil {
			t.Errorf("%s: only in the first run", rel)
		} else if !bytes.Equal(a, b) {
			t.Errorf("%s differs between the runs:\n%.400s\n---\n%.400s", rel, a, b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 10 {
		t.Fatalf("compared only %d files", files)
	}
}
