package lake_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/steps/lake"
	"github.com/perfdag/perfdag/steps/testkit/laketest"
)

// execSQLite runs statements on a SQLite lake behind perfdag's back.
func execSQLite(t *testing.T, url string, stmts ...string) {
	t.Helper()
	loc, err := lake.ParseURL(url, "")
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", loc.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// TestOldLakeGainsNullableColumns: a lake created before atlas_v1 had token_basis takes the
// column on the next publish (old rows NULL) instead of refusing.
func TestOldLakeGainsNullableColumns(t *testing.T) {
	url := sqliteURL(t)
	l := openLake(t, url)
	publish(t, l, laketest.Publication("c1", laketest.Spec{Campaign: "c", Cells: 1, Concs: 1}))
	execSQLite(t, url, "ALTER TABLE atlas_v1 DROP COLUMN token_basis",
		"UPDATE lake_tables SET columns_sha256 = 'before-token-basis' WHERE table_name = 'atlas_v1'")
	publish(t, l, laketest.Publication("c2", laketest.Spec{Campaign: "c", Cells: 1, Concs: 1}))
	execSQLite(t, url, "SELECT token_basis FROM atlas_v1")
	// A NOT NULL column the lake lacks cannot be added: refused before writing.
	execSQLite(t, url, "ALTER TABLE atlas_v1 DROP COLUMN backend",
		"UPDATE lake_tables SET columns_sha256 = 'older' WHERE table_name = 'atlas_v1'")
	_, err := l.Publish(context.Background(), laketest.Publication("c3", laketest.Spec{Campaign: "c", Cells: 1, Concs: 1}), nil)
	if err == nil || !strings.Contains(err.Error(), "new column backend is NOT NULL") {
		t.Fatalf("publish into a lake lacking a NOT NULL column: %v", err)
	}
}

// TestLakeWithoutHistory: a lake written before history_v1 reads and counts that table empty
// (Read, Count, Runs) instead of failing on a missing table, and the next publish creates it.
func TestLakeWithoutHistory(t *testing.T) {
	url := sqliteURL(t)
	l := openLake(t, url)
	p := laketest.Publication("c1", laketest.Spec{Campaign: "c", Cells: 1, Concs: 1})
	publish(t, l, p)
	execSQLite(t, url, "DROP TABLE history_v1", "DELETE FROM lake_tables WHERE table_name = 'history_v1'")
	ctx := context.Background()
	counts, err := l.Count(ctx, "c1")
	if err != nil || countsOf(counts)[lake.HistoryTable] != 0 || countsOf(counts)[lake.AtlasTable] == 0 {
		t.Fatalf("Count of a lake without history_v1: %v %v", counts, err)
	}
	if rows, err := l.Read(ctx, lake.HistoryTable, "c1"); err != nil || len(rows) != 0 {
		t.Errorf("Read: %v %v", rows, err)
	}
	if ids, err := l.Runs(ctx, "c"); err != nil || len(ids) != 0 {
		t.Errorf("Runs: %v %v", ids, err)
	}
	publish(t, l, laketest.Publication("c2", laketest.Spec{Campaign: "c", Cells: 1, Concs: 1}))
	ids, err := l.Runs(ctx, "c")
	if err != nil || strings.Join(ids, ",") != "c2" {
		t.Errorf("Runs after a publish: %v %v", ids, err)
	}
	recs, err := l.Records(ctx, lake.HistoryTable, "c2")
	if err != nil || len(recs) != 1 || !strings.Contains(recs[0], `"verdict":"RED"`) {
		t.Errorf("Records: %v %v", recs, err)
	}
}
