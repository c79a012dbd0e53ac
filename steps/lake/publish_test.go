package lake_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/lake"
	"github.com/perfdag/perfdag/steps/testkit/laketest"
)

func openLake(t testing.TB, url string) *lake.Lake {
	t.Helper()
	l, err := lake.Open(context.Background(), url, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close(context.Background()) })
	return l
}

func sqliteURL(t testing.TB) string { return "sqlite://" + filepath.Join(t.TempDir(), "lake.db") }

// snapshot reads every table's rows of the given campaigns.
func snapshot(t testing.TB, l *lake.Lake, ids ...string) map[string][][]any {
	t.Helper()
	out := map[string][][]any{}
	for _, tb := range lake.Tables() {
		for _, id := range ids {
			rows, err := l.Read(context.Background(), tb.Name, id)
			if err != nil {
				t.Fatal(err)
			}
			out[tb.Name+"/"+id] = rows
		}
	}
	return out
}

func sameSnapshot(t testing.TB, what string, got, want map[string][][]any) {
	t.Helper()
	for k := range want {
		if !reflect.DeepEqual(got[k], want[k]) {
			t.Errorf("%s: table %s differs: %d rows, want %d", what, k, len(got[k]), len(want[k]))
		}
	}
}

func publish(t testing.TB, l *lake.Lake, p *lake.Publication) []lake.TableCount {
	t.Helper()
	counts, err := l.Publish(context.Background(), p, nil)
	if err != nil {
		t.Fatal(err)
	}
	return counts
}

func countsOf(counts []lake.TableCount) map[string]int {
	out := map[string]int{}
	for _, c := range counts {
		out[c.Table] = c.Rows
	}
	return out
}

var fullSpec = laketest.Spec{Campaign: "kimi", Cells: 6, Concs: 4, Grounded: true, Undercount: true, FailedCell: true, Roofline: true}

// expected counts rows per table straight from the generator, so the lake's count is checked
// against the records, not against itself.
func expected(s laketest.Spec) map[string]int {
	sum := laketest.TPM(s)
	return map[string]int{lake.AtlasTable: len(laketest.Atlas(s)), lake.CampaignTable: 1,
		lake.TPMTable: len(sum.TPMRows()), lake.CostTable: len(sum.CostRows()), lake.RooflineTable: len(laketest.Roofline(s)), lake.HistoryTable: 1}
}

func TestPublishTwiceLeavesOneCopy(t *testing.T) {
	l := openLake(t, sqliteURL(t))
	other := laketest.Publication("20261201T000000Z-other", laketest.Spec{Campaign: "other", Cells: 2, Concs: 2, Grounded: true})
	publish(t, l, other)
	before := snapshot(t, l, other.CampaignID)

	p := laketest.Publication("20261202T130455Z-kimi", fullSpec)
	first := publish(t, l, p)
	snap := snapshot(t, l, p.CampaignID)
	second := publish(t, l, p)

	want := expected(fullSpec)
	// 6 cells × 4 + failed cell × 4 + roofline 4 decode + 4 prefill = 36 atlas rows.
	if want[lake.AtlasTable] != 36 || want[lake.RooflineTable] != 8 {
		t.Fatalf("generator changed: %v", want)
	}
	if got := countsOf(first); !reflect.DeepEqual(got, want) {
		t.Errorf("first publish inserted %v, want %v", got, want)
	}
	for _, c := range second {
		if c.Rows != want[c.Table] || c.Replaced != want[c.Table] {
			t.Errorf("second publish %s: inserted %d replaced %d, want %d and %d", c.Table, c.Rows, c.Replaced, want[c.Table], want[c.Table])
		}
	}
	counts, err := l.Count(context.Background(), p.CampaignID)
	if err != nil {
		t.Fatal(err)
	}
	if got := countsOf(counts); !reflect.DeepEqual(got, want) {
		t.Errorf("lake holds %v after two publishes, want one copy: %v", got, want)
	}
	sameSnapshot(t, "after the second publish", snapshot(t, l, p.CampaignID), snap)
	sameSnapshot(t, "the other campaign", snapshot(t, l, other.CampaignID), before)
}

