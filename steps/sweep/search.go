package sweep

import (
	"math"
	"math/bits"
	"slices"

	"github.com/perfdag/perfdag/schema"
)

// decided says what a probe is evidence of: a verdict (meets or misses) or nothing (its point
// measured to its max without deciding). A probe without a decision (a fixed request count) is
// judged on its estimates, as a verdict; an open-loop probe whose rate fell short is a miss.
func (j judged) decided() (known, meets bool) {
	if j.short != "" {
		return true, false // the rate was not met: a miss at its asked rate, however it measured
	}
	switch j.verdict {
	case "":
		return true, j.met
	case schema.VerdictMeets:
		return true, true
	case schema.VerdictMisses:
		return true, false
	}
	return false, false
}

// bracket is what a search knows: the highest concurrency decided to meet the SLO below the
// lowest decided to miss it (0 when none is known of either), and the undecided probes between.
type bracket struct {
	lo, hi    int
	undecided []int // ascending: the probes inside (lo, hi) (above lo when hi is 0), which bound nothing
}

// knownBracket reads the bracket off the probes under the search's assumption that meeting
// the SLO is monotone in concurrency: the lowest decided failure bounds it above, the highest
// decided pass below that — and below every undecided probe that misses on its estimate —
// bounds it below (a pass above a failure is noise and is not trusted). An undecided probe
// bounds nothing: it is only remembered, so the search does not measure it again.
func knownBracket(ps []judged) bracket {
	var b bracket
	for _, p := range ps {
		if known, meets := p.decided(); known && !meets && (b.hi == 0 || p.conc < b.hi) {
			b.hi = p.conc
		}
	}
	// an undecided probe that misses on its estimate caps the trusted passes too: a pass
	// decided above it contradicts it under the monotone assumption, and which one is the noise
	// cannot be told, so the band keeps the lower end that does not rest on the contradiction
	top := b.hi
	for _, p := range ps {
		if known, _ := p.decided(); !known && !p.met && (top == 0 || p.conc < top) {
			top = p.conc
		}
	}
	for _, p := range ps {
		if known, meets := p.decided(); known && meets && p.conc > b.lo && (top == 0 || p.conc < top) {
			b.lo = p.conc
		}
	}
	for _, p := range ps {
		if p.conc > b.lo && (b.hi == 0 || p.conc < b.hi) { // undecided, or a pass not trusted
			b.undecided = append(b.undecided, p.conc)
		}
	}
	slices.Sort(b.undecided)
	return b
}

// gaps are the open intervals between what the search knows, in order: from the band's lower
// end (from−1 when none is decided) through every probe inside the bracket (undecided ones) to
// its upper end (to+1 when none is decided to miss). The first and the last are where the
// band's ends are found; the search bisects only those. Concurrencies between two undecided
// probes are not probed: under the monotone assumption they are as close to the threshold or
// as short of requests, and measuring them (tried: TestBandCoverageSimulated) cost about 2.5
// probes a search for a band 10–15 % narrower, and nothing against the simulator with a fixed
// max, where every probe above the knee stayed undecided.
func (b bracket) gaps(from, to int) [][2]int {
	lo, hi := b.lo, b.hi
	if lo == 0 {
		lo = from - 1
	}
	if hi == 0 {
		hi = to + 1
	}
	edges := append(append([]int{lo}, b.undecided...), hi)
	out := make([][2]int, 0, len(edges)-1)
	for i := 1; i < len(edges); i++ {
		out = append(out, [2]int{edges[i-1], edges[i]})
	}
	return out
}

