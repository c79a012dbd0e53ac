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

// mixedLoadInput is a cell with concurrency points c1, c8 and rate points r2, r4 (capped at
// 8, as an auto sweep or rates: beside concurrencies: makes) and one of rates without a cap
// (r3), each with DCGM window means and a speculative-decoding acceptance length.
func mixedLoadInput() report.Input {
	in := partialInput()
	base := in.Atlas[0]
	for _, p := range []struct {
		l      schema.Load
		al, tw float64
	}{{schema.Conc(1), 2.9, 1.5}, {schema.Conc(8), 2.6, 4.2}, {schema.RateAt(2, 8), 2.8, 2.1}, {schema.RateAt(4, 8), 2.7, 3.3}, {schema.RateAt(3, 0), 2.75, 2.9}} {
		r := base
		r.CellID, r.Load, r.Concurrency, r.RequestRate = "mixed", p.l, p.l.InFlight(), p.l.Rate
		r.SMActive, r.DRAMActive, r.PowerWattsPerGPU, r.TokensPerWatt = f(0.5), f(0.4), f(300), f(p.tw)
		r.AcceptanceLength, r.SpecAcceptRate = f(p.al), f(0.6)
		r.TTFTP50Ms, r.RequestThroughput = f(40+p.tw), f(p.tw)
		in.Atlas = append(in.Atlas, r)
	}
	return in
}

// section is the HTML report's page titled title, up to the next page.
func section(t *testing.T, doc, title string) string {
	t.Helper()
	i := strings.Index(doc, "<h2>"+title+"</h2>")
	if i < 0 {
		t.Fatalf("the HTML has no %s page", title)
	}
	doc = doc[i+4:]
	if j := strings.Index(doc, "<h2>"); j >= 0 {
		doc = doc[:j]
	}
	return doc
}

// Pages whose x axis is load draw a cell's rate points against request rate on charts of
// their own and its concurrency points against concurrency, never both on one axis (a rate
// point was drawn at its cap on the concurrency axis, and one without a cap at 0): the DCGM
// page's two panes and the speculative-decoding chart, in the PDF and the HTML.
func TestLoadAxesApart(t *testing.T) {
	in := mixedLoadInput()
	out := filepath.Join(t.TempDir(), "r.pdf")
	if err := report.Render(context.Background(), in, out); err != nil {
		t.Fatal(err)
	}
	page, err := report.BuildHTML(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if dir := os.Getenv("PERFDAG_KEEP_REPORT"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, "loadaxes.pdf"), mustRead(t, out), 0o644)
		_ = os.WriteFile(filepath.Join(dir, "loadaxes.html"), page, 0o644)
	}
	for _, tc := range []struct {
		title      string
		conc, rate int
	}{{report.TitleDCGM, 2, 2}, {report.TitleSpec, 1, 1}} {
		var conc, rate int
		for _, s := range strings.Split(section(t, string(page), tc.title), "<svg")[1:] {
			s = s[:strings.Index(s, "</svg>")]
			isConc, isRate := strings.Contains(s, ">concurrency (requests in flight)</text>"), strings.Contains(s, ">request rate (req/s)</text>")
			switch {
			case isConc && isRate:
				t.Errorf("%s: a chart with both axes", tc.title)
			case isRate:
				rate++
				for _, want := range []string{`data-x="2"`, `data-x="3"`, `data-x="4"`, "cell mixed, 2 req/s (cap 8)", "cell mixed, 3 req/s"} {
					if !strings.Contains(s, want) {
						t.Errorf("%s: a request-rate chart lacks %q", tc.title, want)
					}
				}
				if strings.Contains(s, "C=") {
					t.Errorf("%s: a concurrency point on a request-rate chart", tc.title)
				}
			case isConc:
				conc++
				if strings.Contains(s, "req/s (cap") || strings.Contains(s, `data-x="0"`) {
					t.Errorf("%s: a rate point on a concurrency chart", tc.title)
				}
				if !strings.Contains(s, "cell mixed, C=8") {
					t.Errorf("%s: the concurrency chart lacks c8", tc.title)
				}
			}
		}
		if conc != tc.conc || rate != tc.rate {
			t.Errorf("%s: %d charts against concurrency, %d against request rate; want %d and %d", tc.title, conc, rate, tc.conc, tc.rate)
		}
	}

	// The scatter and heatmap pages (x: throughput, not load) name a rate point by its rate: its
	// cap is no concurrency to label it by (c0, c8) nor a heatmap column.
	scatter := section(t, string(page), report.TitleScatter)
	if !strings.Contains(scatter, "Labels mark concurrency 1, 8, 10;") || !strings.Contains(scatter, "cell mixed, 2 req/s (cap 8)") || strings.Contains(scatter, ">c0<") {
		t.Errorf("the scatter page labels or names rate points by their cap")
	}
	// ... and draws a variant's rate points as a dashed line of their own, not on its line of
	// concurrencies.
	for _, p := range []struct {
		x    string // its request throughput, the pane's x
		rate bool
	}{{"2.1", true}, {"2.9", true}, {"4.2", false}} {
		onRates := strings.Contains(scatter, "aa-1k (request rates)\nrequest throughput (req/s): "+p.x+"\n")
		onConcs := strings.Contains(scatter, "aa-1k\nrequest throughput (req/s): "+p.x+"\n")
		if onRates != p.rate || onConcs == p.rate {
			t.Errorf("scatter: the point at %s req/s on the request-rate line %v, on the concurrency line %v", p.x, onRates, onConcs)
		}
	}
	if heat := section(t, string(page), report.TitleHeatmap); strings.Contains(heat, "C = 0") || !strings.Contains(heat, ">44.2<") || strings.Contains(heat, ">43.3<") {
		t.Errorf("the heatmap at C = 8 shows a rate point capped at 8 (TTFT p50 43.3 of r4-cap8) or lacks c8's 44.2")
	}
}
