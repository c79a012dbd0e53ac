package lake_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/lake"
	"github.com/perfdag/perfdag/steps/testkit/laketest"
)

// TestPostgres runs the lake against a real PostgreSQL server the test starts on loopback
// (Debian's postgresql package; skipped without it, failing when PERFDAG_NO_SKIP=1).
func TestPostgres(t *testing.T) {
	pg := laketest.Postgres(t)
	ctx := context.Background()

	t.Run("publishing twice leaves one copy", func(t *testing.T) {
		l := openLake(t, pg.URL())
		p := laketest.Publication("pg-twice", fullSpec)
		publish(t, l, p)
		snap := snapshot(t, l, p.CampaignID)
		second := publish(t, l, p)
		want := expected(fullSpec)
		for _, c := range second {
			if c.Rows != want[c.Table] || c.Replaced != want[c.Table] {
				t.Errorf("%s: inserted %d replaced %d, want %d", c.Table, c.Rows, c.Replaced, want[c.Table])
			}
		}
		counts, err := l.Count(ctx, p.CampaignID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(countsOf(counts), want) {
			t.Errorf("lake holds %v, want %v", countsOf(counts), want)
		}
		sameSnapshot(t, "second publish", snapshot(t, l, p.CampaignID), snap)
	})

	t.Run("SQLite and PostgreSQL hold identical rows", func(t *testing.T) {
		pgl := openLake(t, pg.URL())
		sql := openLake(t, sqliteURL(t))
		for _, p := range []*lake.Publication{
			laketest.Publication("same-a", fullSpec),
			laketest.Publication("same-b", laketest.Spec{Campaign: "b", Cells: 3, Concs: 3, Undercount: true, FailedCell: true}),
		} {
			if got, want := publish(t, pgl, p), publish(t, sql, p); !reflect.DeepEqual(got, want) {
				t.Errorf("%s: counts differ: postgres %v, sqlite %v", p.CampaignID, got, want)
			}
		}
		for _, tb := range lake.Tables() {
			for _, id := range []string{"same-a", "same-b"} {
				a, err := pgl.Read(ctx, tb.Name, id)
				if err != nil {
					t.Fatal(err)
				}
				b, err := sql.Read(ctx, tb.Name, id)
				if err != nil {
					t.Fatal(err)
				}
				if len(a) == 0 && id == "same-a" { // same-a fills every table
					t.Errorf("%s/%s: no rows", tb.Name, id)
				}
				if len(a) != len(b) {
					t.Errorf("%s/%s: postgres %d rows, sqlite %d", tb.Name, id, len(a), len(b))
					continue
				}
				for i := range a {
					for j, c := range tb.Columns {
						if !reflect.DeepEqual(a[i][j], b[i][j]) {
							t.Errorf("%s/%s row %d column %s: postgres %#v, sqlite %#v", tb.Name, id, i, c.Name, a[i][j], b[i][j])
						}
					}
				}
			}
		}
	})

	t.Run("a failure midway leaves the lake as it was", func(t *testing.T) {
		l := openLake(t, pg.URL())
		id := "pg-fail"
		publish(t, l, laketest.Publication(id, fullSpec))
		before := snapshot(t, l, id)
		p := laketest.Publication(id, laketest.Spec{Campaign: "kimi", Cells: 20, Concs: 8, Variant: 9, Grounded: true})
		inner, n := p.Atlas, 0
		p.Atlas = func(fn func(*schema.AtlasRow) error) error {
			return inner(func(r *schema.AtlasRow) error {
				if n++; n > 120 {
					return errors.New("source broke")
				}
				return fn(r)
			})
		}
		if _, err := l.Publish(ctx, p, nil); err == nil || !strings.Contains(err.Error(), "rolled back") {
			t.Fatalf("Publish = %v, want a rolled-back error", err)
		}
		// Read through a fresh connection: nothing of the aborted transaction is visible.
		sameSnapshot(t, "after the failed publish", snapshot(t, openLake(t, pg.URL()), id), before)
	})

	t.Run("concurrent publishes of one campaign leave one copy", func(t *testing.T) {
		spec := laketest.Spec{Campaign: "c", Cells: 10, Concs: 4, Grounded: true}
		errs := make(chan error, 3)
		for range 3 {
			go func() {
				l, err := lake.Open(ctx, pg.URL(), "")
				if err != nil {
					errs <- err
					return
				}
				defer l.Close(ctx)
				_, err = l.Publish(ctx, laketest.Publication("pg-race", spec), nil)
				errs <- err
			}()
		}
		for range 3 {
			if err := <-errs; err != nil {
				t.Error(err)
			}
		}
		counts, err := openLake(t, pg.URL()).Count(ctx, "pg-race")
		if err != nil {
			t.Fatal(err)
		}
		if got, want := countsOf(counts), expected(spec); !reflect.DeepEqual(got, want) {
			t.Errorf("after three concurrent publishes: %v, want one copy %v", got, want)
		}
	})

	t.Run("password from PGPASSWORD", func(t *testing.T) {
		t.Setenv("PGPASSWORD", pg.Password)
		l := openLake(t, pg.URLNoPassword())
		publish(t, l, laketest.Publication("pg-env", laketest.Spec{Campaign: "env", Cells: 1, Concs: 2}))
		if s := l.Location().String(); strings.Contains(s, pg.Password) {
			t.Errorf("location %q shows the password", s)
		}
	})

	t.Run("a wrong password fails without echoing it", func(t *testing.T) {
		t.Setenv("PGPASSWORD", "")
		wrong := strings.Replace(pg.URL(), pg.Password, "hunter2-not-it", 1)
		_, err := lake.Open(ctx, wrong, "")
		if err == nil {
			t.Fatal("connected with a wrong password")
		}
		if strings.Contains(err.Error(), "hunter2-not-it") || strings.Contains(err.Error(), pg.Password) {
			t.Errorf("error leaks a password: %v", err)
		}
		if !strings.Contains(err.Error(), "open lake postgres://perfdag@127.0.0.1") {
			t.Errorf("error does not name the lake: %v", err)
		}
	})
}

func BenchmarkPublishPostgres(b *testing.B) {
	pg := laketest.Postgres(b)
	spec := laketest.Spec{Campaign: "bench", Cells: 125, Concs: 8, Grounded: true, Roofline: true} // 1008 atlas rows
	p := laketest.Publication("bench-1", spec)
	rows := laketest.Atlas(spec)
	p.Atlas = lake.Rows(rows)
	l := openLake(b, pg.URL())
	b.ResetTimer()
	for range b.N {
		if _, err := l.Publish(context.Background(), p, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(rows)*b.N)/b.Elapsed().Seconds(), "atlas_rows/s")
}
