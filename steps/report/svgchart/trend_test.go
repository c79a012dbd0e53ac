package svgchart

import (
	"math"
	"strings"
	"testing"
)

// A trend's marks carry their numbers and link only to paths on the same server; a series whose
// values differ by a rounding step (18.8 and the next float) draws (its axis once looped
// forever making ticks one ulp apart).
func TestTrend(t *testing.T) {
	lo, hi := 18.7, 18.9
	next := math.Nextafter(18.8, 19)
	svg := string(Trend{Title: "ttft <b>", YLabel: "ms", Runs: []string{"a", "b", "c"},
		Points: []TrendPoint{{X: 0, Y: 18.8, Lo: &lo, Hi: &hi, Href: "/c/r1/", Tip: "r1", Data: [][2]string{{"run", `r"1`}}},
			{X: 1, Y: next, Href: "javascript:alert(1)"}, {X: 2, Y: 18.8, Href: "//evil.example/"}},
		Baseline: []TrendRef{{X: 0, Y: 18.8, Href: "/c/r1/verdict"}},
		Marks:    []TrendMark{{X: 1, Worse: true, Href: "/c/r2/verdict", Tip: "<script>"}}}.SVG())
	for _, want := range []string{`data-value="18.8"`, `data-lo="18.7"`, `data-hi="18.9"`, `data-run="r&#34;1"`, `<a href="/c/r1/">`,
		`data-baseline="18.8"`, `<a href="/c/r1/verdict">`, `data-kind="change"`, `<a href="/c/r2/verdict">`, `ttft &lt;b&gt;`} {
		if !strings.Contains(svg, want) {
			t.Errorf("no %s in\n%s", want, svg)
		}
	}
	for _, bad := range []string{"javascript:", "evil.example", "<script>", "<b>"} {
		if strings.Contains(svg, bad) {
			t.Errorf("%s reached the drawing", bad)
		}
	}
}
