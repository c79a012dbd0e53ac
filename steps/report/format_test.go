package report

import (
	"strings"
	"testing"

	"github.com/johnfercher/maroto/v2/pkg/consts/fontstyle"
	"github.com/johnfercher/maroto/v2/pkg/props"
	"github.com/phpdave11/gofpdf"
)

func colorBlack() props.Color { return props.Color{} }

func TestNumberFormats(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	tests := []struct {
		name, got, want string
	}{
		{"fnum large groups thousands", fnum(1234567.4), "1,234,567"},
		{"fnum rounds from 100 up", fnum(199.5), "200"},
		{"fnum one decimal from 10", fnum(72.25), "72.2"},
		{"fnum two decimals below 10", fnum(0.125), "0.12"},
		{"fnum negative", fnum(-4321), "-4,321"},
		{"num nil", num(nil), "n/a"},
		{"big millions", big(f(12_345_678)), "12.35M"},
		{"big thousands", big(f(45_678)), "45.7k"},
		{"big small", big(f(9_876)), "9,876"},
		{"pct ratio", pct(f(0.4567)), "45.7 %"},
		{"pctOf percent", pctOf(f(75)), "75.0 %"},
		{"usd", usd(f(8.6)), "$8.60"},
		{"group short", group("999"), "999"},
		{"ints", ints([]int{1, 8, 32}), "1, 8, 32"},
		{"stated short as written", stated(12.25), "12.25"},
		{"stated fraction", stated(0.5625), "0.5625"},
		{"stated whole", stated(50), "50"},
		{"stated noise", stated(41.115097500000005), "41.1"},
		{"stated noise below 10", stated(*f(0.1) + 0.2), "0.30"},
		{"stated large", stated(1234567.891), "1,234,568"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, tt.got, tt.want)
		}
	}
	// mean of 1, 2 and a nil = 1.5: nils are unmeasured, not zero.
	if m := mean([]*float64{f(1), nil, f(2)}); m == nil || *m != 1.5 {
		t.Errorf("mean = %v, want 1.5", m)
	}
	if mean([]*float64{nil}) != nil {
		t.Error("mean of nothing measured is not nil")
	}
}

func TestFitWordsBreaksOnlyOverlongWords(t *testing.T) {
	measure := gofpdf.New("P", "mm", "A4", "")
	d := &doc{measure: measure, tr: measure.UnicodeTranslatorFromDescriptor(""), redact: func(s string) string { return s }}
	tests := []struct {
		name, in string
		width    float64
		check    func(string) bool
	}{
		{"short words untouched", "vllm v0.11.0", 30, func(s string) bool { return s == "vllm v0.11.0" }},
		{"long id breaks after a hyphen", "gb300-nvfp4-tp4-ep-mtp-mbt2048", 20, func(s string) bool {
			return strings.Contains(s, "- ") && strings.ReplaceAll(s, " ", "") == "gb300-nvfp4-tp4-ep-mtp-mbt2048"
		}},
		{"no separator breaks anywhere", "abcdefghijklmnopqrstuvwxyz0123456789", 15, func(s string) bool {
			return strings.Count(s, " ") >= 1 && strings.ReplaceAll(s, " ", "") == "abcdefghijklmnopqrstuvwxyz0123456789"
		}},
	}
	for _, tt := range tests {
		got := d.fitWords(tt.in, 7, fontstyle.Normal, tt.width)
		if !tt.check(got) {
			t.Errorf("%s: %q", tt.name, got)
		}
		d.measure.SetFont("Arial", "", 7)
		for _, w := range strings.Fields(got) {
			if d.measure.GetStringWidth(w) > tt.width {
				t.Errorf("%s: piece %q wider than %g mm", tt.name, w, tt.width)
			}
		}
	}
}
