package charts

import (
	"bytes"
	"flag"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"testing"

	"gonum.org/v1/plot/vg"
)

var dump = flag.String("dump", "", "write the rendered PNGs into this directory for a look")

func save(t *testing.T, name string, b []byte) {
	t.Helper()
	if *dump == "" {
		return
	}
	if err := os.WriteFile(filepath.Join(*dump, name), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func decode(t *testing.T, b []byte) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	return img
}

// countColor counts pixels within a small distance of want (anti-aliasing shifts edges).
func countColor(img image.Image, want color.RGBA) int {
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			d := math.Abs(float64(r>>8)-float64(want.R)) + math.Abs(float64(g>>8)-float64(want.G)) + math.Abs(float64(bl>>8)-float64(want.B))
			if d < 12 {
				n++
			}
		}
	}
	return n
}

func TestPlaceLabelsNeverOverlap(t *testing.T) {
	bounds := box{0, 0, 100, 60}
	tests := []struct {
		name      string
		reqs      []labelReq
		obstacles []box
		wantN     int
		wantFirst box // where the first label lands
	}{
		{
			name:      "free space puts the label north-east of its point",
			reqs:      []labelReq{{at: vg.Point{X: 50, Y: 30}, w: 10, h: 4, gap: 2}},
			wantN:     1,
			wantFirst: box{52, 31.2, 62, 35.2}, // x = 50+2, y = 30+2*0.6
		},
		{
			name: "three labels on one point take three corners",
			reqs: []labelReq{
				{at: vg.Point{X: 50, Y: 30}, w: 10, h: 4, gap: 2},
				{at: vg.Point{X: 50, Y: 30}, w: 10, h: 4, gap: 2},
				{at: vg.Point{X: 50, Y: 30}, w: 10, h: 4, gap: 2},
			},
			wantN:     3,
			wantFirst: box{52, 31.2, 62, 35.2},
		},
		{
			name:      "a point in the top-right corner puts its label south-west",
			reqs:      []labelReq{{at: vg.Point{X: 98, Y: 58}, w: 10, h: 4, gap: 2}},
			wantN:     1,
			wantFirst: box{86, 52.8, 96, 56.8}, // x = 98-2-10, y = 58-1.2-4
		},
		{
			name:      "an obstacle north-east moves the label north-west",
			reqs:      []labelReq{{at: vg.Point{X: 50, Y: 30}, w: 10, h: 4, gap: 2}},
			obstacles: []box{{55, 31, 58, 34}},
			wantN:     1,
			wantFirst: box{38, 31.2, 48, 35.2},
		},
		{
			name:  "a label wider than the pane is skipped",
			reqs:  []labelReq{{at: vg.Point{X: 50, Y: 30}, w: 120, h: 4, gap: 2}},
			wantN: 0,
		},
	}
	// Twenty labels crowded on nearby points: more than the free offsets allow.
	var crowd []labelReq
	for i := range 20 {
		crowd = append(crowd, labelReq{at: vg.Point{X: 50 + vg.Length(i%3), Y: 30}, w: 12, h: 5, gap: 2})
	}
	tests = append(tests, struct {
		name      string
		reqs      []labelReq
		obstacles []box
		wantN     int
		wantFirst box
	}{name: "a crowd keeps only labels that fit", reqs: crowd, wantN: -1, wantFirst: box{52, 31.2, 64, 36.2}})

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := placeLabels(tt.reqs, bounds, tt.obstacles)
			if tt.wantN >= 0 && len(got) != tt.wantN {
				t.Fatalf("placed %d labels, want %d", len(got), tt.wantN)
			}
			if tt.wantN < 0 && (len(got) == 0 || len(got) >= len(tt.reqs)) {
				t.Fatalf("placed %d of %d crowded labels, want some but not all", len(got), len(tt.reqs))
			}
			for i := range got {
				if !got[i].at.within(bounds) {
					t.Errorf("label %d at %+v leaves the pane", got[i].index, got[i].at)
				}
				for j := i + 1; j < len(got); j++ {
					if got[i].at.overlaps(got[j].at) {
						t.Errorf("labels %d and %d overlap: %+v %+v", got[i].index, got[j].index, got[i].at, got[j].at)
					}
				}
			}
			if len(got) > 0 {
				b := got[0].at
				const eps = 1e-9
				if math.Abs(float64(b.minX-tt.wantFirst.minX)) > eps || math.Abs(float64(b.minY-tt.wantFirst.minY)) > 1e-6 {
					t.Errorf("first label at %+v, want %+v", b, tt.wantFirst)
				}
			}
		})
	}
}

