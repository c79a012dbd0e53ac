package report

import (
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/report/charts"
)

// mkRow builds a minimal serving row; plot-ready rows get TTFT 100 ms, 1 req/s and 10 tok/s/GPU.
func mkRow(cell string, c int, hw string, tp int, strategy string, mtp bool, mbt int, status string, ready bool) schema.AtlasRow {
	r := schema.AtlasRow{Schema: "atlas_v1", CellID: cell, Concurrency: c, Hardware: hw, Quant: "FP8", TensorParallel: tp,
		ParallelStrategy: strategy, MTP: mtp, MaxNumBatchedTokens: mbt, Shape: "aa-1k", CellStatus: status, PlotReady: ready,
		Backend: "perfdag", GPUs: tp, Extra: map[string]any{"point_status": "ok"}}
	if ready {
		r.TTFTAvgMs, r.RequestThroughput, r.OutputTokPerSPerGPU = schema.F(100), schema.F(1), schema.F(10)
	} else {
		r.Extra["point_status"] = "failed"
	}
	return r
}

func TestCoverageLineCountsCellsAndPoints(t *testing.T) {
	rows := []schema.AtlasRow{
		// full cell a: 2 plot-ready points
		mkRow("a", 1, "H100", 8, "EP", false, 2048, "full", true),
		mkRow("a", 8, "H100", 8, "EP", false, 2048, "full", true),
		// partial cell b: 1 of 2 points plot-ready
		mkRow("b", 1, "B200", 8, "TP", false, 2048, "partial", true),
		mkRow("b", 8, "B200", 8, "TP", false, 2048, "partial", false),
		// failed cell c: none
		mkRow("c", 1, "B200", 8, "EP", true, 4096, "failed", false),
	}
	// Expected by hand: 3 cells, 1 full, 1 partial, 1 failed, 2 + 1 = 3 plot-ready points.
	want := "Coverage: 3 atlas cells | 1 full sweep | 1 partial sweep | 1 failed cell | 3 plot-ready concurrency points"
	v := newView(Input{Atlas: rows})
	if v.covErr != nil {
		t.Fatal(v.covErr)
	}
	if got := v.coverageLine(); got != want {
		t.Errorf("coverage line\n got %q\nwant %q", got, want)
	}
	if v.plotReady != 3 {
		t.Errorf("plotReady = %d, want 3", v.plotReady)
	}
	if len(v.mbts) != 2 || v.mbts[0] != 2048 || v.mbts[1] != 4096 {
		t.Errorf("mbts = %v, want [2048 4096]", v.mbts)
	}
}

func TestRooflineRowsStayOffTheServingPages(t *testing.T) {
	r := mkRow("x-decode", 1, "GB300", 4, "", false, 0, "full", true)
	r.Backend = schema.RooflineBackend
	v := newView(Input{Atlas: []schema.AtlasRow{mkRow("a", 1, "H100", 8, "EP", false, 2048, "full", true), r}})
	if len(v.rows) != 1 || v.rows[0].CellID != "a" || len(v.all) != 2 {
		t.Errorf("serving rows %d (want 1), all rows %d (want 2)", len(v.rows), len(v.all))
	}
	if v.coverage.Cells != 2 {
		t.Errorf("coverage counts %d cells, want the roofline cell counted too (2)", v.coverage.Cells)
	}
}

func TestVariantStyles(t *testing.T) {
	rows := []schema.AtlasRow{
		mkRow("g-ep", 1, "GB300", 4, "EP", false, 1024, "full", true),
		mkRow("b-tp-mtp", 1, "B200", 8, "TP", true, 1024, "full", true),
		mkRow("b-ep", 1, "B200", 8, "EP", false, 1024, "full", true),
		mkRow("h-ep", 1, "H100", 16, "EP", false, 1024, "full", true),
	}
	v := newView(Input{Atlas: rows})
	want := []struct {
		label  string
		marker charts.Marker
		color  int // palette index: one per (hardware, TP), in hardware generation order
	}{
		{"H100 FP8 TP16 EP", charts.Circle, 0},
		{"B200 FP8 TP8 EP", charts.Circle, 1},
		{"B200 FP8 TP8 TP MTP", charts.Cross, 1},
		{"GB300 FP8 TP4 EP", charts.Circle, 2},
	}
	if len(v.variants) != len(want) {
		t.Fatalf("%d variants, want %d", len(v.variants), len(want))
	}
	for i, w := range want {
		x := v.variants[i]
		if x.label != w.label || x.marker != w.marker || x.color != charts.Color(w.color) {
			t.Errorf("variant %d = %q marker %v colour %v; want %q marker %v colour %v", i, x.label, x.marker, x.color, w.label, w.marker, charts.Color(w.color))
		}
	}
}

