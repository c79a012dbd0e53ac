package webui

import (
	"fmt"
	"testing"
)

func TestNiceTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		want   string
	}{
		{0, 2.283, "[0 0.5 1 1.5 2]"},
		{0, 8, "[0 2 4 6 8]"},
		{0, 100, "[0 20 40 60 80 100]"},
		{3, 3, "[3]"},
		{0.1, 0.13, "[0.1 0.105 0.11 0.115 0.12 0.125 0.13]"},
	} {
		if got := fmt.Sprint(niceTicks(tc.lo, tc.hi)); got != tc.want {
			t.Errorf("niceTicks(%v, %v) = %s, want %s", tc.lo, tc.hi, got, tc.want)
		}
	}
}
