package report_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/steps/report"
	"github.com/perfdag/perfdag/steps/report/svgchart"
	"github.com/perfdag/perfdag/steps/testkit/browser"
)

// OpenHTMLReport opens an HTML report from file:// in Chromium and checks what a reader sees:
// every chart drawn with marks, no console error, failed request or dialog; it screenshots
// every page (into $PERFDAG_SCREENSHOTS) and returns the browser for more checks.
func openHTMLReport(t *testing.T, path string) *browser.Browser {
	t.Helper()
	b := browser.Start(t)
	b.Navigate(browser.FileURL(path))
	want := browser.Eval[int](b, `+document.querySelector("main").dataset.charts`)
	drawn := browser.Eval[[]int](b, `[...document.querySelectorAll("figure.chart svg.svgchart")].filter(s => s.getBoundingClientRect().width > 100).map(s => s.querySelectorAll(".pt").length)`)
	if len(drawn) != want || want == 0 {
		t.Errorf("%d charts drawn with a visible size, the report has %d", len(drawn), want)
	}
	for i, n := range drawn {
		if n == 0 {
			t.Errorf("chart %d has no marks", i+1)
		}
	}
	pages := browser.Eval[int](b, `document.querySelectorAll("section.page").length`)
	for i := 1; i <= pages; i++ {
		b.ScreenshotOf(fmt.Sprintf("page-%d", i), fmt.Sprintf("#page-%d", i))
	}
	b.Clean()
	return b
}

// tooltip is the text the tooltip box shows, or "(hidden)".
func tooltip(b *browser.Browser) string {
	return browser.Eval[string](b, `(() => { const t = document.querySelector(".svgchart-tip"); return t && !t.hidden ? t.innerText : "(hidden)"; })()`)
}

func TestHTMLReportInBrowser(t *testing.T) {
	in, doc := smokeHTML(t)
	path := filepath.Join(t.TempDir(), "smoke.html")
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	b := openHTMLReport(t, path)
	// the first plot-ready row with a TTFT: its mark's tooltip carries the atlas value exactly
	for _, r := range in.Atlas {
		if !r.PlotReady || r.TTFTP50Ms == nil || r.RequestThroughput == nil {
			continue
		}
		y := svgchart.Exact(*r.TTFTP50Ms)
		b.Hover(fmt.Sprintf(`svg.xy .pt[data-y="%s"][data-x="%s"]`, y, svgchart.Exact(*r.RequestThroughput)))
		got := tooltip(b)
		for _, want := range []string{"TTFT p50 (ms): " + y, fmt.Sprintf("cell %s, C=%d", r.CellID, r.Concurrency)} {
			if !strings.Contains(got, want) {
				t.Errorf("tooltip %q lacks %q", got, want)
			}
		}
		b.Screenshot("hover")
		break
	}
	b.Clean()
}

// TestHTMLHostileTextInBrowser: hostile campaign names, cell ids and error texts render as text:
// no dialog opens, no injected element exists, and the text is visible as typed.
func TestHTMLHostileTextInBrowser(t *testing.T) {
	html, err := report.BuildHTML(context.Background(), hostileInput(t))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "hostile.html")
	if err := os.WriteFile(path, html, 0o644); err != nil {
		t.Fatal(err)
	}
	b := openHTMLReport(t, path)
	if n := browser.Eval[int](b, `document.querySelectorAll("img, iframe, object, embed, body script:not(:last-of-type)").length`); n != 0 {
		t.Errorf("%d injected elements in the page", n)
	}
	if n := browser.Eval[int](b, `document.scripts.length`); n != 1 {
		t.Errorf("%d scripts in the page, want the tooltip script only", n)
	}
	if !browser.Eval[bool](b, `document.body.innerText.includes(`+"`"+hostile+"`"+`)`) {
		t.Error("the hostile text is not shown as text")
	}
	b.Hover(`svg.xy .pt[aria-label*="img src=x"]`)
	if got := tooltip(b); !strings.Contains(got, hostile) {
		t.Errorf("the hostile cell id's tooltip is %q, want it as text", got)
	}
	b.Screenshot("hostile-hover")
	b.Clean()
}

// TestHTMLPolicyBlocksInjectedScript: even markup that escaped escaping would not run — the
// report's Content-Security-Policy lets only its own tooltip script (by hash) execute.
func TestHTMLPolicyBlocksInjectedScript(t *testing.T) {
	_, doc := smokeHTML(t)
	injected := strings.Replace(doc, "<main ", `<script>window.injected = 1;</script><div id="probe" onclick="window.injected = 2"></div><main `, 1)
	path := filepath.Join(t.TempDir(), "injected.html")
	if err := os.WriteFile(path, []byte(injected), 0o644); err != nil {
		t.Fatal(err)
	}
	b := browser.Start(t)
	b.Navigate(browser.FileURL(path))
	browser.Eval[bool](b, `(document.getElementById("probe").click(), true)`)
	if got := browser.Eval[string](b, `String(window.injected)`); got != "undefined" {
		t.Errorf("an injected script ran (window.injected = %s)", got)
	}
	if !browser.Eval[bool](b, `document.querySelector(".svgchart-tip") !== null`) {
		t.Error("the report's own tooltip script did not run under the policy")
	}
	b.Settle()
	if p := strings.Join(b.Problems(), "\n"); !strings.Contains(p, "Content Security Policy") {
		t.Errorf("the browser did not report blocking the injected script; problems:\n%s", p)
	}
}
