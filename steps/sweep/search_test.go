package sweep

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/perfdag/perfdag/schema/campaigndir"
)

// run drives nextProbe against a monotone truth (met iff c <= knee) and returns the probes.
func runSearch(from, to, step, knee int, free []int) ([]int, int) {
	var ps []judged
	for range 1000 {
		c := nextProbe(from, to, step, ps, free)
		if c == 0 {
			break
		}
		ps = append(ps, judged{conc: c, met: c <= knee})
	}
	var out []int
	for _, p := range ps {
		out = append(out, p.conc)
	}
	k, _, _, _ := band(from, to, ps)
	return out, k
}

func TestSearchExactWithinBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		from := 1 + rng.IntN(20)
		to := from + rng.IntN(300)
		k := from - 1 + rng.IntN(to-from+2) // from−1 (none) .. to (at top)
		probes, got := runSearch(from, to, 1, k, nil)
		want := k
		if k < from {
			want = 0
		}
		if got != want {
			t.Fatalf("[%d, %d] knee %d: found %d with probes %v", from, to, k, got, probes)
		}
		if len(probes) > bound(from, to, 1, false) {
			t.Fatalf("[%d, %d] knee %d: %d probes > bound %d: %v", from, to, k, len(probes), bound(from, to, 1, false), probes)
		}
	}
}

func TestSearchResolution(t *testing.T) {
	probes, got := runSearch(1, 1024, 16, 300, nil)
	if got > 300 || got < 300-16 {
		t.Fatalf("knee %d not within 16 below 300 (probes %v)", got, probes)
	}
	if len(probes) > bound(1, 1024, 16, false) {
		t.Fatalf("%d probes > bound %d", len(probes), bound(1, 1024, 16, false))
	}
}

// Free points (measured by an earlier run) inside the bracket are probed before new midpoints,
// and new measurements never exceed the bound.
func TestSearchTakesFreeProbesFirst(t *testing.T) {
	free := []int{1, 64, 32, 48, 40, 36, 38, 37} // an earlier search for knee 37
	probes, got := runSearch(1, 64, 1, 33, free)
	if got != 33 {
		t.Fatalf("knee %d, want 33 (probes %v)", got, probes)
	}
	fresh := 0
	for _, c := range probes {
		if !slices.Contains(free, c) {
			fresh++
		}
	}
	if fresh > bound(1, 64, 1, false) || !slices.Contains(probes, 36) {
		t.Fatalf("probes %v: %d new, want the free c36 taken and at most %d new", probes, fresh, bound(1, 64, 1, false))
	}
	// with nothing free the same search measures its own path
	plain, _ := runSearch(1, 64, 1, 33, nil)
	if fresh >= len(plain) {
		t.Fatalf("free probes saved nothing: %d new vs %d", fresh, len(plain))
	}
}

// A pass above a failure (noise) is not trusted: the lowest failure bounds the bracket.
func TestSearchNonMonotoneTrustsLowestFailure(t *testing.T) {
	ps := []judged{{conc: 1, met: true}, {conc: 64, met: false}, {conc: 32, met: false}, {conc: 48, met: true}}
	if b := knownBracket(ps); b.lo != 1 || b.hi != 32 {
		t.Fatalf("bracket %+v, want lo 1 hi 32", b)
	}
}

func TestGain(t *testing.T) {
	pt := func(c int, tps float64) judged {
		return judged{conc: c, point: &campaigndir.PointResult{Concurrency: c, OutputTokPerS: tps}}
	}
	ps := []judged{pt(1, 100), pt(2, 150), pt(4, 153), {conc: 8}}
	for _, tc := range []struct {
		i    int
		want float64
	}{{1, 50}, {2, 2}, {0, 1e9}, {3, 1e9}} {
		if g := gain(ps, tc.i); g < tc.want-1e-9 || g > tc.want+1e-9 {
			t.Errorf("gain(%d) = %v, want %v", tc.i, g, tc.want)
		}
	}
}
