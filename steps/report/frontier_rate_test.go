package report_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/report"
)

// rateSearchInput is bandedInput's concurrency search beside a search over request rate of
// cell "open" (rates 1 to 8, no cap) for ttft_p50_ms <= 250: r1, r2 and r2.5 meet it, r3, r4
// and r8 miss, so its knee is r2.5. Its probes are rate points (their loads r<rate>), its
// atlas rows keyed by load with no concurrency.
func rateSearchInput() report.Input {
	in := bandedInput()
	base := in.Atlas[0]
	var probes []schema.SweepProbe
	for _, p := range []struct{ rate, ttft float64 }{{1, 60}, {8, 900}, {4, 600}, {2, 140}, {3, 320}, {2.5, 210}} {
		r := base
		l := schema.RateAt(p.rate, 0)
		r.CellID, r.Load, r.Concurrency, r.RequestRate, r.TTFTP50Ms = "open", l, 0, p.rate, f(p.ttft)
		r.OutputTokPerS, r.OutputTokPerSPerGPU = f(50*p.rate), f(6*p.rate)
		r.Intervals = schema.Intervals{"output_tok_s": {Lo: 48 * p.rate, Hi: 52 * p.rate, Method: "batch-means", N: 10}}
		in.Atlas = append(in.Atlas, r)
		probes = append(probes, schema.SweepProbe{Load: l, Met: p.ttft <= 250, Status: "ok", Throughput: f(50 * p.rate)})
	}
	in.Sweeps = append(in.Sweeps, schema.SweepResult{Schema: schema.SchemaSweep, Cell: "open", Mode: schema.SweepSearch,
		SLO: "ttft_p50_ms <= 250", Bound: 8, Probes: probes})
	return in
}

// A search over request rate is drawn on a request-rate axis of its own, never on the
// concurrency axis of the other search: the frontier page has two probe charts and two panels
// of the clause the searches share, the rate search's probes at their rates with its knee
// r2.5 marked, its probes and reason named by their keys; in the PDF and the HTML.
func TestFrontierRateSearch(t *testing.T) {
	in := rateSearchInput()
	out := filepath.Join(t.TempDir(), "r.pdf")
	if err := report.Render(context.Background(), in, out); err != nil {
		t.Fatal(err)
	}
	if dir := os.Getenv("PERFDAG_KEEP_REPORT"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, "ratesearch.pdf"), mustRead(t, out), 0o644)
	}
	mustContain(t, pdfText(t, out), "r1+ r8- r4- r2+ r3- r2.5+", "6 probes of <= 8",
		"- open: knee r2.5 because r3 misses ttft_p50_ms <= 250 (ttft_p50_ms = 320).",
		"- chat: knee c9 (c8–c10 at 95 %) because c11 misses") // the concurrency search's line as it was

	page, err := report.BuildHTML(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if dir := os.Getenv("PERFDAG_KEEP_REPORT"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, "ratesearch.html"), page, 0o644)
	}
	doc := string(page)
	i := strings.Index(doc, "<h2>"+report.TitleFrontier+"</h2>")
	if i < 0 {
		t.Fatal("the HTML has no frontier page")
	}
	doc = doc[i:]
	svgs := strings.Split(doc, "<svg")[1:]
	var concCharts, rateCharts int
	for _, s := range svgs {
		s = s[:strings.Index(s, "</svg>")]
		conc, rate := strings.Contains(s, ">concurrency</text>"), strings.Contains(s, ">request rate (req/s)</text>")
		switch {
		case conc && rate:
			t.Errorf("a chart with both a concurrency and a request-rate axis")
		case rate:
			rateCharts++
			if strings.Contains(s, "cell chat,") || strings.Contains(s, "chat: ") {
				t.Errorf("the concurrency search's probes on a request-rate chart")
			}
			for _, want := range []string{`data-x="2.5"`, `data-x="8"`, "cell open, 2.5 req/s"} {
				if !strings.Contains(s, want) {
					t.Errorf("a request-rate chart lacks %q", want)
				}
			}
		case conc:
			concCharts++
			if strings.Contains(s, "cell open,") || strings.Contains(s, "open: ") {
				t.Errorf("the rate search's probes on a concurrency chart")
			}
		}
	}
	if concCharts != 2 || rateCharts != 2 {
		t.Errorf("%d charts against concurrency and %d against request rate on the frontier page, want 2 and 2 (probes, the clause's panel)", concCharts, rateCharts)
	}
	for _, want := range []string{"knee r2.5", "open: knee r2.5", "Probes of each SLO search over request rate"} {
		if !strings.Contains(doc, want) {
			t.Errorf("the HTML frontier page lacks %q", want)
		}
	}
}
