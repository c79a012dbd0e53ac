package sweep

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// A rate search is the concurrency search over its grid's positions: against a monotone truth
// (a rate meets iff it is at most the capacity) it ends at the grid's highest rate at or below
// the capacity — the next rate up, at most the resolution above it, misses — within its bound
// of ⌈log2(steps)⌉ + 2 probes, for capacities anywhere in and around the range.
func TestRateSearchWithinResolutionAndBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 3))
	for range 500 {
		from := schema.RoundRate(0.1+rng.Float64()*50, 3)
		to := schema.RoundRate(from*(1+rng.Float64()*200), 4)
		pct := []float64{0.5, 1, 2, 5, 10}[rng.IntN(5)]
		cell := &schema.Cell{ID: "r", Search: &schema.Search{Over: schema.SearchOverRate, SLO: "true", From: from, To: to, Resolution: schema.Resolution{Pct: pct}}}
		a := axisOf(cell)
		capacity := from * math.Exp(rng.Float64()*math.Log(to/from)*1.2-0.1*math.Log(to/from))
		var ps []judged
		for range 1000 {
			x := nextProbe(a.from, a.to, a.step, ps, nil)
			if x == 0 {
				break
			}
			l := a.load(cell, x)
			if a.pos(l) != x {
				t.Fatalf("grid position %d is %s, which reads back as %d", x, l.Key(), a.pos(l))
			}
			ps = append(ps, judged{load: l, conc: x, met: l.Rate <= capacity})
		}
		knee, _, _, atTop := band(a.from, a.to, ps)
		if n := len(ps); n > Bound(cell) || Bound(cell) != 2+ceilLog2(len(a.grid)-1) {
			t.Fatalf("[%v, %v] at %v %%: %d probes, bound %d for %d steps", from, to, pct, n, Bound(cell), len(a.grid)-1)
		}
		k := a.value(knee)
		switch {
		case capacity < from:
			if knee != 0 {
				t.Fatalf("capacity %v below from %v: knee %v", capacity, from, k)
			}
		case capacity >= to:
			if k != to || !atTop {
				t.Fatalf("capacity %v above to %v: knee %v (at top %v)", capacity, to, k, atTop)
			}
		default:
			next := a.value(knee + 1)
			if !(k <= capacity && capacity < next) || next > k*(1+pct/100)*(1+1e-12) {
				t.Fatalf("[%v, %v] at %v %%: capacity %v, knee %v, next %v", from, to, pct, capacity, k, next)
			}
		}
	}
}

// An open-loop probe whose sends fell short of its rate is a decided miss, whatever its
// latencies and its point's verdict: a probe decided to meet the SLO on its numbers at a rate it
// could not send bounds the bracket from above, not below, and says why in its values.
func TestRateShortProbeIsAMiss(t *testing.T) {
	no, short := false, 12.5
	achieved := 35.0
	p := &campaigndir.PointResult{Load: schema.RateAt(40, 4), RequestRate: 40, RequestCount: 100, Status: "ok",
		RateMet: &no, RateShortfallPct: &short, AchievedRate: &achieved, Decision: &schema.Decision{Verdict: schema.VerdictMeets}}
	why := rateShort(p)
	if why != "rate short: sent at 35 of the 40 req/s asked (12.5 % short), counted as a miss" {
		t.Fatalf("rateShort = %q", why)
	}
	j := judged{load: p.Load, conc: 3, met: true, verdict: schema.VerdictMeets, point: p, short: why}
	if known, meets := j.decided(); !known || meets {
		t.Fatalf("a rate-short probe decided to meet reads as known %v meets %v: want a decided miss", known, meets)
	}
	ps := []judged{{conc: 1, met: true}, j, {conc: 5, met: true}}
	if b := knownBracket(ps); b.lo != 1 || b.hi != 3 {
		t.Fatalf("bracket [%d, %d], want the pass at 1 below the rate-short miss at 3", b.lo, b.hi)
	}
	met := true
	if rateShort(&campaigndir.PointResult{RateMet: &met}) != "" || rateShort(&campaigndir.PointResult{}) != "" {
		t.Fatal("a point whose rate was met (or a closed-loop point) is not rate short")
	}
	if !strings.HasSuffix(why, "counted as a miss") {
		t.Fatal(why)
	}
}
