package report

import (
	"testing"

	"github.com/perfdag/perfdag/schema"
)

func TestSpecCellsMergeAtlasAndWindows(t *testing.T) {
	mtp := mkRow("m", 1, "B200", 8, "EP", true, 2048, "full", true)
	mtp.AcceptanceLength, mtp.SpecAcceptRate = schema.F(2.4), schema.F(0.47)
	mtp8 := mkRow("m", 8, "B200", 8, "EP", true, 2048, "full", true) // no acceptance in the atlas
	plain := mkRow("p", 1, "B200", 8, "EP", false, 2048, "full", true)
	in := Input{
		Atlas: []schema.AtlasRow{mtp, mtp8, plain},
		Spec: []schema.SpecWindow{
			{Cell: "m", Concurrency: 1, AcceptanceLength: schema.F(9.9)}, // the atlas value wins
			{Cell: "m", Concurrency: 8, AcceptanceLength: schema.F(2.1), SpecAcceptRate: schema.F(0.37)},
			{Cell: "p", Concurrency: 1}, // spec off: no drafts, nulls
			{Cell: "orphan", Concurrency: 4, AcceptanceLength: schema.F(1.8)},
		},
	}
	cells := specCells(in, newView(in))
	if len(cells) != 2 {
		t.Fatalf("%d spec cells, want m and orphan (p had no drafts): %+v", len(cells), cells)
	}
	m, orphan := cells[0], cells[1]
	if m.cell != "m" || m.variant == nil || m.variant.label != "B200 FP8 TP8 EP MTP" {
		t.Fatalf("first cell %q (variant %+v), want m with its variant", m.cell, m.variant)
	}
	if len(m.points) != 2 || *m.points[0].al != 2.4 || *m.points[1].al != 2.1 || *m.points[1].ar != 0.37 {
		t.Errorf("m points: %+v", m.points)
	}
	if orphan.cell != "orphan" || orphan.variant != nil {
		t.Errorf("a window without atlas rows sorts last without a variant: %+v", orphan)
	}
}

func TestDCGMTablePrefersCorrelationFiles(t *testing.T) {
	r := mkRow("a", 1, "H100", 8, "EP", false, 2048, "full", true)
	r.SMActive, r.PowerWattsPerGPU, r.TokensPerWatt = schema.F(0.4), schema.F(500), schema.F(0.02)
	in := Input{Atlas: []schema.AtlasRow{r}}
	rows := dcgmTable(in, newView(in))
	if len(rows) != 1 || rows[0].source != "atlas" || *rows[0].sm != 0.4 {
		t.Fatalf("without correlation files the atlas fields are used: %+v", rows)
	}
	in.DCGM = []schema.DCGMCorrelation{{Cell: "a", Source: "frozen", DCGMGrounded: true,
		Points: []schema.DCGMPoint{{Concurrency: 1, GPUs: 8, SMActive: schema.F(0.5)}}}}
	rows = dcgmTable(in, newView(in))
	// The correlation has no tokens per watt: the atlas row's 0.02 fills it.
	if len(rows) != 1 || rows[0].source != "frozen" || *rows[0].sm != 0.5 || rows[0].tokW == nil || *rows[0].tokW != 0.02 || !rows[0].grounded {
		t.Errorf("correlation rows: %+v", rows)
	}
}

func TestAARowsOrderShapesBySize(t *testing.T) {
	var rows []schema.AtlasRow
	for _, s := range []struct {
		shape string
		c     int
	}{{"aa-100k", 1}, {"aa-1k", 10}, {"custom", 1}, {"aa-10k", 1}, {"aa-1k", 1}} {
		r := mkRow(s.shape, s.c, "B200", 8, "EP", false, 0, "full", true)
		r.Shape = s.shape
		rows = append(rows, r)
	}
	got := aaRows(rows)
	want := []string{"aa-1k/1", "aa-1k/10", "aa-10k/1", "aa-100k/1"}
	if len(got) != len(want) {
		t.Fatalf("%d AA rows, want %d (custom excluded)", len(got), len(want))
	}
	for i, r := range got {
		if k := r.Shape + "/" + itoa(r.Concurrency); k != want[i] {
			t.Errorf("row %d = %s, want %s", i, k, want[i])
		}
	}
}

func itoa(n int) string { return ints([]int{n}) }

func TestCaveatsFlagWhatTheNumbersRestOn(t *testing.T) {
	a := mkRow("a", 1, "H100", 8, "EP", true, 2048, "full", true)
	a.Flags = []string{schema.FlagSteadyWindowUndercount, FlagEvicted}
	a.CacheMode = "warm"
	b := mkRow("b", 1, "H100", 8, "EP", false, 2048, "full", true)
	b.CacheMode = "cold"
	in := Input{Atlas: []schema.AtlasRow{a, b}, Campaign: &schema.Campaign{Settle: &schema.Settle{PrewarmShapes: []string{"aa-1k"}, SettleS: 30}}}
	got := caveats(newView(in))
	want := []string{
		"Cache mode: mixed (cold: 1 cell, warm: 1 cell). Compare cells only within one cache mode.",
		"ISL/OSL aa-1k: declared 1,000/1,000 tokens; no measured lengths.",
		"Settle discipline: used (prewarm at aa-1k; a 30 s settle pause between points).",
		"Steady window: 1 point with num_prompts < 2 x concurrency; their throughput is undercounted (ramp/drain-dominated window).",
		"Evicted context: 1 cell (1 point) ran while the server evicted request context from its KV cache; their latencies include recomputation.",
		"Grounding: none of the 2 plot-ready points is DCGM byte-grounded; every number rests on client-side throughput alone (sol_rigor L1).",
	}
	if len(got) != len(want) {
		t.Fatalf("caveats:\n%q\nwant:\n%q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("caveat %d\n got %q\nwant %q", i, got[i], want[i])
		}
	}
}
