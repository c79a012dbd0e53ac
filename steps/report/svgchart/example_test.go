package svgchart_test

import (
	"fmt"
	"html/template"
	"image/color"
	"os"
	"strings"

	"github.com/perfdag/perfdag/steps/report/svgchart"
)

// A page embeds Style once, any number of charts, and Script once at the end of <body>.
func Example() {
	ttft := svgchart.XY{
		Title: "TTFT vs concurrency",
		X:     svgchart.Axis{Label: "concurrency", Log: true, Ticks: []float64{1, 4, 16}},
		Y:     svgchart.Axis{Label: "TTFT p50 (ms)"},
		Series: []svgchart.Series{{Name: "aa-1k", Color: color.RGBA{0, 0x72, 0xB2, 255}, Line: true,
			Points: []svgchart.Point{{X: 1, Y: 41.5, Tip: "cell aa-1k, C=1"}, {X: 4, Y: 43.8}, {X: 16, Y: 58.8}}}},
	}
	hist := svgchart.Histogram{Title: "TTFT of each request", XLabel: "TTFT (ms)", Values: []float64{38, 41, 42, 47, 60}}
	page := template.Must(template.New("page").Parse(`<!doctype html><style>{{.Style}}</style>
<body>{{.TTFT}}{{.Hist}}<script>{{.Script}}</script></body>`))
	var b strings.Builder
	err := page.Execute(&b, map[string]any{
		"Style": template.CSS(svgchart.Style), "Script": template.JS(svgchart.Script),
		"TTFT": ttft.SVG(), "Hist": hist.SVG(),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	fmt.Println(strings.Count(b.String(), `class="pt"`), "hoverable marks")
	// Output: 8 hoverable marks
}