func TestVariantLabelsNameWhatDiffers(t *testing.T) {
	a := mkRow("a", 1, "B200", 8, "EP", false, 1024, "full", true)
	b := a
	b.CellID, b.Engine = "b", "sglang"
	a.Engine = "vllm"
	v := newView(Input{Atlas: []schema.AtlasRow{a, b}})
	if len(v.variants) != 2 || v.variants[0].label != "B200 FP8 TP8 EP sglang" || v.variants[1].label != "B200 FP8 TP8 EP vllm" {
		t.Errorf("labels do not separate the engines: %q, %q", v.variants[0].label, v.variants[1].label)
	}
}

func TestHeatCellClassification(t *testing.T) {
	tok := func(r *schema.AtlasRow) *float64 { return r.OutputTokPerSPerGPU }
	ok := mkRow("a", 8, "H100", 8, "EP", false, 1024, "full", true)
	failed := mkRow("b", 8, "H100", 8, "EP", false, 1024, "failed", false)
	missingPoint := mkRow("c", 32, "H100", 8, "EP", false, 1024, "partial", false)
	missingPoint.Extra["point_status"] = "missing"
	partialPoint := mkRow("d", 8, "H100", 8, "EP", false, 1024, "partial", true)
	partialPoint.Extra["point_status"] = "partial"
	noMetric := mkRow("e", 8, "H100", 8, "EP", false, 1024, "full", true)
	noMetric.OutputTokPerSPerGPU = nil
	tests := []struct {
		name     string
		r        *schema.AtlasRow
		grey     bool
		text     string
		hasValue bool
	}{
		{"measured", &ok, false, "", true},
		{"no row", nil, true, "-", false},
		{"failed point", &failed, true, "failed", false},
		{"missing point of a partial cell", &missingPoint, true, "missing", false},
		{"partial point keeps its value on grey", &partialPoint, true, "", true},
		{"metric not measured", &noMetric, true, "n/a", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hc := heatCellOf(tt.r, tok)
			if hc.grey != tt.grey || hc.text != tt.text || (hc.value != nil) != tt.hasValue {
				t.Errorf("got grey=%v text=%q value=%v; want grey=%v text=%q value=%v", hc.grey, hc.text, hc.value != nil, tt.grey, tt.text, tt.hasValue)
			}
		})
	}
}

func TestShadeEnds(t *testing.T) {
	bg, fg := shade(0)
	if bg.Red != 0xF2 || bg.Green != 0xF7 || bg.Blue != 0xFC || fg != (colorBlack()) {
		t.Errorf("t=0: bg %+v fg %+v, want near white on black text", bg, fg)
	}
	bg, fg = shade(1)
	if bg.Red != 0x08 || bg.Green != 0x45 || bg.Blue != 0x94 || fg != colorWhite {
		t.Errorf("t=1: bg %+v fg %+v, want dark blue with white text", bg, fg)
	}
	// Midpoint: 0xF2 + (0x08-0xF2)*0.5 = 242 - 117 = 125.
	if bg, _ := shade(0.5); bg.Red != 125 {
		t.Errorf("t=0.5: red %d, want 125", bg.Red)
	}
}

