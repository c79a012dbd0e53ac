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
