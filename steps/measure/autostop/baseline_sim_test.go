package autostop

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/testkit/queuesim"
)

// ttftSource draws n TTFTs (ms) in start order; truth is the long-run value of each metric.
type ttftSource struct {
	name  string
	conc  int
	draw  func(r *rand.Rand, n int) []float64
	truth map[string]float64
}

func ar1TTFT(a float64, c int) ttftSource {
	src := lognormalAR1(a, c)
	q95 := math.Exp(synMu + synSigma*1.6448536269514722)
	return ttftSource{name: src.name, conc: c, draw: func(r *rand.Rand, n int) []float64 {
		recs := src.gen(r, n)
		xs := make([]float64, n)
		for i, x := range recs {
			xs[i] = ms(x.FirstTokenNs - x.StartNs)
		}
		return xs
	}, truth: map[string]float64{"ttft_p50_ms": 100, "ttft_p95_ms": q95}}
}

// fifoTTFT is the FIFO queue's TTFT series at concurrency c (runs of slow requests as long as
// those sharing the queue), its truth from 400,000 requests.
func fifoTTFT(c int) ttftSource {
	ttfts := func(recs []schema.RequestRecord) []float64 {
		xs := make([]float64, len(recs))
		for i, x := range recs {
			xs[i] = ms(x.FirstTokenNs - x.StartNs)
		}
		return xs
	}
	long := ttfts(queuesim.Run(rand.New(rand.NewPCG(uint64(c), 0xf1f0)), c, 1000, 400000, 0.8))
	return ttftSource{name: fmt.Sprintf("FIFO queue c%d", c), conc: c, draw: func(r *rand.Rand, n int) []float64 {
		return ttfts(queuesim.Run(r, c, 20*c, n, 0.8))
	}, truth: map[string]float64{"ttft_p50_ms": quantile(long, 0.5), "ttft_p95_ms": quantile(long, 0.95)}}
}

// baselineTolerances are the diff's default tolerances of the metrics simulated (percent,
// higher is worse).
var baselineTolerances = map[string]float64{"ttft_p50_ms": 5, "ttft_p95_ms": 10}

// TestDecideBaselineWrongVerdicts is the wrong-verdict rate of decide: baseline around the
// tolerance: each seed records a baseline of 4,000 requests (its value and the 95 % half-width
// of the point's own interval, as a snapshot holds them), then decides a current point whose
// true value is the baseline's truth × (1 + tolerance) × (1 ± d), d 0.5–10 %: just inside the
// tolerance (− d: the truth is inside, the diff should be GREEN) or just beyond it (+ d: RED).
// A wrong verdict ("inside" where the true change is beyond the tolerance, or the reverse) must
// stay within 5 %. 100 seeds; PERFDAG_LONG=1 runs 1,000 (docs/schedule.md's table).
func TestDecideBaselineWrongVerdicts(t *testing.T) {
	seeds := 100
	if os.Getenv("PERFDAG_LONG") != "" {
		seeds = 1000
	}
	for _, src := range []ttftSource{ar1TTFT(0, 4), ar1TTFT(0.7, 4), fifoTTFT(8)} {
		for _, metric := range []string{"ttft_p50_ms", "ttft_p95_ms"} {
			t.Run(src.name+"/"+metric, func(t *testing.T) {
				t.Parallel()
				checkBaselineVerdicts(t, src, metric, seeds)
			})
		}
	}
}

func checkBaselineVerdicts(t *testing.T, src ttftSource, metric string, seeds int) {
	tol := baselineTolerances[metric]
	type base struct{ value, hw float64 }
	bases := make([]base, seeds)
	draws := make([][]float64, seeds)
	max := schema.AutoCount{Decide: schema.DecideBaseline}.MaxFor(src.conc)
	for s := range seeds {
		recs := series(src.draw(rand.New(rand.NewPCG(uint64(s+1), 0xba5e)), 4000), src.conc)
		iv, ok := metrics[metric].interval(recs)
		if !ok {
			t.Fatalf("seed %d: the 4,000-request baseline has no %s interval", s, metric)
		}
		v, _ := metrics[metric].estimate(recs, false)
		bases[s] = base{v.Centre, iv.HalfWidth()}
		draws[s] = src.draw(rand.New(rand.NewPCG(uint64(s+1), uint64(src.conc))), max)
	}
	var rows []string
	var mu sync.Mutex
	for _, d := range simDistances {
		for _, side := range []float64{-1, 1} {
			scale := (1 + tol/100) * (1 + side*d)
			inside := side < 0
			wrong, undecided, requests, decided := 0, 0, 0, 0
			for s := range seeds {
				xs := slices.Clone(draws[s])
				for i := range xs {
					xs[i] *= scale
				}
				ref := &schema.BaselineRef{Name: "sim", Cell: "c", Points: map[string]map[string]schema.BaselineRefValue{
					fmt.Sprint(src.conc): {metric: {Value: bases[s].value, HalfWidth: bases[s].hw, Tolerance: tol, Unit: unitPercent, Direction: higherIsWorse}}}}
				dec := decideBaseline(t, series(xs, src.conc), ref, src.conc)
				switch {
				case dec.Verdict == schema.VerdictUndecided:
					undecided++
				case (dec.Verdict == schema.VerdictMeets) != inside:
					wrong++
				}
				if dec.Verdict != schema.VerdictUndecided {
					decided++
					requests += dec.Requests
				}
			}
			per := 0
			if decided > 0 {
				per = requests / decided
			}
			where := "truth inside"
			if !inside {
				where = "truth beyond"
			}
			mu.Lock()
			rows = append(rows, fmt.Sprintf("%-14s %-12s %4.1f %% %-12s wrong %5.1f %%  undecided %5.1f %%  requests/decided %5d",
				src.name, metric, 100*d, where, 100*float64(wrong)/float64(seeds), 100*float64(undecided)/float64(seeds), per))
			mu.Unlock()
			if float64(wrong) > 0.05*float64(seeds) {
				t.Errorf("%s %s at %.1f %% (%s): %d of %d verdicts wrong, want at most 5 %%", src.name, metric, 100*d, where, wrong, seeds)
			}
		}
	}
	slices.Sort(rows)
	t.Logf("%d seeds, tolerance %g %%, truth %.4g\n%s", seeds, tol, src.truth[metric], strings.Join(rows, "\n"))
}

// decideBaseline runs a decide: baseline point over recs as the load generator looks.
func decideBaseline(t testing.TB, recs []schema.RequestRecord, ref *schema.BaselineRef, c int) schema.Decision {
	t.Helper()
	d, err := NewBaselineDecider(schema.AutoCount{Decide: schema.DecideBaseline}, c, ref, nil)
	if err != nil || d == nil {
		t.Fatalf("decider %v %v", d, err)
	}
	for _, n := range d.looks {
		if d.Enough(recs[:n]) {
			return d.Stop(recs[:n])
		}
	}
	return d.Stop(recs[:d.Max])
}
