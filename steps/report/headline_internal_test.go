package report

import (
	"math"
	"slices"
	"testing"
)

// TestTopHeadline: the cover keeps the rows with the highest peaks, in their original order,
// rows without a peak last, and every row when there are few.
func TestTopHeadline(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		name  string
		peaks []float64
		n     int
		want  []int
	}{
		{"few rows all kept", []float64{1, nan, 3}, 8, []int{0, 1, 2}},
		{"best kept in order", []float64{5, 9, 1, 7}, 2, []int{1, 3}},
		{"no peak ranks last", []float64{nan, 2, nan, 1}, 2, []int{1, 3}},
		{"ties keep the earlier", []float64{4, 4, 4}, 2, []int{0, 1}},
		{"no peaks at all", []float64{nan, nan, nan}, 1, []int{0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := topHeadline(tc.peaks, tc.n); !slices.Equal(got, tc.want) {
				t.Errorf("topHeadline(%v, %d) = %v, want %v", tc.peaks, tc.n, got, tc.want)
			}
		})
	}
}