func TestFitAxis(t *testing.T) {
	tests := []struct {
		name     string
		vals     []float64
		log      bool
		min, max float64
	}{
		// lo 10, hi 110: pad = 100 × 0.06 = 6 → [4, 116].
		{"linear with padding", []float64{10, 50, 110}, false, 4, 116},
		// 1..100 spans 100x > 30x: log, [1/1.25, 100×1.25] = [0.8, 125].
		{"wide range goes log", []float64{1, 100}, true, 0.8, 125},
		// one value 50: pad = max(5, 1) = 5 → [45, 55].
		{"single value", []float64{50}, false, 45, 55},
	}
	for _, tt := range tests {
		a := fitAxis(charts.Axis{}, tt.vals)
		if a.Log != tt.log || !near(a.Min, tt.min) || !near(a.Max, tt.max) {
			t.Errorf("%s: got log=%v [%g, %g], want log=%v [%g, %g]", tt.name, a.Log, a.Min, a.Max, tt.log, tt.min, tt.max)
		}
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

func TestArmJoinsTheLabelOnlyToDisambiguate(t *testing.T) {
	a := mkRow("a", 1, "B200", 8, "EP", false, 1024, "full", true)
	a.Arm = "arm-a"
	b := mkRow("b", 1, "H100", 8, "EP", false, 1024, "full", true)
	b.Arm = "arm-b"
	v := newView(Input{Atlas: []schema.AtlasRow{a, b}})
	if v.variants[0].label != "H100 FP8 TP8 EP" || v.variants[1].label != "B200 FP8 TP8 EP" {
		t.Errorf("distinct variants carry their arm: %q, %q", v.variants[0].label, v.variants[1].label)
	}
	c := a
	c.CellID, c.Arm = "c", "arm-c"
	v = newView(Input{Atlas: []schema.AtlasRow{a, c}})
	if v.variants[0].label != "B200 FP8 TP8 EP [arm-a]" || v.variants[1].label != "B200 FP8 TP8 EP [arm-c]" {
		t.Errorf("identical deployments are not told apart by arm: %q, %q", v.variants[0].label, v.variants[1].label)
	}
}

func TestScatterLabelsFollowTheReportOption(t *testing.T) {
	var rows []schema.AtlasRow
	for _, c := range []int{1, 2, 8, 32} {
		r := mkRow("a", c, "B200", 8, "EP", false, 1024, "full", true)
		r.TokPerSPerUser = schema.F(50)
		rows = append(rows, r)
	}
	labels := func(in Input) []string {
		v := newView(in)
		var out []string
		for _, s := range scatterSeries(v, 1024, rightPane) {
			for _, p := range s.Points {
				if p.Label != "" {
					out = append(out, p.Label)
				}
			}
		}
		return out
	}
	if got := labels(Input{Atlas: rows}); len(got) != 3 || got[0] != "c1" || got[1] != "c8" || got[2] != "c32" {
		t.Errorf("default labels = %v, want [c1 c8 c32]", got)
	}
	in := Input{Atlas: rows, Campaign: &schema.Campaign{Report: &schema.Report{LabelConcurrencies: []int{2}}}}
	if got := labels(in); len(got) != 1 || got[0] != "c2" {
		t.Errorf("label_concurrencies [2] gave %v", got)
	}
}

// A campaign that states no hardware, quantisation or parallelism (a llama.cpp endpoint) has
// its variant named by its model, never "TP0"; a stated degree is kept.
func TestVariantLabelWithoutDeclaredDeployment(t *testing.T) {
	a := mkRow("a", 1, "", 0, "", false, 0, "full", true)
	a.Quant, a.Model = "", "org/tiny-llama"
	v := newView(Input{Atlas: []schema.AtlasRow{a}})
	if len(v.variants) != 1 || v.variants[0].label != "tiny-llama" {
		t.Fatalf("label %q, want the model's name", v.variants[0].label)
	}
	a.Model = ""
	if v = newView(Input{Atlas: []schema.AtlasRow{a}}); v.variants[0].label != "all cells" {
		t.Errorf("label %q with nothing stated, want \"all cells\"", v.variants[0].label)
	}
	a.TensorParallel = 2
	if v = newView(Input{Atlas: []schema.AtlasRow{a}}); v.variants[0].label != "TP2" {
		t.Errorf("label %q, want TP2", v.variants[0].label)
	}
}
