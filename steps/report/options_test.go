package report

import (
	"slices"
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
