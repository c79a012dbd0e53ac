package lake_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/lake"
	"github.com/perfdag/perfdag/steps/testkit/laketest"
)

// A row with a per-request slo publishes its slo_attainment, goodput_req_s and the counts
// (goodput_json) as columns; a row without one has them NULL, not 0.
func TestGoodputColumns(t *testing.T) {
	l := openLake(t, sqliteURL(t))
	p := laketest.Publication("c1", fullSpec)
	rows := laketest.Atlas(fullSpec)
	g := schema.Goodput{SLO: schema.SLO{TTFTMs: schema.F(2000)}, Requests: 40, Good: 39, Failed: 1}
	rows[0].SLOAttainment, rows[0].GoodputReqS, rows[0].Goodput = schema.F(0.975), schema.F(3.9), &g
	p.Atlas = lake.Rows(rows)
	publish(t, l, p)
	back, err := l.Read(context.Background(), lake.AtlasTable, "c1")
	if err != nil {
		t.Fatal(err)
	}
	tb, _ := lake.TableNamed(lake.AtlasTable)
	col := map[string]int{}
	for i, c := range tb.Columns {
		col[c.Name] = i
	}
	found := false
	for _, r := range back {
		if r[col["cell_id"]] != rows[0].CellID || r[col["concurrency"]] != int64(rows[0].Concurrency) || r[col[lake.ColInputKey]] != lake.InputKey(&rows[0]) {
			if r[col["slo_attainment"]] != nil || r[col["goodput_req_s"]] != nil || r[col["goodput_json"]] != nil {
				t.Errorf("row %v c%v without slo: %v %v %v", r[col["cell_id"]], r[col["concurrency"]], r[col["slo_attainment"]], r[col["goodput_req_s"]], r[col["goodput_json"]])
			}
			continue
		}
		found = true
		var got schema.Goodput
		if err := json.Unmarshal([]byte(r[col["goodput_json"]].(string)), &got); err != nil {
			t.Fatal(err)
		}
		if r[col["slo_attainment"]] != 0.975 || r[col["goodput_req_s"]] != 3.9 || got.Good != 39 || *got.SLO.TTFTMs != 2000 {
			t.Errorf("goodput columns %v %v %+v", r[col["slo_attainment"]], r[col["goodput_req_s"]], got)
		}
	}
	if !found {
		t.Fatal("the row with goodput was not read back")
	}
}
