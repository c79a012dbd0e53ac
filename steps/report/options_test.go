package report

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
)

func TestOptionsFollowMeasuredConcurrencies(t *testing.T) {
	tests := []struct {
		name               string
		measured           []int
		report             *schema.Report
		wantLabels, wantHC []int
	}{
		{"quickstart", []int{1, 4, 16}, nil, []int{1, 4, 16}, []int{1, 4, 16}},
		{"llama sweep", []int{1, 2, 4}, nil, []int{1, 2, 4}, []int{1, 2, 4}},
		{"smoke", []int{1, 2, 4, 8, 16, 32}, nil, []int{1, 8, 32}, []int{8, 16, 32}},
		{"one point", []int{3}, nil, []int{3}, []int{3}},
		{"configured, unmeasured dropped", []int{1, 4, 16}, &schema.Report{LabelConcurrencies: []int{4, 64}, HeatmapConcurrencies: []int{8}}, []int{4}, []int{1, 4, 16}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := optionsOf(&schema.Campaign{Report: tc.report}, tc.measured)
			if !slices.Equal(o.labels, tc.wantLabels) || !slices.Equal(o.heatmapCs, tc.wantHC) {
				t.Errorf("labels %v heatmap %v, want %v and %v", o.labels, o.heatmapCs, tc.wantLabels, tc.wantHC)
			}
		})
	}
}

func TestEverySeriesLooksDistinct(t *testing.T) {
	base := schema.AtlasRow{Hardware: "H100", Quant: "FP8", TensorParallel: 1, ParallelStrategy: "TP", Concurrency: 1, PlotReady: true}
	var rows []schema.AtlasRow
	for _, shape := range []string{"aa-1k", "aa-10k", "aa-100k"} {
		for _, mtp := range []bool{false, true} {
			r := base
			r.Shape, r.MTP, r.CellID = shape, mtp, shape
			rows = append(rows, r)
		}
	}
	v := newView(Input{Atlas: rows})
	seen := map[string]string{}
	for _, x := range v.variants {
		look := fmt.Sprintf("%v/%v/%v", x.color, x.marker, x.key.MTP)
		if other, ok := seen[look]; ok {
			t.Errorf("%q and %q share colour, marker and fill", x.label, other)
		}
		seen[look] = x.label
	}
	if len(seen) != 6 {
		t.Errorf("%d distinct series, want 6", len(seen))
	}
}

func TestDeviceWord(t *testing.T) {
	for _, tc := range []struct {
		hw, want string
	}{{"H100", "GPU"}, {"GB300", "GPU"}, {"cpu", "device"}, {"", "device"}, {"Xeon 8480", "device"}} {
		v := newView(Input{Atlas: []schema.AtlasRow{{Hardware: tc.hw}}})
		if v.device != tc.want {
			t.Errorf("%q: device %q, want %q", tc.hw, v.device, tc.want)
		}
		if got := v.dev("output tok/s/GPU"); tc.want == "device" && strings.Contains(got, "GPU") {
			t.Errorf("%q: label %q still says GPU", tc.hw, got)
		}
	}
}
