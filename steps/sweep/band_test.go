package sweep

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// verdicts is a server as a decided search sees it: c's verdict, and its estimate when it is
// undecided (true: the SLO held on the point's estimates).
type verdicts func(c int) (verdict string, estimate bool)

// monotoneWith is the truth "meets up to knee", with the given concurrencies undecided (their
// estimates following the truth).
func monotoneWith(knee int, undecided ...int) verdicts {
	return func(c int) (string, bool) {
		if slices.Contains(undecided, c) {
			return schema.VerdictUndecided, c <= knee
		}
		if c <= knee {
			return schema.VerdictMeets, true
		}
		return schema.VerdictMisses, false
	}
}

// searchDecided drives the search against v and returns its probes in order and its answer.
func searchDecided(from, to, step int, v verdicts) (probes []int, knee, lo, hi int, atTop bool) {
	var ps []judged
	for range 1000 {
		c := nextProbe(from, to, step, ps, nil)
		if c == 0 {
			break
		}
		verdict, est := v(c)
		ps = append(ps, judged{conc: c, met: est, verdict: verdict})
		probes = append(probes, c)
	}
	knee, lo, hi, atTop = band(from, to, ps)
	return probes, knee, lo, hi, atTop
}

func TestKneeBand(t *testing.T) {
	cases := []struct {
		name             string
		v                verdicts
		knee, lo, hi     int
		atTop            bool
		probes           []int // the probes, in order; nil: not checked
		maxProbes        int
		undecidedInProbe []int
	}{
		// every probe decided: the exact knee, a band of width zero, the bisection's probes
		{name: "all decided", v: monotoneWith(31), knee: 31, lo: 31, hi: 31, probes: []int{1, 64, 32, 16, 24, 28, 30, 31}},
		{name: "all decided, none meets", v: monotoneWith(0), knee: 0, lo: 0, hi: 0, probes: []int{1}},
		{name: "all decided, at the top", v: monotoneWith(64), knee: 64, lo: 64, hi: 64, atTop: true, probes: []int{1, 64}},
		// the first concurrency above the knee is undecided: the band is [knee, knee+1], found by
		// bisecting below it and above it
		{name: "undecided at the edge", v: monotoneWith(31, 32), knee: 31, lo: 31, hi: 32, probes: []int{1, 64, 32, 48, 16, 24, 40, 28, 36, 30, 34, 31, 33}},
		// three undecided around the knee: the ends are found below c30 and above c32; c31
		// between two undecided probes is not measured, so the estimate is c30
		{name: "undecided in the middle", v: monotoneWith(31, 30, 31, 32), knee: 30, probes: []int{1, 64, 32, 48, 16, 24, 40, 28, 36, 30, 34, 29, 33}, lo: 29, hi: 32, maxProbes: bound(1, 64, 1, true)},
		// a wide undecided region (a noisy server): the band is its extent
		{name: "undecided region", v: monotoneWith(31, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36), knee: 28, lo: 25, hi: 36, maxProbes: bound(1, 64, 1, true)},
		// the lower bound itself undecided and everything above it missing: the knee is c1 or
		// none, so the band's lower end is none
		{name: "undecided lower bound", v: monotoneWith(1, 1), knee: 1, lo: 0, hi: 1, probes: []int{1, 64, 32, 16, 8, 4, 2}},
		{name: "undecided lower bound, estimate misses", v: monotoneWith(0, 1), knee: 0, lo: 0, hi: 1, maxProbes: bound(1, 64, 1, true)},
		// the upper bound undecided and everything below meeting: c63 or c64, and maybe beyond
		{name: "undecided upper bound", v: monotoneWith(64, 64), knee: 64, lo: 63, hi: 64, atTop: true, maxProbes: bound(1, 64, 1, true)},
		// nothing decided at all: the band is the whole range, from "none" to to
		{name: "all undecided", v: func(int) (string, bool) { return schema.VerdictUndecided, true }, knee: 64, lo: 0, hi: 64, atTop: true, probes: []int{1, 64}},
		// undecided for want of requests at high concurrency (a fixed max): c24 between the
		// undecided c16 and c32 would have decided a miss, but is not probed: the band's top is
		// one below the lowest decided miss, c33 (raise max to narrow it)
		{name: "undecided far above the knee", v: monotoneWith(12, 13, 14, 16, 32), knee: 12, lo: 12, hi: 32,
			probes: []int{1, 64, 32, 48, 16, 40, 8, 12, 36, 14, 34, 13, 33}},
		// a pass decided above an undecided probe that misses on its estimate contradicts it:
		// the lower end does not rest on it (c30 undecided, estimate miss; c31 decided to meet)
		{name: "pass above an estimated miss", v: func(c int) (string, bool) {
			switch {
			case c == 30:
				return schema.VerdictUndecided, false
			case c <= 31:
				return schema.VerdictMeets, true
			}
			return schema.VerdictMisses, false
		}, knee: 29, lo: 29, hi: 31, probes: []int{1, 64, 32, 16, 24, 28, 30, 29, 31}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			probes, knee, lo, hi, atTop := searchDecided(1, 64, 1, tc.v)
			if knee != tc.knee || lo != tc.lo || hi != tc.hi || atTop != tc.atTop {
				t.Fatalf("knee %d band [%d, %d] at top %v, want %d [%d, %d] %v (probes %v)", knee, lo, hi, atTop, tc.knee, tc.lo, tc.hi, tc.atTop, probes)
			}
			if tc.probes != nil && !slices.Equal(probes, tc.probes) {
				t.Errorf("probes %v, want %v", probes, tc.probes)
			}
			if tc.maxProbes > 0 && len(probes) > tc.maxProbes {
				t.Errorf("%d probes > %d: %v", len(probes), tc.maxProbes, probes)
			}
			seen := map[int]bool{}
			for _, c := range probes {
				if seen[c] {
					t.Fatalf("c%d probed twice: %v", c, probes)
				}
				seen[c] = true
			}
		})
	}
}

