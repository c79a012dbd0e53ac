package atlas

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/testkit"
)

// fixture40 writes the synthetic 40-cell atlas of the seed (the GLM-5.1 layout): hardware
// {H100, B200} × strategy {EP, TP} × MTP {on, off} × max_num_batched_tokens {1024..16384},
// six concurrencies each. Cell 17 loses c32 (missing) and c16 (failed) and is partial; cell 29
// fails every point. Plot-ready points: 38 full × 6 + 4 of the partial cell = 232.
func fixture40(t testing.TB, dir string) []campaigndir.CellFiles {
	concs := []int{1, 2, 4, 8, 16, 32}
	var ids []campaigndir.CellFiles
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
					files, err := WriteCell(dir, cell.ID, rows, status)
					if err != nil {
						t.Fatal(err)
					}
					ids = append(ids, files)
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
	r := campaigndir.Unrecorded(dir)
	cov, err := AggregateDir(context.Background(), r, campaigndir.Atlas(), ids, func(*schema.AtlasRow) error { observed++; return nil })
	if err != nil {
		t.Fatal(err)
	}
	const want = "Coverage: 40 atlas cells | 38 full sweeps | 1 partial sweep | 1 failed cell | 232 plot-ready concurrency points"
	if cov.String() != want {
		t.Fatalf("coverage\n got %s\nwant %s", cov, want)
	}
	if cov.Rows != 240 || observed != 240 {
		t.Errorf("rows %d, observed %d, want 240", cov.Rows, observed)
	}
	// Reading atlas.jsonl back yields the same coverage, in order.
	var again Coverage
	aw := NewWriter(&bytes.Buffer{})
	err = Scan(context.Background(), r, campaigndir.Atlas(), func(r *schema.AtlasRow) error { return aw.Write(r) })
	if err != nil {
		t.Fatal(err)
	}
	again = aw.Coverage()
	if again != cov {
		t.Errorf("re-read coverage %+v, want %+v", again, cov)
	}
	// a file the reader does not know as a step output is refused, whatever it holds
	refused := campaigndir.Reader{Dir: dir, Digest: func(string) (string, bool) { return "", false }}
	if err := Scan(context.Background(), refused, campaigndir.Atlas(), func(*schema.AtlasRow) error { return nil }); !errors.Is(err, campaigndir.ErrNotRecorded) {
		t.Errorf("unrecorded atlas read: %v", err)
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
	if got := cov.String(); got != "Coverage: 2 atlas cells | 1 full sweep | 0 partial sweeps | 1 failed cell | 2 plot-ready concurrency points" {
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
	files, err := WriteCell(dir, "c1", rows, status)
	if err != nil {
		t.Fatal(err)
	}
	r := campaigndir.Unrecorded(dir)
	write := func(rel, body string) {
		t.Helper()
		if err := campaigndir.WriteFile(campaigndir.Abs(dir, rel), []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	before, _ := os.ReadFile(campaigndir.Abs(dir, files.Normalized))
	missing := campaigndir.CellFiles{Cell: "nope", Normalized: campaigndir.Normalized("nope"), Status: campaigndir.CellStatus("nope")}
	tests := []struct {
		name  string
		setup func()
		run   func() error
		want  []string
	}{
		{"unknown field in normalized rows", func() { write(files.Normalized, `[{"cell_id":"c1","bogus":1}]`) },
			func() error { _, _, err := ReadCell(r, files); return err }, []string{files.Normalized, "bogus"}},
		{"status disagrees", func() { write(files.Normalized, string(before)); write(files.Status, "partial\n") },
			func() error { _, _, err := ReadCell(r, files); return err }, []string{files.Normalized, "cell_status"}},
		{"bad status", func() { write(files.Status, "done\n") },
			func() error { _, _, err := ReadCell(r, files); return err }, []string{files.Status, `"done"`}},
		{"missing cell", func() {},
			func() error {
				_, err := AggregateDir(context.Background(), r, campaigndir.Atlas(), []campaigndir.CellFiles{missing})
				return err
			}, []string{missing.Normalized}},
		{"changed since recorded", func() { write(files.Status, "full\n") },
			func() error {
				changed := campaigndir.Reader{Dir: dir, Digest: func(string) (string, bool) { return campaigndir.Digest([]byte("other")), true }}
				_, _, err := ReadCell(changed, files)
				return err
			}, []string{files.Normalized, "changed after the step that wrote it ended"}},
		{"bad atlas line", func() {
			write(campaigndir.Atlas(), "{\"cell_id\":\"a\"}\n\n{\"concurrency\":\"x\"}\n")
		}, func() error {
			return Scan(context.Background(), r, campaigndir.Atlas(), func(*schema.AtlasRow) error { return nil })
		}, []string{campaigndir.Atlas() + ":3", "concurrency"}},
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
	r := campaigndir.Unrecorded(dir)
	if _, err := AggregateDir(context.Background(), r, campaigndir.Atlas(), ids); err != nil {
		t.Fatal(err)
	}
	old, _ := os.ReadFile(campaigndir.Abs(dir, campaigndir.Atlas()))
	if err := os.WriteFile(campaigndir.Abs(dir, ids[39].Status), []byte("bogus\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := AggregateDir(context.Background(), r, campaigndir.Atlas(), ids); err == nil {
		t.Fatal("aggregate over a bad cell succeeded")
	}
	now, _ := os.ReadFile(campaigndir.Abs(dir, campaigndir.Atlas()))
	if !bytes.Equal(old, now) {
		t.Error("a failed aggregate changed atlas.jsonl")
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, "."+campaigndir.Atlas()+".tmp-*"))
	if len(leftovers) != 0 {
		t.Errorf("temp files left: %v", leftovers)
	}
}

func TestAttachVerdicts(t *testing.T) {
	rows, _ := Normalize("camp", testCell("c1", 1, 2), []schema.Point{okPoint("c1", 1), okPoint("c1", 2)}, nil, nil)
	AttachVerdicts(rows, []schema.GateVerdict{
		{Gate: "fast", Node: "run-shape[c1/c2]", Cell: "c1", Concurrency: 2, Severity: schema.SeverityFail},
		{Gate: "fast", Node: "run-shape[c1/c1]", Cell: "c1", Concurrency: 1, Severity: schema.SeverityFail, Passed: true},
		{Gate: "grounded", Node: "dcgm[c1]", Cell: "c1", Severity: schema.SeverityWarn},
		{Gate: "other", Node: "run-shape[c2/c1]", Cell: "c2", Concurrency: 1, Severity: schema.SeverityFail},
	})
	if len(rows[0].Gates) != 1 || rows[0].Gates[0].Gate != "grounded" || rows[0].GateFailed() {
		t.Errorf("c1 carries %+v", rows[0].Gates)
	}
	if len(rows[1].Gates) != 2 || !rows[1].GateFailed() {
		t.Errorf("c2 carries %+v", rows[1].Gates)
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

// The coverage line's counts agree in number: one of each is singular ("1 partial sweep"),
// none and two plural — not the seed's "1 partial sweeps".
func TestCoverageLineAgreesInNumber(t *testing.T) {
	for _, tc := range []struct {
		c    Coverage
		want string
	}{
		{Coverage{Cells: 1, Full: 1, Partial: 1, Failed: 1, PlotReady: 1},
			"Coverage: 1 atlas cell | 1 full sweep | 1 partial sweep | 1 failed cell | 1 plot-ready concurrency point"},
		{Coverage{Cells: 2, Full: 2, Partial: 2, Failed: 2, PlotReady: 2},
			"Coverage: 2 atlas cells | 2 full sweeps | 2 partial sweeps | 2 failed cells | 2 plot-ready concurrency points"},
		{Coverage{}, "Coverage: 0 atlas cells | 0 full sweeps | 0 partial sweeps | 0 failed cells | 0 plot-ready concurrency points"},
	} {
		if got := tc.c.String(); got != tc.want {
			t.Errorf("Coverage%+v.String()\n got %q\nwant %q", tc.c, got, tc.want)
		}
	}
}
