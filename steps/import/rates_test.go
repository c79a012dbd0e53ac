package importkind

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/measure/benchfile"
)

// An imported cell's rate points are checked like its concurrencies (a file for each, named
// once, by a concurrency or a rate), and one is imported into the folder of its key with the
// load it measured: r2.5-cap8 from an SGLang run with --request-rate 2.5 --max-concurrency 8.
func TestRatePoint(t *testing.T) {
	src, err := os.ReadFile("../measure/benchfile/testdata/sglang-bench_serving.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	run1 := strings.Replace(strings.Replace(string(src), `"request_rate": Infinity`, `"request_rate": 2.5`, 1), `"max_concurrency": 4`, `"max_concurrency": 8`, 1)
	file := filepath.Join(t.TempDir(), "rates.jsonl")
	if err := os.WriteFile(file, []byte(string(src)+run1), 0o644); err != nil {
		t.Fatal(err)
	}
	cell := schema.Cell{ID: "sg", Workload: schema.Workload{Shape: "custom", InputTokens: 550, OutputTokens: 16},
		Concurrencies: []int{4}, Rates: []float64{2.5}, MaxInFlight: 8,
		Import: &schema.CellImport{Format: benchfile.SourceSGLang, Points: []schema.ImportPoint{{Concurrency: 4, Path: file}, {Rate: 2.5, Path: file}}}}
	if errs := check(&schema.Campaign{Cells: []schema.Cell{cell}}, nil, nil); len(errs) > 0 {
		t.Fatalf("check: %v", errs)
	}
	l := schema.RateAt(2.5, 8)
	tk := &engine.Task{Node: "import[sg/r2.5-cap8]", Cell: &cell, Load: l, Dir: t.TempDir(), BaseDir: filepath.Dir(file)}
	res, err := run(context.Background(), tk)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Summary, "r2.5-cap8: sglang-bench (aggregate stats") {
		t.Errorf("run line %q", res.Summary)
	}
	b, err := os.ReadFile(filepath.Join(tk.Dir, campaigndir.Point("sg", l)))
	if err != nil {
		t.Fatal(err)
	}
	var p schema.Point
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	if p.PointLoad() != l || p.RequestRate != 2.5 || p.Concurrency != 8 || p.Arrival != schema.ArrivalPoisson {
		t.Errorf("point load %s request_rate %v concurrency %d arrival %q; want r2.5-cap8, poisson", p.PointLoad(), p.RequestRate, p.Concurrency, p.Arrival)
	}
	if r := res.Value.(*Result); r.Load != l || r.Concurrency != 8 {
		t.Errorf("result load %s concurrency %d", r.Load, r.Concurrency)
	}

	// The closed-loop run is not the rate point: importing it as one names the mismatch.
	cell.Import.Points[1].Path = filepath.Join(filepath.Dir(file), "closed.jsonl")
	if err := os.WriteFile(cell.Import.Points[1].Path, src, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := run(context.Background(), tk); err == nil || !strings.Contains(err.Error(), "file measured concurrency 4 (c4), the cell names request rate 2.5/s capped at 8 in flight (r2.5-cap8)") {
		t.Errorf("closed-loop file as a rate point: %v", err)
	}
}

// What check refuses of an imported cell's points, at the field.
func TestCheckRatePoints(t *testing.T) {
	base := func() schema.Cell {
		return schema.Cell{ID: "x", Concurrencies: []int{4}, Rates: []float64{2}, MaxInFlight: 8,
			Import: &schema.CellImport{Format: benchfile.SourceVLLM, Points: []schema.ImportPoint{{Concurrency: 4, Path: "a"}, {Rate: 2, Path: "b"}}}}
	}
	for _, tc := range []struct {
		name string
		edit func(*schema.Cell)
		path string
		msg  string
	}{
		{"both", func(c *schema.Cell) { c.Import.Points[1].Concurrency = 8 }, "cells[0].import.points[1]", "a concurrency or a rate, not both nor neither"},
		{"rate twice", func(c *schema.Cell) { c.Import.Points[0] = schema.ImportPoint{Rate: 2, Path: "a"} }, "cells[0].import.points[1].rate", "2 req/s (cap 8) imported twice"},
		{"rate not listed", func(c *schema.Cell) { c.Import.Points[1].Rate = 3 }, "cells[0].import.points[1].rate", "3 req/s (cap 8) is not a point of the cell"},
		{"rate without file", func(c *schema.Cell) { c.Import.Points = c.Import.Points[:1] }, "cells[0].import.points", "2 req/s (cap 8) has no imported file"},
	} {
		c := base()
		tc.edit(&c)
		errs := check(&schema.Campaign{Cells: []schema.Cell{c}}, nil, nil)
		found := false
		for _, err := range errs {
			if fe, ok := err.(*engine.FieldError); ok && fe.Path == tc.path && strings.Contains(fe.Err.Error(), tc.msg) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: %v; want %s: ...%s", tc.name, errs, tc.path, tc.msg)
		}
	}
}
