package schema

import (
	"math"
	"testing"
)

// A rate search's grid starts at from and ends at to exactly, rises by at most the resolution
// a step, has about ln(to/from) / ln(1 + resolution) steps, and every rate of it is a short key
// that reads back to itself.
func TestRateGrid(t *testing.T) {
	for _, c := range []struct{ from, to, pct float64 }{{1, 64, 2}, {0.5, 100, 1}, {10, 400, 5}, {2, 2, 2}, {3, 3.05, 2}, {0.01, 100000, 0.1}, {1, 1.02, 2}, {7.77, 99.9, 3}} {
		s := Search{Over: SearchOverRate, From: c.from, To: c.to, Resolution: Resolution{Pct: c.pct}}
		g := s.RateGrid()
		if g[0] != c.from || g[len(g)-1] != c.to {
			t.Fatalf("%+v: grid from %v to %v", c, g[0], g[len(g)-1])
		}
		for i, r := range g {
			l, err := ParseLoad(RateAt(r, 0).Key())
			if err != nil || l.Rate != r {
				t.Fatalf("%+v: rate %v keyed %s reads back %v (%v)", c, r, RateAt(r, 0).Key(), l.Rate, err)
			}
			if i > 0 && (r <= g[i-1] || r > g[i-1]*(1+c.pct/100)*(1+1e-12)) {
				t.Fatalf("%+v: step %v → %v is not within %v %%", c, g[i-1], r, c.pct)
			}
		}
		// the formula's steps; a fine resolution over a wide range may take a few more
		want, n := math.Ceil(math.Log(c.to/c.from)/math.Log(1+c.pct/100)), float64(len(g)-1)
		if c.to != c.from && (n < max(want, 1) || n > want*1.02+3 || c.pct >= 1 && n != want) {
			t.Errorf("%+v: %v steps, ln(to/from)/ln(1+resolution) rounds up to %v", c, n, want)
		}
	}
	for _, bad := range []string{"0.05%", "101%", "x%", "-1", "2.5"} {
		if _, err := ParseResolution(bad); err == nil {
			t.Errorf("resolution %q accepted", bad)
		}
	}
	if r, err := ParseResolution("2%"); err != nil || r.Pct != 2 || r.String() != "2%" {
		t.Errorf("2%%: %+v %v", r, err)
	}
}
