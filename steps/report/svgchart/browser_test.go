package svgchart_test

import (
	"html/template"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/steps/report/svgchart"
	"github.com/perfdag/perfdag/steps/testkit/browser"
)

// TestChartsInBrowser draws one chart of each kind in Chromium, hovers a mark of each and
// reads the tooltip the Script shows; the screenshots are written for a person to look at.
func TestChartsInBrowser(t *testing.T) {
	b := browser.Start(t)
	blue, orange := color.RGBA{0, 0x72, 0xB2, 255}, color.RGBA{0xD5, 0x5E, 0, 255}
	charts := []template.HTML{
		svgchart.XY{Title: "TTFT vs throughput <b>not bold</b>", X: svgchart.Axis{Label: "req/s"}, Y: svgchart.Axis{Label: "TTFT p50 (ms)"}, Legend: true,
			Series: []svgchart.Series{
				{Name: "H100 TP8", Color: blue, Line: true, Points: []svgchart.Point{{X: 1.5, Y: 81.25, Label: "c1"}, {X: 4, Y: 130.5}, {X: 8, Y: 333.333, Label: "c16"}}},
				{Name: "B200 TP4 MTP", Color: orange, Marker: svgchart.Cross, Line: true, Dashed: true, Points: []svgchart.Point{{X: 2, Y: 50}, {X: 10, Y: 210}}},
			}}.SVG(),
		svgchart.Bars{Title: "Output TPM per GPU", YLabel: "tokens/min", Categories: []string{"G1", "G2", "G3"},
			Groups: []svgchart.BarGroup{{Name: "peak", Color: blue, Values: []float64{120000, 95000, 40000}}, {Name: "SLA", Color: orange, Values: []float64{90000, math.NaN(), 30000}}},
			Refs:   []svgchart.RefLine{{Name: "target", Y: 100000, Color: color.RGBA{0xB0, 0x1C, 0x1C, 255}}}}.SVG(),
		svgchart.Histogram{Title: "TTFT distribution", XLabel: "TTFT (ms)", Color: blue, Values: []float64{12, 15, 15, 18, 22, 25, 31, 40, 41, 80}}.SVG(),
		svgchart.Heatmap{Title: "tok/s/GPU at C=64", Rows: []string{"H100 TP8", "B200 TP4"}, Cols: []string{"mbt 2048", "mbt 8192"}, Higher: true,
			Values: [][]float64{{1800, 2100.5}, {3900, math.NaN()}}}.SVG(),
		svgchart.Timeline{Title: "Requests of point aa-1k C=4", XLabel: "seconds since the window opened", MarkName: "first token",
			Spans: []svgchart.Span{{Start: 0, End: 1.25, Mark: 0.125, Label: "request 1", Color: blue}, {Start: 0.1, End: 1.5, Mark: 0.3, Label: "request 2", Color: blue},
				{Start: 0.2, End: 0.9, Mark: math.NaN(), Label: "request 3 (failed)", Color: orange}, {Start: 1.3, End: 2.75, Mark: 1.5, Label: "request 4", Color: blue}}}.SVG(),
	}
	var page strings.Builder
	page.WriteString("<!doctype html><html><head><meta charset=utf-8><style>body{font-family:sans-serif;margin:16px}" + svgchart.Style + "</style></head><body>")
	for _, c := range charts {
		page.WriteString("<div>" + string(c) + "</div>")
	}
	page.WriteString("<script>" + svgchart.Script + "</script></body></html>")
	path := filepath.Join(t.TempDir(), "charts.html")
	if err := os.WriteFile(path, []byte(page.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	b.Navigate(browser.FileURL(path))
	if n := browser.Eval[int](b, `document.querySelectorAll("svg.svgchart").length`); n != 5 {
		t.Fatalf("%d charts drawn, want 5", n)
	}
	if n := browser.Eval[int](b, `document.querySelectorAll("b").length`); n != 0 {
		t.Errorf("a title's markup became an element")
	}
	hovers := []struct{ sel, want string }{
		{`svg.xy .pt[data-y="333.333"]`, "H100 TP8\nreq/s: 8\nTTFT p50 (ms): 333.333"},
		{`svg.bars .pt[data-y="95000"]`, "peak\nG2: 95000"},
		{`svg.histogram .pt`, "TTFT (ms) [12, 25.6)\ncount: 6"},
		{`svg.heatmap .pt[data-y="2100.5"]`, "H100 TP8\nmbt 8192: 2100.5"},
		{`svg.timeline .pt[data-start="1.3"]`, "request 4\nstart: 1.3\nend: 2.75\nduration: 1.45\nfirst token: 1.5"},
	}
	for i, h := range hovers {
		b.Hover(h.sel)
		got := browser.Eval[string](b, `(() => { const t = document.querySelector(".svgchart-tip"); return t && !t.hidden ? t.innerText : "(hidden)"; })()`)
		if got != h.want {
			t.Errorf("hover %s: tooltip %q, want %q", h.sel, got, h.want)
		}
		if i == 0 {
			b.Screenshot("hover-xy")
		}
	}
	b.ScreenshotFull("all")
	b.Clean()
}
