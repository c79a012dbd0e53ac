package report

import (
	"reflect"
	"testing"

	"github.com/perfdag/perfdag/engine/gate"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/report/charts"
)

func fp(x float64) *float64 { return &x }

// sloInput is a search of [1, 24] under a three-clause SLO whose ITL clause sets the knee
// (c7 misses it) while TTFT grows with load and misses only at c24; c12 failed outright, and
// a second cell searches under a one-clause SLO that shares the TTFT clause, written the other
// way round.
func sloInput() Input {
	row := func(cell string, c int, ttft, itl float64, ivs schema.Intervals) schema.AtlasRow {
		return schema.AtlasRow{Schema: "atlas_v1", CellID: cell, Concurrency: c, Model: "m", CellStatus: "full", PlotReady: true,
			RequestCount: 100, TTFTP50Ms: fp(ttft), ITLAvgMs: fp(itl), OutputTokPerS: fp(100 * float64(c)), OutputTokPerSPerGPU: fp(100 * float64(c)),
			Intervals: ivs}
	}
	iv := func(lo, hi float64) schema.Interval {
		return schema.Interval{Lo: lo, Hi: hi, Method: "batch-means", N: 10}
	}
	return Input{
		Atlas: []schema.AtlasRow{
			row("a", 1, 43.7, 3.99, schema.Intervals{"ttft_p50_ms": iv(42, 45), "itl_avg_ms": iv(3.98, 4.0)}),
			row("a", 24, 603.2, 7.5, schema.Intervals{"ttft_p50_ms": iv(590, 615)}),
			row("a", 6, 46.8, 6.48, schema.Intervals{"itl_avg_ms": iv(6.4, 6.55)}),
			row("a", 7, 45.7, 6.97, nil),
			{Schema: "atlas_v1", CellID: "a", Concurrency: 12, CellStatus: "full"},
			row("b", 1, 40, 4, nil),
			row("b", 8, 310, 6, nil),
		},
		Sweeps: []schema.SweepResult{
			{Schema: schema.SchemaSweep, Cell: "a", Mode: schema.SweepSearch, From: 1, To: 24, Bound: 7, Knee: 6,
				SLO: `ttft_p50_ms <= 250 && itl_avg_ms <= 6.6 && error_count == 0 && status == "ok"`,
				Probes: []schema.SweepProbe{
					{Concurrency: 1, Met: true, Status: "ok", Values: "error_count = 0, itl_avg_ms = 3.989, ttft_p50_ms = 43.7"},
					{Concurrency: 24, Status: "ok"}, {Concurrency: 12, Status: "failed"},
					{Concurrency: 6, Met: true, Status: "ok"}, {Concurrency: 7, Status: "ok"}}},
			{Schema: schema.SchemaSweep, Cell: "b", Mode: schema.SweepSearch, From: 1, To: 8, Bound: 5, Knee: 1,
				SLO: "250 >= ttft_p50_ms", Probes: []schema.SweepProbe{{Concurrency: 1, Met: true, Status: "ok"}, {Concurrency: 8, Status: "ok"}}},
			{Schema: schema.SchemaSweep, Cell: "c", Mode: schema.SweepList, StopWhen: "gain_pct < 3"},
		},
	}
}

