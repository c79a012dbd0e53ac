package diag

import (
	"slices"
	"testing"
)

// Closest offers the n nearest candidates however far they are, nearest first, ties in the
// candidates' order, case-insensitively.
func TestClosest(t *testing.T) {
	ids := []string{"run-shape[aa-1k/c1]", "run-shape[aa-10k/c1]", "settle[aa-1k/c1]", "RUN-SHAPE[AA-1K/C4]"}
	for _, c := range []struct {
		s    string
		n    int
		want []string
	}{
		{"run-shape[nosuch/c1]", 2, []string{"run-shape[aa-1k/c1]", "run-shape[aa-10k/c1]"}},
		{"run-shape[aa-1k/c4]", 1, []string{"RUN-SHAPE[AA-1K/C4]"}},
		{"zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz", 3, ids[:3]}, // all at distance 34: in their order
		{"x", 9, ids[:0:0]},
	} {
		cands := ids
		if c.s == "x" {
			cands = nil
		}
		if got := Closest(c.s, cands, c.n); !slices.Equal(got, c.want) {
			t.Errorf("Closest(%q, %d) = %v, want %v", c.s, c.n, got, c.want)
		}
	}
}
