package report_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/report"
)

// A campaign with an SLO search gets the frontier page (knee, goodput, every probe, the stopped
// list and why) and its cover's headline names the knee instead of the peak.
func TestFrontierPageAndKneeHeadline(t *testing.T) {
	in := partialInput()
	in.Atlas[1].Intervals = schema.Intervals{"output_tok_s": {Lo: 650, Hi: 730, Method: "batch-means", N: 10}}
	in.Sweeps = []schema.SweepResult{
		{Schema: schema.SchemaSweep, Cell: "aa-1k", Mode: schema.SweepSearch, SLO: "ttft_avg_ms < 700", From: 1, To: 10, Bound: 6,
			Knee: 10, KneeOutputTokS: f(690.7), KneeRequestThroughput: f(0.69), Probes: []schema.SweepProbe{
				{Concurrency: 1, Met: true, Status: "ok", Throughput: f(86.2)},
				{Concurrency: 10, Met: true, Status: "ok", Throughput: f(690.7)}}},
		{Schema: schema.SchemaSweep, Cell: "aa-10k", Mode: schema.SweepList, StopWhen: "gain_pct < 3", Skipped: []schema.Load{schema.Conc(20), schema.Conc(40)},
			StopReason: "stop_when \"gain_pct < 3\" held after c10 (gain_pct = 1.2)", Probes: []schema.SweepProbe{{Concurrency: 1}, {Concurrency: 10}}},
	}
	out := filepath.Join(t.TempDir(), "r.pdf")
	if err := report.Render(context.Background(), in, out); err != nil {
		t.Fatal(err)
	}
	text := pdfText(t, out)
	mustContain(t, text, report.TitleFrontier, "ttft_avg_ms < 700", "c1+ c10+", "2 probes of <= 6",
		"Sweeps that stop early", "c20 c40", "held after c10", "at knee C=10")
	if strings.Contains(text, "no data: No SLO search") {
		t.Errorf("the cover calls the frontier page empty")
	}
}

// TestFrontierSLOPanels: a search under a multi-clause SLO gets one panel per clause on the
// frontier page, in the PDF and in the HTML, and a line saying why its knee is where it is;
// a clause that is not a comparison with a number is named as not drawn.
func TestFrontierSLOPanels(t *testing.T) {
	in := partialInput()
	base := in.Atlas[0]
	for _, p := range []struct{ c, ttft, itl float64 }{{1, 43.7, 3.99}, {6, 46.8, 6.48}, {7, 45.7, 6.97}, {24, 603.2, 7.5}} {
		r := base
		r.CellID, r.Concurrency, r.TTFTP50Ms, r.ITLAvgMs = "chat", int(p.c), f(p.ttft), f(p.itl)
		r.Intervals = schema.Intervals{"itl_avg_ms": {Lo: p.itl - 0.05, Hi: p.itl + 0.05, Method: "batch-means", N: 10}}
		in.Atlas = append(in.Atlas, r)
	}
	in.Sweeps = []schema.SweepResult{{Schema: schema.SchemaSweep, Cell: "chat", Mode: schema.SweepSearch, From: 1, To: 24, Bound: 7, Knee: 6,
		SLO: `ttft_p50_ms <= 250 && itl_avg_ms <= 6.6 && error_count == 0 && reasoning_field != "none"`, Probes: []schema.SweepProbe{
			{Concurrency: 1, Met: true, Status: "ok"}, {Concurrency: 24, Status: "ok"}, {Concurrency: 6, Met: true, Status: "ok"}, {Concurrency: 7, Status: "ok"}}}}
	out := filepath.Join(t.TempDir(), "r.pdf")
	if err := report.Render(context.Background(), in, out); err != nil {
		t.Fatal(err)
	}
	mustContain(t, pdfText(t, out), "The SLO against load", "One panel per clause of the SLO",
		"- chat: knee c6 because c7 misses itl_avg_ms <= 6.6 (itl_avg_ms = 6.97).",
		`Not drawn (not a field compared with a number): chat: reasoning_field != "none".`)

	page, err := report.BuildHTML(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(page)
	i := strings.Index(doc, "<h2>"+report.TitleFrontier+"</h2>")
	if i < 0 {
		t.Fatal("the HTML has no frontier page")
	}
	doc = doc[i:]
	for _, want := range []string{
		">ttft_p50_ms &lt;= 250</text>", ">itl_avg_ms &lt;= 6.6</text>", ">error_count == 0</text>", // one panel per clause
		`data-y="6.6"`, `data-y="250"`, // the limits as reference lines
		`data-x="7" data-y="6.97"`, "cell chat, C=7: misses this clause; misses the SLO; 95 % interval 6.92 to 7.02", // a probe beyond the limit
		"chat: knee c6", // the knee's line in the legend
		"chat: knee c6 because c7 misses itl_avg_ms &lt;= 6.6 (itl_avg_ms = 6.97).",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("the HTML frontier page lacks %q", want)
		}
	}
}
