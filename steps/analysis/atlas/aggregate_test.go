package atlas

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/testkit"
)

// fixture40 writes the synthetic 40-cell atlas of the seed (the GLM-5.1 layout): hardware
// {H100, B200} × strategy {EP, TP} × MTP {on, off} × max_num_batched_tokens {1024..16384},
// six concurrencies each. Cell 17 loses c32 (missing) and c16 (failed) and is partial; cell 29
// fails every point. Plot-ready points: 38 full × 6 + 4 of the partial cell = 232.
func fixture40(t testing.TB, dir string) []string {
	concs := []int{1, 2, 4, 8, 16, 32}
	var ids []string
	n := 0
	for _, hw := range []string{"H100", "B200"} {
		for _, strat := range []string{"EP", "TP"} {
			for _, mtp := range []bool{true, false} {
				for _, mbt := range []int{1024, 2048, 4096, 8192, 16384} {
					cell := testCell(fmt.Sprintf("%s-%s-mtp%v-mbt%d", strings.ToLower(hw), strings.ToLower(strat), mtp, mbt), concs...)
					cell.Hardware, cell.ParallelStrategy, cell.MTP, cell.MaxNumBatchedTokens = hw, strat, &mtp, mbt
					var points []schema.Point
					for _, c := range concs {
						p := okPoint(cell.ID, c)
						switch {
						case n == 17 && c == 32:
							continue
						case n == 17 && c == 16, n == 29:
							p.RequestCount, p.ErrorCount, p.Status = 0, p.NumPrompts, PointFailed
						}
						points = append(points, p)
					}
					rows, status := Normalize("glm51-multihw", cell, points, nil, nil)
					if err := WriteCell(dir, cell.ID, rows, status); err != nil {
						t.Fatal(err)
					}
					ids = append(ids, cell.ID)
					n++
				}
			}
		}
	}
	return ids
}

func TestAggregateDirFixture40(t *testing.T) {
	dir := t.TempDir()
	ids := fixture40(t, dir)
	observed := 0
	cov, err := AggregateDir(context.Background(), dir, ids, func(*schema.AtlasRow) error { observed++; return nil })
	if err != nil {
		t.Fatal(err)
	}
	const want = "Coverage: 40 atlas cells | 38 full sweeps | 1 partial sweeps | 1 failed cells | 232 plot-ready concurrency points"
	if cov.String() != want {
		t.Fatalf("coverage\n got %s\nwant %s", cov, want)
	}
	if cov.Rows != 240 || observed != 240 {
		t.Errorf("rows %d, observed %d, want 240", cov.Rows, observed)
	}
	// Reading atlas.jsonl back yields the same coverage, in order.
	var again Coverage
	aw := NewWriter(&bytes.Buffer{})
	err = ScanFile(context.Background(), filepath.Join(dir, AtlasFile), func(r *schema.AtlasRow) error { return aw.Write(r) })
	if err != nil {
		t.Fatal(err)
	}
	again = aw.Coverage()
	if again != cov {
		t.Errorf("re-read coverage %+v, want %+v", again, cov)
	}
	// nil cell list scans the directory and finds the same 40 cells.
	cov2, err := AggregateDir(context.Background(), dir, nil)
	if err != nil || cov2 != cov {
		t.Errorf("scan: %+v, %v", cov2, err)
	}
}

func TestAggregateGolden(t *testing.T) {
	a, _ := Normalize("camp", testCell("b-cell", 2, 1), []schema.Point{okPoint("b-cell", 1), okPoint("b-cell", 2)}, nil, nil)
	b, _ := Normalize("camp", testCell("a-cell", 4), nil, nil, nil)
	var buf bytes.Buffer
	cov, err := Aggregate(&buf, append(a, b...)...) // out of order on purpose: Aggregate sorts
	if err != nil {
		t.Fatal(err)
	}
	if got := cov.String(); got != "Coverage: 2 atlas cells | 1 full sweeps | 0 partial sweeps | 1 failed cells | 2 plot-ready concurrency points" {
		t.Errorf("coverage %s", got)
	}
	testkit.Golden(t, filepath.Join("testdata", "aggregate.golden.jsonl"), buf.Bytes())
}

