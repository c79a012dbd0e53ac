package strictpublish_test

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/engine/load"
	"github.com/perfdag/perfdag/engine/plan"
	"github.com/perfdag/perfdag/engine/run"
	"github.com/perfdag/perfdag/steps/lake"
	"github.com/perfdag/perfdag/steps/testkit/campaigntest"
	"github.com/perfdag/perfdag/steps/testkit/laketest"
)

// TestPostgresLakeKeepsThePasswordOut publishes through the engine into a real PostgreSQL
// (started by the test) with the password interpolated from the environment into
// publish.lake, then checks that no file of the campaign directory holds it.
func TestPostgresLakeKeepsThePasswordOut(t *testing.T) {
	pg := laketest.Postgres(t)
	base := t.TempDir()
	// publish.lake: postgres://perfdag:${LAKE_PW}@127.0.0.1:PORT/perfdag_lake?sslmode=disable
	c := campaigntest.Campaign{Spec: good, Publish: "  lake: " + strings.Replace(pg.URL(), pg.Password, "${LAKE_PW}", 1) + "\n"}
	f := campaigntest.Write(t, t.TempDir(), base, c)
	dir := f.Dir
	env := func(k string) (string, bool) {
		if k == "LAKE_PW" {
			return pg.Password, true
		}
		return "", false
	}
	loaded, err := load.Bytes("campaign.yaml", base, []byte(c.YAML()), registry(t), load.Options{Lookup: env})
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Compile(loaded)
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	sum, err := run.New(p, dir, run.Options{Registry: registry(t), Log: &log}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if publishNode(sum).Outcome != run.OutRan {
		t.Fatalf("strict-publish: %s %s", publishNode(sum).Outcome, publishNode(sum).Reason)
	}
	rec := readReceipt(t, dir)
	if rec.Driver != "postgres" || rec.Lake != pg.URLNoPassword() {
		t.Errorf("receipt lake %q (%s), want %q", rec.Lake, rec.Driver, pg.URLNoPassword())
	}
	l, err := lake.Open(context.Background(), pg.URL(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close(context.Background())
	counts, err := l.Count(context.Background(), rec.CampaignID)
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range counts {
		// a run no scheduler judged has no verdict.json, so no history_v1 row
		if n.Rows != rec.Tables[i].Rows || (n.Rows == 0) != (n.Table == lake.HistoryTable) {
			t.Errorf("%s: lake holds %d rows, receipt says %d", n.Table, n.Rows, rec.Tables[i].Rows)
		}
	}
	if strings.Contains(log.String(), pg.Password) {
		t.Error("the node log holds the password")
	}
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte(pg.Password)) {
			t.Errorf("%s holds the lake password", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