// nextProbe is the search's decision, a pure function of what is known: the lower bound
// first (if it is decided to miss there is no knee), then the upper bound (if it is decided to
// meet the knee is at the top), then bisection of the widest gap left until each is no wider
// than step (the gaps at the band's ends: below the lowest undecided probe and above the
// highest), never past its bound. A concurrency an earlier run measured (free) inside
// the gap is taken before a new midpoint, the one nearest the midpoint first, so an edited SLO
// re-uses what exists. Returns 0 when done.
func nextProbe(from, to, step int, ps []judged, free []int) int {
	probed := map[int]bool{}
	for _, p := range ps {
		probed[p.conc] = true
	}
	if !probed[from] {
		return from
	}
	b := knownBracket(ps)
	if b.hi == from {
		return 0 // the lower bound is decided to miss: no knee
	}
	if !probed[to] {
		return to
	}
	if b.hi == 0 && b.lo == to {
		return 0 // the upper bound is decided to meet the SLO
	}
	if measured(ps, free) >= bound(from, to, step, true) {
		return 0 // the bound is spent: the band is what is known
	}
	gaps := b.gaps(from, to)
	gap := widest(step, gaps[0], gaps[len(gaps)-1])
	if gap == ([2]int{}) {
		return 0
	}
	mid := gap[0] + (gap[1]-gap[0])/2
	best := 0
	for _, f := range free {
		if f > gap[0] && f < gap[1] && f >= from && f <= to && !probed[f] && (best == 0 || abs(f-mid) < abs(best-mid)) {
			best = f
		}
	}
	if best != 0 {
		return best
	}
	return mid
}

// widest is the widest of gaps wider than step (the first on a tie), the zero gap when none is.
func widest(step int, gaps ...[2]int) [2]int {
	var out [2]int
	for _, g := range gaps {
		if g[1]-g[0] > step && g[1]-g[0] > out[1]-out[0] {
			out = g
		}
	}
	return out
}

// measured counts the probes the search measured itself (a free probe cost nothing).
func measured(ps []judged, free []int) int {
	n := 0
	for _, p := range ps {
		if !slices.Contains(free, p.conc) {
			n++
		}
	}
	return n
}

// bound is the most points a search of [from, to] measures: the two ends, then at most
// ⌈log2((to − from)/step)⌉ bisections. Free probes (reused) cost nothing and only ever
// narrow the bracket, so they never add a measurement to the bound. When probes may be
// undecided (decided requests), the gaps below and above the undecided ones are bisected
// each, at most ⌈log2⌉ probes apiece: the bound is twice the bisections.
func bound(from, to, step int, undecided bool) int {
	if to <= from {
		return 1
	}
	w := (to - from + step - 1) / step
	if !undecided {
		return 2 + ceilLog2(w)
	}
	return 2 + 2*ceilLog2(w)
}

func ceilLog2(n int) int {
	if n <= 1 {
		return 0
	}
	return bits.Len(uint(n - 1))
}

func abs(n int) int { return int(math.Abs(float64(n))) }

// band is the search's answer: the knee's best estimate, the band it lies in, and whether the
// upper bound itself met the SLO. The band's lower end is the highest concurrency decided to
// meet below the lowest decided to miss (0: none), its upper end one below that miss (to when
// none is decided to miss; 0 when even from is). The estimate reads the same bracket off the
// undecided probes' estimates too, and stays inside the band.
func band(from, to int, ps []judged) (knee, lo, hi int, atTop bool) {
	b := knownBracket(ps)
	lo, hi = b.lo, to
	if b.hi != 0 {
		hi = b.hi - 1
	}
	if hi < from {
		hi = 0
	}
	est := make([]judged, len(ps))
	for i, p := range ps {
		est[i] = judged{conc: p.conc, met: p.met}
		if known, meets := p.decided(); known {
			est[i].met = meets
		}
	}
	e := knownBracket(est)
	knee = min(max(e.lo, lo), hi)
	if knee < from {
		knee = 0
	}
	return knee, lo, hi, knee == to && e.hi == 0 && b.hi == 0
}

func concs(ps []judged) []int {
	out := make([]int, 0, len(ps))
	for _, p := range ps {
		out = append(out, p.conc)
	}
	slices.Sort(out)
	return out
}
