package svgchart

import (
	"encoding/xml"
	"html"
	"image/color"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/steps/testkit"
)

// hostile strings a campaign file could carry into a chart.
var hostile = []string{`<script>alert(1)</script>`, `"><img src=x onerror=alert(2)>`, `' onmouseover='alert(3)`, `&lt;b&gt;`}

func demoXY() XY {
	return XY{
		Title: "TTFT vs request throughput",
		X:     Axis{Label: "request throughput (req/s)"},
		Y:     Axis{Label: "TTFT p50 (ms)"},
		Series: []Series{
			{Name: "H100 FP8 TP8", Color: color.RGBA{0, 0x72, 0xB2, 255}, Line: true, Points: []Point{{X: 1.25, Y: 80.5, Label: "c1"}, {X: 4.5, Y: 120.125}, {X: 7.75, Y: 310.0625, Label: "c16", Tip: "cell a"}}},
			{Name: "B200 FP4 TP4", Color: color.RGBA{0xD5, 0x5E, 0, 255}, Marker: Cross, Hollow: true, Points: []Point{{X: 2, Y: 60}, {X: 9, Y: 200}}},
		},
		Refs:   []RefLine{{Name: "SLA 300 ms", Y: 300, Color: color.Gray{0x80}}},
		Legend: true,
	}
}

// wellFormed fails unless s parses as XML from start to end (an escaping error breaks parsing)
// and holds no script or img element and no on* event attribute (what an injection would add).
func wellFormed(t *testing.T, s string) {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(s))
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return
		} else if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, s)
		}
		if el, ok := tok.(xml.StartElement); ok {
			if n := strings.ToLower(el.Name.Local); n == "script" || n == "img" || n == "foreignobject" {
				t.Errorf("injected <%s> element:\n%s", n, s)
			}
			for _, a := range el.Attr {
				if strings.HasPrefix(strings.ToLower(a.Name.Local), "on") {
					t.Errorf("injected %s attribute on <%s>:\n%s", a.Name.Local, el.Name.Local, s)
				}
			}
		}
	}
}

var dataY = regexp.MustCompile(`data-y="([^"]*)"`)

func TestXYMarksCarryExactValues(t *testing.T) {
	s := string(demoXY().SVG())
	wellFormed(t, s)
	if n := strings.Count(s, `class="pt"`); n != 5+1 { // five points and the reference line
		t.Errorf("%d hoverable marks, want 6", n)
	}
	var got []float64
	for _, m := range dataY.FindAllStringSubmatch(s, -1) {
		v, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			t.Fatalf("data-y %q: %v", m[1], err)
		}
		got = append(got, v)
	}
	want := []float64{300, 80.5, 120.125, 310.0625, 60, 200}
	if len(got) != len(want) {
		t.Fatalf("data-y values %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("data-y[%d] = %v, want %v exactly", i, got[i], want[i])
		}
	}
	if !strings.Contains(s, "TTFT p50 (ms): 310.0625\ncell a") {
		t.Errorf("tooltip of the labelled point lacks its exact value and tip:\n%s", s)
	}
	testkit.Golden(t, "testdata/xy.svg", []byte(strings.ReplaceAll(s, "><", ">\n<")))
}

func TestEveryChartEscapesText(t *testing.T) {
	for _, h := range hostile {
		charts := map[string]string{
			"xy": string(XY{Title: h, X: Axis{Label: h}, Y: Axis{Label: h}, Legend: true,
				Series: []Series{{Name: h, Points: []Point{{X: 1, Y: 2, Label: h, Tip: h}}}}, Refs: []RefLine{{Name: h, Y: 1}}}.SVG()),
			"bars": string(Bars{Title: h, XLabel: h, YLabel: h, Categories: []string{h},
				Groups: []BarGroup{{Name: h, Values: []float64{3}}}, Refs: []RefLine{{Name: h, Y: 1}}}.SVG()),
			"heatmap":   string(Heatmap{Title: h, Rows: []string{h}, Cols: []string{h}, Values: [][]float64{{1}}}.SVG()),
			"histogram": string(Histogram{Title: h, XLabel: h, Values: []float64{1, 2, 3}}.SVG()),
			"legend":    string(Legend([]Series{{Name: h}}, 300)),
			"timeline":  string(Timeline{Title: h, XLabel: h, MarkName: h, Spans: []Span{{Start: 0, End: 1, Mark: 0.5, Label: h}}}.SVG()),
		}
		for name, s := range charts {
			wellFormed(t, s)
			if !strings.Contains(s, html.EscapeString(h)) {
				t.Errorf("%s does not show %q as escaped text", name, h)
			}
		}
	}
}

func TestLogAxisSkipsWhatItCannotPlace(t *testing.T) {
	ch := XY{X: Axis{Log: true}, Y: Axis{Log: true}, Series: []Series{{Name: "s", Line: true,
		Points: []Point{{X: 0, Y: 1}, {X: -1, Y: 1}, {X: 10, Y: math.NaN()}, {X: 10, Y: 100}, {X: 1000, Y: 5}}}}}
	s := string(ch.SVG())
	wellFormed(t, s)
	if n := strings.Count(s, `class="pt"`); n != 2 {
		t.Errorf("%d marks on a log pane, want 2 (zero, negative and NaN points left out)", n)
	}
	if strings.Contains(s, "NaN") || strings.Contains(s, "Inf") {
		t.Errorf("a coordinate is not finite:\n%s", s)
	}
	empty := string(XY{Empty: "no plot-ready points"}.SVG())
	if !strings.Contains(empty, "no plot-ready points") || strings.Contains(empty, `class="pt"`) {
		t.Errorf("an empty pane should say so and draw no mark:\n%s", empty)
	}
}

