package report

import (
	"math"
	"testing"

	"github.com/perfdag/perfdag/schema"
)

func TestDelta(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	for _, tc := range []struct {
		name       string
		m, i       *float64
		d, pct     float64
		hasD, hasP bool
	}{
		{"slower import", f(40), f(50), 10, 25, true, true},
		{"faster import", f(200), f(150), -50, -25, true, true},
		{"measured zero", f(0), f(3), 3, 0, true, false},
		{"import missing", f(10), nil, 0, 0, false, false},
	} {
		d, p := delta(tc.m, tc.i)
		if (d != nil) != tc.hasD || (p != nil) != tc.hasP {
			t.Errorf("%s: delta %v pct %v", tc.name, d, p)
			continue
		}
		if d != nil && math.Abs(*d-tc.d) > 1e-9 || p != nil && math.Abs(*p-tc.pct) > 1e-9 {
			t.Errorf("%s: delta %v pct %v, want %v %v", tc.name, *d, *p, tc.d, tc.pct)
		}
	}
}

// Only points of the same endpoint, workload and concurrency are paired, and a group needs
// both a measured and an imported point.
func TestCompareGroups(t *testing.T) {
	w := schema.Workload{Shape: "custom", InputTokens: 550, OutputTokens: 16}
	c := &schema.Campaign{Endpoints: map[string]schema.Endpoint{"a": {}, "b": {}}, Cells: []schema.Cell{
		{ID: "m", Endpoint: "a", Workload: w}, {ID: "ai", Endpoint: "a", Workload: w},
		{ID: "other-ep", Endpoint: "b", Workload: w},
		{ID: "other-osl", Endpoint: "a", Workload: schema.Workload{Shape: "custom", InputTokens: 550, OutputTokens: 32}},
	}}
	row := func(cell, backend string, conc int) schema.AtlasRow {
		return schema.AtlasRow{CellID: cell, Backend: backend, Concurrency: conc, Shape: "custom", PlotReady: true}
	}
	in := Input{Campaign: c, Atlas: []schema.AtlasRow{
		row("m", "perfdag", 4), row("m", "perfdag", 8), row("ai", "aiperf", 4), row("ai", "aiperf", 16),
		row("other-ep", "vllm-bench", 4), row("other-osl", "sglang-bench", 4),
	}}
	g := compareGroups(in)
	if len(g) != 1 || g[0].key.Concurrency != 4 || len(g[0].measured) != 1 || len(g[0].imported) != 1 || g[0].imported[0].CellID != "ai" {
		t.Fatalf("groups %+v, want one: m c4 beside ai c4", g)
	}
	in.Atlas = in.Atlas[:2]
	if g := compareGroups(in); len(g) != 0 {
		t.Errorf("measured only: %d groups", len(g))
	}
}
