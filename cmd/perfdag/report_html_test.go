package main

import (
	"github.com/perfdag/perfdag/schema"

	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/report/svgchart"
	"github.com/perfdag/perfdag/steps/testkit/browser"
)

// TestReportHTMLOfQuickstartInBrowser runs the quickstart against sim://, writes its report with
// `perfdag report DIR --html FILE` and opens the file from file:// in headless Chromium: every
// chart is drawn with its points, each point's tooltip shows the TTFT p50 of its point.json
// exactly, nothing is fetched, no console error or dialog. Screenshots of every page are
// written to $PERFDAG_SCREENSHOTS.
func TestReportHTMLOfQuickstartInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the quickstart (~45 s)")
	}
	b := browser.Start(t) // first: a machine without Chromium skips before the campaign runs
	dir := filepath.Join(t.TempDir(), "qs")
	if out, err := perfdagChild("run", "../../pipelines/quickstart.yaml", "--out", dir).CombinedOutput(); err != nil {
		t.Fatalf("run quickstart: %v\n%s", err, out)
	}
	pdf := filepath.Join(dir, campaigndir.Report())
	before, err := os.Stat(pdf)
	if err != nil {
		t.Fatal(err)
	}
	html := filepath.Join(t.TempDir(), "quickstart report.html")
	out, err := perfdagChild("report", dir, "--html", html).Output()
	if err != nil {
		t.Fatalf("report --html: %v\n%s", err, out)
	}
	if strings.TrimSpace(string(out)) != html {
		t.Errorf("stdout %q, want the HTML's path", out)
	}
	if after, err := os.Stat(pdf); err != nil || !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("--html must leave DIR as it is; report.pdf changed (%v)", err)
	}

	b.Navigate(browser.FileURL(html))
	want := browser.Eval[int](b, `+document.querySelector("main").dataset.charts`)
	marks := browser.Eval[[]int](b, `[...document.querySelectorAll("figure.chart svg.svgchart")].filter(s => s.getBoundingClientRect().width > 100).map(s => s.querySelectorAll(".pt").length)`)
	// one mbt value: the two scatter panes, then TPM, the two DCGM panes and spec decode
	if want != 6 || len(marks) != want {
		t.Errorf("%d charts drawn, the report says %d, the quickstart has 6", len(marks), want)
	}
	for i, n := range marks {
		if n == 0 {
			t.Errorf("chart %d has no points", i+1)
		}
	}
	pattern := strings.NewReplacer("cell-x", "*", "/c1/", "/c*/").Replace(campaigndir.Point("cell-x", schema.Conc(1)))
	points, _ := filepath.Glob(filepath.Join(dir, filepath.FromSlash(pattern)))
	if len(points) != 6 {
		t.Fatalf("%d point.json files, the quickstart has 6", len(points))
	}
	for _, p := range points {
		var pt struct {
			Cell        string `json:"cell"`
			Concurrency int    `json:"concurrency"`
			TTFT        struct {
				P50 float64 `json:"p50"`
			} `json:"ttft_ms"`
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &pt); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		b.Hover(fmt.Sprintf(`svg.xy .pt[aria-label*="cell %s, C=%d"][aria-label*="TTFT p50"]`, pt.Cell, pt.Concurrency))
		got := browser.Eval[string](b, `(() => { const t = document.querySelector(".svgchart-tip"); return t && !t.hidden ? t.innerText : "(hidden)"; })()`)
		if line := "TTFT p50 (ms): " + svgchart.Exact(pt.TTFT.P50); !strings.Contains(got, line) {
			t.Errorf("%s: tooltip %q lacks %q", p, got, line)
		}
		if pt.Cell == "aa-10k" && pt.Concurrency == 4 {
			b.Screenshot("hover-aa-10k-c4")
		}
	}
	pages := browser.Eval[int](b, `document.querySelectorAll("section.page").length`)
	for i := 1; i <= pages; i++ {
		b.ScreenshotOf(fmt.Sprintf("page-%d", i), fmt.Sprintf("#page-%d", i))
	}
	b.Clean()
}