func TestBins(t *testing.T) {
	tests := []struct {
		name   string
		values []float64
		n      int
		counts []int
	}{
		{"edges", []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 5, []int{2, 2, 2, 2, 3}},
		{"max in last bin", []float64{0, 10}, 2, []int{1, 1}},
		{"one value", []float64{4, 4, 4}, 3, []int{3}},
		{"non-finite dropped", []float64{1, math.NaN(), math.Inf(1), 2}, 1, []int{2}},
		{"empty", nil, 3, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []int
			for _, b := range Bins(tt.values, tt.n) {
				got = append(got, b.Count)
			}
			if len(got) != len(tt.counts) {
				t.Fatalf("counts %v, want %v", got, tt.counts)
			}
			for i := range got {
				if got[i] != tt.counts[i] {
					t.Fatalf("counts %v, want %v", got, tt.counts)
				}
			}
		})
	}
	if n := len(Bins(make([]float64, 10000), 0)); n != 1 {
		t.Errorf("10000 equal values: %d bins, want 1", n)
	}
	spread := make([]float64, 100)
	for i := range spread {
		spread[i] = float64(i)
	}
	if n := len(Bins(spread, 0)); n != 10 {
		t.Errorf("100 values, default bins: %d, want ⌈√100⌉ = 10", n)
	}
}

func TestTicks(t *testing.T) {
	tests := []struct {
		a      Axis
		lo, hi float64
		want   []float64
	}{
		{Axis{}, 0, 10, []float64{0, 2, 4, 6, 8, 10}},
		{Axis{}, 0, 1, []float64{0, 0.2, 0.4, 0.6000000000000001, 0.8, 1}},
		{Axis{Log: true}, 1, 100, []float64{1, 2, 5, 10, 20, 50, 100}},
		{Axis{Log: true}, 1, 1e6, []float64{1, 10, 100, 1000, 10000, 100000, 1e6}},
		{Axis{Ticks: []float64{1, 8, 64, 512}}, 1, 100, []float64{1, 8, 64}},
	}
	for _, tt := range tests {
		got := ticks(tt.a, tt.lo, tt.hi)
		if len(got) != len(tt.want) {
			t.Errorf("ticks(%+v, %v, %v) = %v, want %v", tt.a, tt.lo, tt.hi, got, tt.want)
			continue
		}
		for i := range got {
			if math.Abs(got[i]-tt.want[i]) > 1e-9*math.Max(1, tt.want[i]) {
				t.Errorf("ticks(%+v, %v, %v) = %v, want %v", tt.a, tt.lo, tt.hi, got, tt.want)
				break
			}
		}
	}
}

func TestShort(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 12.5: "12.5", 0.25: "0.25", 1234: "1234", 15000: "15k", 2.5e6: "2.5M", 3e9: "3G", -20000: "-20k", 0.0001: "0.0001"} {
		if got := Short(v); got != want {
			t.Errorf("Short(%v) = %q, want %q", v, got, want)
		}
	}
}

func TestHeatmapShading(t *testing.T) {
	s := string(Heatmap{Rows: []string{"a"}, Cols: []string{"lo", "hi", "gap"}, Values: [][]float64{{1, 3, math.NaN()}}, Higher: true}.SVG())
	wellFormed(t, s)
	dark, _ := Shade(1)
	light, _ := Shade(0)
	if !strings.Contains(s, `fill="`+dark+`"`) || !strings.Contains(s, `fill="`+light+`"`) || !strings.Contains(s, `fill="#c8c8c8"`) {
		t.Errorf("heatmap should shade the best dark, the worst light and the gap grey:\n%s", s)
	}
	if n := strings.Count(s, `class="pt"`); n != 2 {
		t.Errorf("%d hoverable cells, want 2 (the gap has no value)", n)
	}
}

func TestTimelineSpans(t *testing.T) {
	s := string(Timeline{XLabel: "s since start", MarkName: "first token", Spans: []Span{
		{Start: 0, End: 1.5, Mark: 0.25, Label: "req 1"},
		{Start: 0.5, End: 2.125, Mark: math.NaN(), Label: "req 2"},
		{Start: math.NaN(), End: 3, Label: "never sent"},
	}}.SVG())
	wellFormed(t, s)
	if n := strings.Count(s, `class="pt"`); n != 2 {
		t.Errorf("%d spans drawn, want 2 (a span without a start is left out)", n)
	}
	if !strings.Contains(s, "req 1\nstart: 0\nend: 1.5\nduration: 1.5\nfirst token: 0.25") {
		t.Errorf("the first span's tooltip lacks its exact times:\n%s", s)
	}
	if strings.Count(s, `class="tl-mark"`) != 1 {
		t.Error("want one first-token tick (the second span has none)")
	}
}

// Ticks closer together than Short's three decimals are labelled with as many as tell them
// apart (an acceptance length of 3.0999 to 3.1002 read 3.1 at every tick); others keep Short.
func TestTickLabelsApart(t *testing.T) {
	if got := tickLabels([]float64{3.0999, 3.1, 3.1001, 3.1002}); strings.Join(got, " ") != "3.0999 3.1000 3.1001 3.1002" {
		t.Errorf("close ticks labelled %q", got)
	}
	if got := tickLabels([]float64{0, 2500, 5000, 10000}); strings.Join(got, " ") != "0 2500 5000 10k" {
		t.Errorf("ticks labelled %q, want Short's", got)
	}
}