// TestSLOPanels: one panel per clause that compares a point field with a number, shared by the
// searches whose SLOs have it; each probe carries the value the clause read (the atlas row's
// exact value, else what the search recorded), its 95 % interval when the point has one, and
// whether the clause and the whole SLO held; a failed probe has no value; the knee and the
// first miss above it are the search's.
func TestSLOPanels(t *testing.T) {
	v := newView(sloInput())
	panels, notDrawn := sloPanels(v)
	if want := []string{`a: status == "ok"`}; !reflect.DeepEqual(notDrawn, want) {
		t.Errorf("not drawn %q, want %q", notDrawn, want)
	}
	var clauses []gate.Threshold
	for _, p := range panels {
		clauses = append(clauses, p.clause)
	}
	wantClauses := []gate.Threshold{
		{Clause: "ttft_p50_ms <= 250", Name: "ttft_p50_ms", Op: "<=", Limit: 250},
		{Clause: "itl_avg_ms <= 6.6", Name: "itl_avg_ms", Op: "<=", Limit: 6.6},
		{Clause: "error_count == 0", Name: "error_count", Op: "==", Limit: 0},
	}
	if !reflect.DeepEqual(clauses, wantClauses) {
		t.Fatalf("clauses %+v\nwant %+v", clauses, wantClauses)
	}
	ttft, itl, errs := panels[0], panels[1], panels[2]
	ivp := func(lo, hi float64) *schema.Interval {
		return &schema.Interval{Lo: lo, Hi: hi, Method: "batch-means", N: 10}
	}
	for _, tc := range []struct {
		name string
		got  sloCell
		want sloCell
	}{
		{"ttft", ttft.cells[0], sloCell{cell: "a", knee: schema.Conc(6), miss: schema.Conc(7), unstated: []schema.Load{schema.Conc(12)}, probes: []sloProbe{
			{at: schema.Conc(1), value: 43.7, iv: ivp(42, 45), holds: true, met: true},
			{at: schema.Conc(6), value: 46.8, holds: true, met: true},
			{at: schema.Conc(7), value: 45.7, holds: true},
			{at: schema.Conc(24), value: 603.2, iv: ivp(590, 615)}}}},
		{"itl", itl.cells[0], sloCell{cell: "a", knee: schema.Conc(6), miss: schema.Conc(7), unstated: []schema.Load{schema.Conc(12)}, probes: []sloProbe{
			{at: schema.Conc(1), value: 3.99, iv: ivp(3.98, 4.0), holds: true, met: true},
			{at: schema.Conc(6), value: 6.48, iv: ivp(6.4, 6.55), holds: true, met: true},
			{at: schema.Conc(7), value: 6.97},
			{at: schema.Conc(24), value: 7.5}}}},
		{"errors", errs.cells[0], sloCell{cell: "a", knee: schema.Conc(6), miss: schema.Conc(7), unstated: []schema.Load{schema.Conc(12)}, probes: []sloProbe{
			{at: schema.Conc(1), holds: true, met: true}, {at: schema.Conc(6), holds: true, met: true}, {at: schema.Conc(7), holds: true}, {at: schema.Conc(24), holds: true}}}},
		{"second search", ttft.cells[1], sloCell{cell: "b", series: 1, knee: schema.Conc(1), miss: schema.Conc(8), probes: []sloProbe{
			{at: schema.Conc(1), value: 40, holds: true, met: true}, {at: schema.Conc(8), value: 310}}}},
	} {
		if !reflect.DeepEqual(tc.got, tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, tc.got, tc.want)
		}
	}
}

// TestSLOPanelValueFromTheSearch: a field the atlas does not carry (or carries only when
// nonzero) is read from what the search recorded beside its verdict.
func TestSLOPanelValueFromTheSearch(t *testing.T) {
	r := &schema.AtlasRow{CellID: "a", Concurrency: 4}
	p := schema.SweepProbe{Concurrency: 4, Status: "ok", Values: "truncated_prompts = 0, window_s = 12.5"}
	for name, want := range map[string]float64{"truncated_prompts": 0, "window_s": 12.5} {
		if got, ok := probeValue(r, p, name); !ok || got != want {
			t.Errorf("%s = %v, %v; want %v", name, got, ok, want)
		}
	}
	if _, ok := probeValue(r, p, "ttft_p50_ms"); ok {
		t.Error("a value neither the row nor the search states was read")
	}
}