func TestChartDrawsEverySeries(t *testing.T) {
	blue, orange := Color(0), Color(1)
	ch := Chart{
		Title: "TTFT vs request throughput",
		X:     Axis{Label: "request throughput (req/s)"},
		Y:     Axis{Label: "TTFT avg (ms)"},
		Series: []Series{
			{Name: "H100 TP16 EP", Color: blue, Marker: Circle, Line: true,
				Points: []Point{{X: 1, Y: 100, Label: "c1"}, {X: 4, Y: 180, Label: ""}, {X: 8, Y: 400, Label: "c8"}}},
			{Name: "B200 TP8 TP MTP", Color: orange, Marker: Cross, Hollow: true, Line: true,
				Points: []Point{{X: 2, Y: 90, Label: "c1"}, {X: 6, Y: 150, Label: ""}, {X: 12, Y: 300, Label: "c8"}}},
		},
		Legend: true,
		Width:  95 * vg.Millimeter, Height: 60 * vg.Millimeter,
	}
	b, err := ch.PNG()
	if err != nil {
		t.Fatal(err)
	}
	save(t, "scatter.png", b)
	img := decode(t, b)
	// 95 mm at 150 dpi = 95/25.4*120 = 449 px.
	if w := img.Bounds().Dx(); w < 448 || w > 450 {
		t.Errorf("width %d px, want 449", w)
	}
	for _, c := range []color.RGBA{blue, orange} {
		if n := countColor(img, c); n < 20 {
			t.Errorf("colour %v: %d pixels, want the series drawn", c, n)
		}
	}
}

func TestChartLogAxesDropNonPositive(t *testing.T) {
	ch := Chart{
		X: Axis{Label: "arithmetic intensity (FLOP/byte)", Log: true},
		Y: Axis{Label: "TFLOP/s per GPU", Log: true},
		Series: []Series{{Name: "decode", Color: Color(2), Marker: Circle,
			Points: []Point{{X: 0, Y: 5, Label: ""}, {X: -1, Y: 3, Label: ""}, {X: 10, Y: 50, Label: "c1"}, {X: 100, Y: 400, Label: "c64"}}}},
		Width: 80 * vg.Millimeter, Height: 60 * vg.Millimeter,
	}
	b, err := ch.PNG()
	if err != nil {
		t.Fatalf("log chart with non-positive points: %v", err)
	}
	if n := countColor(decode(t, b), Color(2)); n < 10 {
		t.Errorf("%d pixels of the series colour, want the positive points drawn", n)
	}
}

func TestEmptyChartSaysSo(t *testing.T) {
	ch := Chart{Title: "nothing", X: Axis{Label: "x (s)"}, Y: Axis{Label: "y (ms)", Log: true},
		Width: 60 * vg.Millimeter, Height: 40 * vg.Millimeter, Empty: "no points measured"}
	b, err := ch.PNG()
	if err != nil {
		t.Fatal(err)
	}
	save(t, "empty.png", b)
	decode(t, b)
}

func TestLegendStripWraps(t *testing.T) {
	var few, many []Series
	for i := range 2 {
		few = append(few, Series{Name: "H100 FP8 TP16 EP", Color: Color(i), Marker: Circle})
	}
	for i := range 8 {
		many = append(many, Series{Name: "GB300 NVFP4 TP4 EP MTP", Color: Color(i), Marker: Marker(i % 2), Hollow: i >= 4})
	}
	_, hFew, err := LegendStrip(few, 180*vg.Millimeter, 7)
	if err != nil {
		t.Fatal(err)
	}
	b, hMany, err := LegendStrip(many, 180*vg.Millimeter, 7)
	if err != nil {
		t.Fatal(err)
	}
	save(t, "legend.png", b)
	if hMany <= hFew {
		t.Errorf("8 long entries: height %v, want more rows than 2 entries (%v)", hMany, hFew)
	}
}

func TestBarChart(t *testing.T) {
	tests := []struct {
		name    string
		chart   BarChart
		wantErr bool
	}{
		{name: "two groups with a missing value and a reference line", chart: BarChart{
			Title: "HBM", YLabel: "% of peak", Categories: []string{"c1", "c8", "c32"},
			Groups: []BarGroup{
				{Name: "DRAM active (DCGM proxy)", Color: Color(0), Values: []float64{20, 55, 81}},
				{Name: "delivered HBM BW", Color: Color(1), Values: []float64{15, math.NaN(), 74}},
			},
			Refs:  []RefLine{{Name: "75 % line", Y: 75, Color: color.RGBA{0xAA, 0, 0, 0xFF}}},
			YMax:  100,
			Width: 90 * vg.Millimeter, Height: 60 * vg.Millimeter,
		}},
		{name: "values that do not match the categories", wantErr: true, chart: BarChart{
			Categories: []string{"a", "b"}, Groups: []BarGroup{{Name: "g", Values: []float64{1}}},
			Width: 50 * vg.Millimeter, Height: 40 * vg.Millimeter,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := tt.chart.PNG()
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			save(t, "bars.png", b)
			img := decode(t, b)
			for _, g := range tt.chart.Groups {
				if n := countColor(img, g.Color.(color.RGBA)); n < 50 {
					t.Errorf("group %q: %d pixels, want its bars drawn", g.Name, n)
				}
			}
		})
	}
}

// A single point on a log axis (one concurrency measured) must draw, not panic.
func TestLogAxisSinglePoint(t *testing.T) {
	ch := Chart{Title: "one point", X: Axis{Label: "c", Log: true}, Y: Axis{Label: "y", Log: true},
		Series: []Series{{Name: "a", Points: []Point{{X: 1, Y: 13.3}}}}, Width: 200, Height: 150}
	if b, err := ch.PNG(); err != nil || len(b) == 0 {
		t.Fatalf("PNG: %d bytes, %v", len(b), err)
	}
}
