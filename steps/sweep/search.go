package sweep

import (
	"math"
	"math/bits"
	"slices"
)

// bracket is what a search knows: the highest concurrency that met the SLO below the lowest
// that did not (0 when none is known of either).
type bracket struct{ lo, hi int }

// knownBracket reads the bracket off the probes under the search's assumption that meeting
// the SLO is monotone in concurrency: the lowest failure bounds it above, the highest pass
// below that bounds it below (a pass above a failure is noise and is not trusted).
func knownBracket(ps []judged) bracket {
	var b bracket
	for _, p := range ps {
		if !p.met && (b.hi == 0 || p.conc < b.hi) {
			b.hi = p.conc
		}
	}
	for _, p := range ps {
		if p.met && p.conc > b.lo && (b.hi == 0 || p.conc < b.hi) {
			b.lo = p.conc
		}
	}
	return b
}

// nextProbe is the search's decision, a pure function of what is known: the lower bound
// first (if it fails there is no knee), then the upper bound (if it passes the knee is at the
// top), then bisection of the bracket until it is no wider than step. A concurrency an
// earlier run measured (free) inside the bracket is taken before a new midpoint, the one
// nearest the midpoint first, so an edited SLO re-uses what exists. Returns 0 when done.
func nextProbe(from, to, step int, ps []judged, free []int) int {
	probed := map[int]bool{}
	for _, p := range ps {
		probed[p.conc] = true
	}
	if !probed[from] {
		return from
	}
	b := knownBracket(ps)
	if b.lo == 0 {
		return 0 // the lower bound fails: no knee
	}
	if !probed[to] {
		return to
	}
	if b.hi == 0 {
		return 0 // the upper bound meets the SLO
	}
	if b.hi-b.lo <= step {
		return 0
	}
	mid := b.lo + (b.hi-b.lo)/2
	best := 0
	for _, f := range free {
		if f > b.lo && f < b.hi && !probed[f] && (best == 0 || abs(f-mid) < abs(best-mid)) {
			best = f
		}
	}
	if best != 0 {
		return best
	}
	return mid
}

// bound is the most points a search of [from, to] measures: the two ends, then at most
// ⌈log2((to − from)/step)⌉ bisections. Free probes (reused) cost nothing and only ever
// narrow the bracket, so they never add a measurement to the bound.
func bound(from, to, step int) int {
	if to <= from {
		return 1
	}
	w := (to - from + step - 1) / step
	return 2 + ceilLog2(w)
}

func ceilLog2(n int) int {
	if n <= 1 {
		return 0
	}
	return bits.Len(uint(n - 1))
}

func abs(n int) int { return int(math.Abs(float64(n))) }

// knee is the search's answer: the highest concurrency that met the SLO below the lowest that
// did not, and whether that is the upper bound itself.
func knee(to int, ps []judged) (int, bool) {
	b := knownBracket(ps)
	return b.lo, b.lo == to && b.hi == 0
}

func concs(ps []judged) []int {
	out := make([]int, 0, len(ps))
	for _, p := range ps {
		out = append(out, p.conc)
	}
	slices.Sort(out)
	return out
}