// Whatever the verdicts — monotone or not, undecided anywhere — a search probes no
// concurrency twice, stays within its bound, and its band brackets its estimate. Exhaustive
// over every assignment of three verdicts to the concurrencies of small ranges, random beyond.
func TestBandSearchWithinBoundAnyVerdicts(t *testing.T) {
	vs := []string{schema.VerdictMeets, schema.VerdictMisses, schema.VerdictUndecided}
	check := func(from, to int, assign func(c int) string) {
		v := func(c int) (string, bool) { return assign(c), c%2 == 0 }
		probes, knee, lo, hi, _ := searchDecided(from, to, 1, v)
		if len(probes) > bound(from, to, 1, true) {
			t.Fatalf("[%d, %d]: %d probes > bound %d: %v", from, to, len(probes), bound(from, to, 1, true), probes)
		}
		if slices.Contains(probes, 0) || len(slices.Compact(slices.Sorted(slices.Values(probes)))) != len(probes) {
			t.Fatalf("[%d, %d]: a concurrency probed twice: %v", from, to, probes)
		}
		if lo > hi || (knee != 0 && (knee < lo || knee > hi)) || (hi != 0 && (hi < from || hi > to)) {
			t.Fatalf("[%d, %d]: knee %d outside band [%d, %d] (probes %v)", from, to, knee, lo, hi, probes)
		}
	}
	for to := 1; to <= 9; to++ {
		n := to
		total := int(math.Pow(3, float64(n)))
		for code := range total {
			check(1, to, func(c int) string {
				x := code
				for range c - 1 {
					x /= 3
				}
				return vs[x%3]
			})
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 3000 {
		from := 1 + rng.IntN(10)
		to := from + rng.IntN(500)
		assign := map[int]string{}
		check(from, to, func(c int) string {
			if _, ok := assign[c]; !ok {
				assign[c] = vs[rng.IntN(3)]
			}
			return assign[c]
		})
	}
}

// Under the monotone assumption, with verdicts whose wrong-side error is at most 2.5 % per
// side (a one-look decision at z = 1.96 on a normal estimate), the band contains the true knee
// in at least 95 % of seeded searches, at every width of the noise around the threshold (in
// concurrencies the estimate's noise spans), and when the noise grows with concurrency (a
// fixed max spreads fewer turns over a higher concurrency). The counts are in docs/search.md.
func TestBandCoverageSimulated(t *testing.T) {
	const runs = 1000
	for _, tc := range []struct {
		name   string
		spread func(c int) float64
	}{
		{"±0.25", func(int) float64 { return 0.25 }},
		{"±1", func(int) float64 { return 1 }},
		{"±3", func(int) float64 { return 3 }},
		{"±10", func(int) float64 { return 10 }},
		{"±c/8 (growing)", func(c int) float64 { return float64(c) / 8 }},
	} {
		rng := rand.New(rand.NewPCG(uint64(len(tc.name)*100+int(tc.spread(8)*100)), 7))
		covered, width, probes := 0, 0, 0
		for range runs {
			knee := 5 + rng.IntN(55)
			// the metric rises one unit per concurrency and crosses the threshold just above the
			// knee (meets iff c ≤ knee); the estimate's standard error is spread(c) units
			thr := float64(knee) + 0.5
			v := func(c int) (string, bool) {
				sd := tc.spread(c)
				est := float64(c) + sd*rng.NormFloat64()
				switch {
				case est+1.96*sd <= thr:
					return schema.VerdictMeets, true
				case est-1.96*sd > thr:
					return schema.VerdictMisses, false
				}
				return schema.VerdictUndecided, est <= thr
			}
			ps, _, lo, hi, _ := searchDecided(1, 64, 1, v)
			probes += len(ps)
			width += hi - lo
			if lo <= knee && knee <= hi {
				covered++
			}
		}
		t.Logf("noise %s concurrencies: band covers the knee in %d/%d searches, mean width %.1f, mean probes %.1f",
			tc.name, covered, runs, float64(width)/runs, float64(probes)/runs)
		if covered < 950 {
			t.Errorf("noise %s: band covered the knee in %d/%d searches, want ≥ 950", tc.name, covered, runs)
		}
	}
}

// decidedProbe is the group at conc whose point decided verdict on "ttft_p50_ms < 100", with
// ttft as its estimate.
func decidedProbe(conc int, ttft float64, verdict string) engine.Probe {
	p := &campaigndir.PointResult{Cell: "k", Concurrency: conc, NumPrompts: 40, RequestCount: 40, Status: "ok", TTFTP50Ms: &ttft,
		Decision: &schema.Decision{Rule: "ttft_p50_ms < 100", Verdict: verdict, Alpha: 0.05}}
	u := engine.Upstream{Node: fmt.Sprintf("run-shape[k/c%d]", conc), Step: "run-shape", Kind: "run-shape", Cell: "k", Load: schema.Conc(conc), Result: p}
	return engine.Probe{Load: schema.Conc(conc), Upstream: []engine.Upstream{u}}
}

// A searched cell whose probes carry decisions writes its band to sweep_probes.json and its
// summary line; the undecided probes are named, and the search bisected past them.
func TestSweepWritesKneeBand(t *testing.T) {
	task := searchTask(t)
	task.Cell.Search.SLO = "ttft_p50_ms < 100"
	task.Cell.RequestsPerPoint = schema.Count{Auto: &schema.AutoCount{Decide: schema.DecideSLO}}
	fo, err := start(task)
	if err != nil {
		t.Fatal(err)
	}
	truth := map[int]engine.Probe{}
	for c := 1; c <= 16; c++ {
		switch {
		case c <= 8:
			truth[c] = decidedProbe(c, 50, schema.VerdictMeets)
		case c == 9 || c == 10:
			truth[c] = decidedProbe(c, 99+float64(c-9)*2, schema.VerdictUndecided) // 99 meets on its estimate, 101 not
		default:
			truth[c] = decidedProbe(c, 150, schema.VerdictMisses)
		}
	}
	var made []engine.Probe
	for range 20 {
		next, err := fo.Next(made, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(next) == 0 {
			break
		}
		made = append(made, truth[next[0].Concurrency])
	}
	for _, p := range made {
		task.Upstream = append(task.Upstream, p.Upstream...)
	}
	res, err := run(t.Context(), task)
	if err != nil {
		t.Fatal(err)
	}
	r := readSweepFile(t, task.Dir)
	if r.Knee != 9 || r.KneeLo != 8 || r.KneeHi != 10 || r.BandLevel != 0.95 {
		t.Fatalf("knee %d band [%d, %d] level %v, want 9 [8, 10] at 0.95 (probes %+v)", r.Knee, r.KneeLo, r.KneeHi, r.BandLevel, r.Probes)
	}
	if got := r.BandText(); got != "c9 (c8–c10 at 95 %)" {
		t.Errorf("band text %q", got)
	}
	for _, want := range []string{"knee c9 (c8–c10 at 95 %) for ttft_p50_ms < 100 (7 probes of ≤ 10", "undecided: c9, c10"} {
		if !strings.Contains(res.Summary, want) {
			t.Errorf("summary %q lacks %q", res.Summary, want)
		}
	}
	for _, p := range r.Probes {
		if want := truth[p.Concurrency].Upstream[0].Result.(*campaigndir.PointResult).Decision.Verdict; p.Verdict != want {
			t.Errorf("c%d verdict %q, want %q", p.Concurrency, p.Verdict, want)
		}
	}
}

// A file written before bands (no knee_lo, knee_hi) reads as the exact knee.
func TestKneeBandOldFile(t *testing.T) {
	r := schema.SweepResult{Mode: schema.SweepSearch, From: 1, To: 64, Knee: 31}
	if lo, hi := r.KneeBand(); lo != 31 || hi != 31 || r.BandText() != "c31" {
		t.Fatalf("old file: band [%d, %d] %q, want [31, 31] c31", lo, hi, r.BandText())
	}
}