func TestWriterRejects(t *testing.T) {
	row := func(cell string, c int, status string) schema.AtlasRow {
		return schema.AtlasRow{CellID: cell, Concurrency: c, CellStatus: status}
	}
	tests := []struct {
		name string
		rows []schema.AtlasRow
		want string
	}{
		{"out of order", []schema.AtlasRow{row("b", 1, "full"), row("a", 1, "full")}, "out of order"},
		{"duplicate", []schema.AtlasRow{row("a", 1, "full"), row("a", 1, "full")}, "duplicate"},
		{"unknown status", []schema.AtlasRow{row("a", 1, "done")}, `cell_status "done"`},
		{"status changes", []schema.AtlasRow{row("a", 1, "full"), row("a", 2, "partial")}, "differs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := NewWriter(&bytes.Buffer{})
			var err error
			for i := range tt.rows {
				if err = w.Write(&tt.rows[i]); err != nil {
					break
				}
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

func TestBadFilesNameFileAndField(t *testing.T) {
	dir := t.TempDir()
	rows, status := Normalize("camp", testCell("c1", 1), []schema.Point{okPoint("c1", 1)}, nil, nil)
	if err := WriteCell(dir, "c1", rows, status); err != nil {
		t.Fatal(err)
	}
	cellDir := CellDir(dir, "c1")
	write := func(name, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(cellDir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(cellDir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before, _ := os.ReadFile(filepath.Join(cellDir, NormalizedFile))

	tests := []struct {
		name  string
		setup func()
		run   func() error
		want  []string
	}{
		{"unknown field in normalized.json", func() { write(NormalizedFile, `[{"cell_id":"c1","bogus":1}]`) },
			func() error { _, _, err := ReadCell(dir, "c1"); return err }, []string{NormalizedFile, "bogus"}},
		{"status disagrees", func() { write(NormalizedFile, string(before)); write(StatusFile, "partial\n") },
			func() error { _, _, err := ReadCell(dir, "c1"); return err }, []string{NormalizedFile, "cell_status"}},
		{"bad status.txt", func() { write(StatusFile, "done\n") },
			func() error { _, _, err := ReadCell(dir, "c1"); return err }, []string{StatusFile, `"done"`}},
		{"missing cell", func() {},
			func() error { _, err := AggregateDir(context.Background(), dir, []string{"nope"}); return err }, []string{filepath.Join("nope", NormalizedFile)}},
		{"malformed point.json", func() { write("raw/c1/point.json", `{"ttft_ms": "fast"}`) },
			func() error {
				_, _, err := NormalizeCell(context.Background(), dir, "camp", testCell("c1", 1))
				return err
			}, []string{filepath.Join("raw", "c1", "point.json"), "ttft_ms"}},
		{"bad atlas line", func() {
			_ = os.WriteFile(filepath.Join(dir, AtlasFile), []byte("{\"cell_id\":\"a\"}\n\n{\"concurrency\":\"x\"}\n"), 0o644)
		}, func() error {
			return ScanFile(context.Background(), filepath.Join(dir, AtlasFile), func(*schema.AtlasRow) error { return nil })
		}, []string{AtlasFile + ":3", "concurrency"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.setup()
			err := tt.run()
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err %q does not name %q", err, w)
				}
			}
		})
	}
}

func TestAggregateFailureLeavesOldAtlas(t *testing.T) {
	dir := t.TempDir()
	ids := fixture40(t, dir)
	if _, err := AggregateDir(context.Background(), dir, ids); err != nil {
		t.Fatal(err)
	}
	old, _ := os.ReadFile(filepath.Join(dir, AtlasFile))
	if err := os.WriteFile(filepath.Join(CellDir(dir, ids[39]), StatusFile), []byte("bogus\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := AggregateDir(context.Background(), dir, ids); err == nil {
		t.Fatal("aggregate over a bad cell succeeded")
	}
	now, _ := os.ReadFile(filepath.Join(dir, AtlasFile))
	if !bytes.Equal(old, now) {
		t.Error("a failed aggregate changed atlas.jsonl")
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, ".atlas.jsonl.tmp-*"))
	if len(leftovers) != 0 {
		t.Errorf("temp files left: %v", leftovers)
	}
}

func TestNormalizeCellReadsFiles(t *testing.T) {
	dir := t.TempDir()
	cell := testCell("c1", 1, 2)
	cellDir := CellDir(dir, cell.ID)
	mustJSON(t, filepath.Join(cellDir, "raw", "c1", "point.json"), okPoint("c1", 1))
	mustJSON(t, filepath.Join(cellDir, "spec_metrics", "c1.json"), schema.SpecWindow{AcceptanceLength: schema.F(1.8)})
	mustJSON(t, filepath.Join(cellDir, "dcgm_correlation.json"), schema.DCGMCorrelation{DCGMGrounded: true, Points: []schema.DCGMPoint{{Concurrency: 1, SMActive: schema.F(0.3)}}})
	rows, status, err := NormalizeCell(context.Background(), dir, "camp", cell)
	if err != nil {
		t.Fatal(err)
	}
	if status != schema.CellPartial || len(rows) != 2 || !rows[0].PlotReady || rows[1].PlotReady ||
		*rows[0].AcceptanceLength != 1.8 || rows[0].SolRigor != schema.RigorL3 {
		t.Fatalf("status %q rows %+v", status, rows)
	}
	got, gotStatus, err := ReadCell(dir, cell.ID)
	if err != nil || gotStatus != status || len(got) != 2 {
		t.Fatalf("read back: %v %q %d", err, gotStatus, len(got))
	}
}

func mustJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