func TestRepublishReplacesChangedCampaign(t *testing.T) {
	l := openLake(t, sqliteURL(t))
	id := "20261202T130455Z-kimi"
	publish(t, l, laketest.Publication(id, fullSpec))
	smaller := laketest.Spec{Campaign: "kimi", Cells: 2, Concs: 3, Variant: 7, Grounded: false}
	counts := publish(t, l, laketest.Publication(id, smaller))
	old := expected(fullSpec)
	for _, c := range counts {
		if c.Replaced != old[c.Table] {
			t.Errorf("%s: replaced %d rows, want the %d of the first publish", c.Table, c.Replaced, old[c.Table])
		}
	}
	got, err := l.Count(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if want := expected(smaller); !reflect.DeepEqual(countsOf(got), want) {
		t.Errorf("lake holds %v, want only the new publish %v", countsOf(got), want)
	}
}

// TestRowsReadBack: typed columns, NULLs, JSON columns and row_json hold what the record says.
func TestRowsReadBack(t *testing.T) {
	l := openLake(t, sqliteURL(t))
	p := laketest.Publication("c1", fullSpec)
	publish(t, l, p)
	rows, err := l.Read(context.Background(), lake.AtlasTable, "c1")
	if err != nil {
		t.Fatal(err)
	}
	tb, _ := lake.TableNamed(lake.AtlasTable)
	col := func(name string) int {
		for i, c := range tb.Columns {
			if c.Name == name {
				return i
			}
		}
		t.Fatalf("no column %s", name)
		return -1
	}
	src := laketest.Atlas(fullSpec) // atlas order = key order (cell, concurrency, ISL)
	if len(rows) != len(src) {
		t.Fatalf("read %d rows, want %d", len(rows), len(src))
	}
	for i, r := range rows {
		s := src[i]
		var back schema.AtlasRow
		if err := json.Unmarshal([]byte(r[col(lake.ColRowJSON)].(string)), &back); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(normalizeRow(back), normalizeRow(s)) {
			t.Errorf("row %d: row_json does not round-trip", i)
		}
		if r[col("cell_id")] != s.CellID || r[col("concurrency")] != int64(s.Concurrency) || r[col("plot_ready")] != s.PlotReady {
			t.Errorf("row %d: key columns %v %v %v", i, r[col("cell_id")], r[col("concurrency")], r[col("plot_ready")])
		}
		if s.TTFOAvgMs == nil && r[col("ttfo_avg_ms")] != nil {
			t.Errorf("row %d: ttfo_avg_ms should be NULL, is %v", i, r[col("ttfo_avg_ms")])
		}
		if s.TTFTAvgMs != nil && r[col("ttft_avg_ms")] != *s.TTFTAvgMs {
			t.Errorf("row %d: ttft_avg_ms %v, want %v", i, r[col("ttft_avg_ms")], *s.TTFTAvgMs)
		}
		if r[col(lake.ColInputKey)] != lake.InputKey(&s) {
			t.Errorf("row %d: input key %v, want %v", i, r[col(lake.ColInputKey)], lake.InputKey(&s))
		}
		if len(s.Flags) > 0 && r[col("flags")] != `["steady_window_undercount"]` {
			t.Errorf("row %d: flags column %v", i, r[col("flags")])
		}
		if len(s.Flags) == 0 && r[col("flags")] != nil {
			t.Errorf("row %d: flags column %v, want NULL", i, r[col("flags")])
		}
	}
	// The prefill sweep: four rows at concurrency 1, told apart by the input key.
	prefill := 0
	for _, r := range rows {
		if r[col("cell_id")] == laketest.RooflineImportID+"-prefill" && r[col("concurrency")] == int64(1) {
			prefill++
		}
	}
	if prefill != 4 {
		t.Errorf("%d prefill rows at concurrency 1, want 4", prefill)
	}
}

// normalizeRow makes a row comparable after a JSON round trip (ints in extra come back float).
func normalizeRow(r schema.AtlasRow) string {
	b, _ := json.Marshal(r)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	b, _ = json.Marshal(m)
	return string(b)
}

// TestFailedPublishLeavesLakeAsItWas: whatever fails midway — the row source, a constraint,
// a cancelled context — the transaction rolls back and every table holds what it held.
func TestFailedPublishLeavesLakeAsItWas(t *testing.T) {
	id := "20261202T130455Z-kimi"
	big := laketest.Spec{Campaign: "kimi", Cells: 40, Concs: 8, Variant: 3, Grounded: true, Roofline: true}
	boom := errors.New("disk on fire")
	tests := []struct {
		name   string
		break_ func(p *lake.Publication, cancel context.CancelFunc) lake.Progress
		want   string
	}{
		{name: "row source fails after 300 rows", want: "disk on fire", break_: func(p *lake.Publication, _ context.CancelFunc) lake.Progress {
			inner, n := p.Atlas, 0
			p.Atlas = func(fn func(*schema.AtlasRow) error) error {
				return inner(func(r *schema.AtlasRow) error {
					if n++; n > 300 {
						return boom
					}
					return fn(r)
				})
			}
			return nil
		}},
		{name: "duplicate primary key in the last table", want: "roofline_v1", break_: func(p *lake.Publication, _ context.CancelFunc) lake.Progress {
			p.Roofline = append(p.Roofline, p.Roofline[0])
			return nil
		}},
		{name: "context cancelled mid-atlas", want: "context canceled", break_: func(_ *lake.Publication, cancel context.CancelFunc) lake.Progress {
			return func(table string, rows int) {
				if table == lake.AtlasTable && rows >= 100 {
					cancel()
				}
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := openLake(t, sqliteURL(t))
			publish(t, l, laketest.Publication(id, fullSpec))
			publish(t, l, laketest.Publication("other", laketest.Spec{Campaign: "other", Cells: 1, Concs: 2}))
			before := snapshot(t, l, id, "other")

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			p := laketest.Publication(id, big)
			progress := tt.break_(p, cancel)
			_, err := l.Publish(ctx, p, progress)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "rolled back") {
				t.Fatalf("Publish error = %v, want one mentioning %q and the rollback", err, tt.want)
			}
			sameSnapshot(t, "after the failed publish", snapshot(t, l, id, "other"), before)
			// The lake still works: the same publication without the fault goes through.
			publish(t, l, laketest.Publication(id, big))
		})
	}
}

func TestSchemaMismatchRefusesBeforeWriting(t *testing.T) {
	url := sqliteURL(t)
	l := openLake(t, url)
	publish(t, l, laketest.Publication("c1", laketest.Spec{Campaign: "c", Cells: 1, Concs: 1}))
	before := snapshot(t, l, "c1")
	if err := tamperSignature(url, lake.TPMTable); err != nil {
		t.Fatal(err)
	}
	_, err := l.Publish(context.Background(), laketest.Publication("c1", fullSpec), nil)
	if err == nil || !strings.Contains(err.Error(), "table tpm_v1 in this lake was created with other columns") {
		t.Fatalf("Publish into a lake with other columns: %v", err)
	}
	sameSnapshot(t, "after the refused publish", snapshot(t, l, "c1"), before)
}

func TestPublishRejectsBadCampaignID(t *testing.T) {
	l := openLake(t, sqliteURL(t))
	for _, id := range []string{"", "../x", "a b", "x';--"} {
		if _, err := l.Publish(context.Background(), laketest.Publication(id, laketest.Spec{Campaign: "c", Cells: 1, Concs: 1}), nil); err == nil {
			t.Errorf("campaign id %q accepted", id)
		}
	}
}

func TestCountOfEmptyLake(t *testing.T) {
	l := openLake(t, sqliteURL(t))
	counts, err := l.Count(context.Background(), "nothing")
	if err != nil {
		t.Fatal(err)
	}
	if len(counts) != 6 || fmt.Sprint(countsOf(counts)) != "map[atlas_v1:0 campaign_v1:0 cost_v1:0 history_v1:0 roofline_v1:0 tpm_v1:0]" {
		t.Errorf("Count on a fresh lake = %v", counts)
	}
}

func BenchmarkPublishSQLite(b *testing.B) {
	spec := laketest.Spec{Campaign: "bench", Cells: 125, Concs: 8, Grounded: true, Roofline: true} // 1008 atlas rows
	p := laketest.Publication("bench-1", spec)
	rows := laketest.Atlas(spec)
	p.Atlas = lake.Rows(rows)
	l := openLake(b, sqliteURL(b))
	b.ResetTimer()
	for range b.N {
		if _, err := l.Publish(context.Background(), p, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(rows)*b.N)/b.Elapsed().Seconds(), "atlas_rows/s")
}

// TestConcurrentPublishers: publishers on separate connections queue on the write lock
// (BEGIN IMMEDIATE + busy timeout) instead of failing; every campaign lands once.
func TestConcurrentPublishers(t *testing.T) {
	url := sqliteURL(t)
	spec := laketest.Spec{Campaign: "c", Cells: 20, Concs: 4, Grounded: true}
	ids := []string{"c-1", "c-2", "c-3", "c-1"} // c-1 twice: the later publish replaces the earlier
	errs := make(chan error, len(ids))
	for _, id := range ids {
		go func() {
			l, err := lake.Open(context.Background(), url, "")
			if err != nil {
				errs <- err
				return
			}
			defer l.Close(context.Background())
			_, err = l.Publish(context.Background(), laketest.Publication(id, spec), nil)
			errs <- err
		}()
	}
	for range ids {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	l := openLake(t, url)
	for _, id := range ids[:3] {
		counts, err := l.Count(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := countsOf(counts), expected(spec); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v, want %v", id, got, want)
		}
	}
}