// TestSLOPanelChart: the panel plots each probe at (concurrency, value), filled where the
// clause held and hollow where it did not, its interval as a vertical bar, the knee as a
// vertical line over the whole axis, the limit as a reference line inside the axis range.
func TestSLOPanelChart(t *testing.T) {
	panels, _ := sloPanels(newView(sloInput()))
	ch := panels[1].chart(95, 62) // itl_avg_ms <= 6.6
	if ch.Title != "itl_avg_ms <= 6.6" || len(ch.Refs) != 1 || ch.Refs[0].Y != 6.6 || ch.Refs[0].Name != "SLO limit <= 6.6" {
		t.Errorf("title %q refs %+v", ch.Title, ch.Refs)
	}
	if ch.Y.Min > 3.98 || ch.Y.Max < 7.5 || ch.Y.Min < 0 || ch.Y.Label != "itl_avg_ms (bars: 95 % interval)" {
		t.Errorf("y axis %+v does not span the values, intervals and the limit", ch.Y)
	}
	xy := func(s charts.Series) [][2]float64 {
		var out [][2]float64
		for _, p := range s.Points {
			out = append(out, [2]float64{p.X, p.Y})
		}
		return out
	}
	byName := map[string][][2]float64{}
	var bars [][][2]float64
	for _, s := range ch.Series {
		if s.NoLegend {
			bars = append(bars, xy(s))
			continue
		}
		byName[s.Name] = xy(s)
		if s.Name == "a: misses" && !s.Hollow {
			t.Error("misses are not hollow")
		}
	}
	want := map[string][][2]float64{ // cell b's SLO has no ITL clause: not in this panel
		"a: meets":   {{1, 3.99}, {6, 6.48}},
		"a: misses":  {{7, 6.97}, {24, 7.5}},
		"a: knee c6": {{6, ch.Y.Min}, {6, ch.Y.Max}},
	}
	if !reflect.DeepEqual(byName, want) {
		t.Errorf("series %v\nwant %v", byName, want)
	}
	if wantBars := [][][2]float64{{{1, 3.98}, {1, 4.0}}, {{6, 6.4}, {6, 6.55}}}; !reflect.DeepEqual(bars, wantBars) {
		t.Errorf("interval bars %v, want %v", bars, wantBars)
	}
	if _, err := ch.PNG(); err != nil {
		t.Fatal(err)
	}
}

// TestKneeReasons: each search says why its knee is where it is, naming the clauses its first
// miss missed with the values read there; a search whose every probe met the SLO, one whose
// lower bound missed, and one whose first miss failed outright say so.
func TestKneeReasons(t *testing.T) {
	in := sloInput()
	in.Sweeps = append(in.Sweeps,
		schema.SweepResult{Cell: "top", Mode: schema.SweepSearch, SLO: "itl_avg_ms < 9", From: 1, To: 64, Knee: 64, KneeAtTop: true,
			Probes: []schema.SweepProbe{{Concurrency: 1, Met: true}, {Concurrency: 64, Met: true}}},
		schema.SweepResult{Cell: "low", Mode: schema.SweepSearch, SLO: "itl_avg_ms < 9", From: 2, To: 64,
			Probes: []schema.SweepProbe{{Concurrency: 2, Status: "failed"}}},
		schema.SweepResult{Cell: "down", Mode: schema.SweepSearch, SLO: "itl_avg_ms < 9", From: 1, To: 64,
			KneeUnknown: "c64 had no valid request (connect: 80)",
			Probes:      []schema.SweepProbe{{Concurrency: 1, Met: true}, {Concurrency: 64, Status: "failed", NoEvidence: true}}})
	v := newView(in)
	panels, _ := sloPanels(v)
	got := kneeReasons(v, panels)
	want := []string{
		"a: knee c6 because c7 misses itl_avg_ms <= 6.6 (itl_avg_ms = 6.97).",
		"b: knee c1 because c8 misses ttft_p50_ms <= 250 (ttft_p50_ms = 310).",
		"top: every probe up to c64 meets the SLO; the knee may lie beyond the search's upper bound.",
		"low: no knee: c2, the lower bound, failed (no valid request).",
		"down: knee unknown: c64 had no valid request (connect: 80).",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("reasons\n %q\nwant\n %q", got, want)
	}
}
