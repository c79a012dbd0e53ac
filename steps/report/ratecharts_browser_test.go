package report_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/steps/report"
	"github.com/perfdag/perfdag/steps/testkit/browser"
)

// TestRateChartsInBrowser opens the HTML report of a search over request rate beside one over
// concurrency, and of a cell with both kinds of point, in Chromium: every chart is drawn (no
// console error), each rate chart's x axis reads "request rate (req/s)" on screen, and hovering
// a rate mark shows the point it is (the rate and its cap) with its value. Every page is
// screenshot into $PERFDAG_SCREENSHOTS.
func TestRateChartsInBrowser(t *testing.T) {
	for _, tc := range []struct {
		name  string
		in    report.Input
		hover string // a rate mark
		tip   []string
	}{
		{"ratesearch", rateSearchInput(), `svg.xy .pt[data-x="2.5"][data-y="125"]`, []string{"cell open, 2.5 req/s", "125"}},
		{"loadaxes", mixedLoadInput(), `svg.xy .pt[data-x="4"][data-y="3.3"]`, []string{"cell mixed, 4 req/s (cap 8)", "3.3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			page, err := report.BuildHTML(context.Background(), tc.in)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), tc.name+".html")
			if err := os.WriteFile(path, page, 0o644); err != nil {
				t.Fatal(err)
			}
			b := openHTMLReport(t, path)
			shown := browser.Eval[[][]string](b, `[...document.querySelectorAll("svg.xy")].filter(s => s.getBoundingClientRect().width > 100).map(s => [...s.querySelectorAll("text")].map(x => x.textContent))`)
			rate := 0
			for _, texts := range shown {
				if slices.Contains(texts, "request rate (req/s)") {
					rate++
					if slices.Contains(texts, "concurrency") || slices.Contains(texts, "concurrency (requests in flight)") {
						t.Errorf("a chart labelled with both axes: %q", texts)
					}
				}
			}
			if rate < 2 {
				t.Errorf("%d charts with a request-rate axis on screen, want at least 2", rate)
			}
			b.Hover(tc.hover)
			got := tooltip(b)
			for _, w := range tc.tip {
				if !strings.Contains(got, w) {
					t.Errorf("hover %s: tooltip %q lacks %q", tc.hover, got, w)
				}
			}
			b.Screenshot("hover")
		})
	}
}
