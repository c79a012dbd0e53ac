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

// sloSource is a decision source whose requests are judged against a TTFT target: the target
// is the long-run p-quantile of its TTFT, so its true slo_attainment is p and its true
// goodput_req_s is p × the rate requests start at.
type sloSource struct {
	source
	slo schema.SLO
}

// attainmentAR1 is lognormalAR1's closed loop at concurrency c judged by the TTFT target that
// a fraction p of its requests meet (log TTFT is N(synMu, synSigma²) at every request).
func attainmentAR1(a, p float64, c int) sloSource {
	src := lognormalAR1(a, c)
	target := math.Exp(synMu + synSigma*math.Sqrt2*math.Erfinv(2*p-1))
	step := (math.Exp(synMu+synSigma*synSigma/2) + synDecodeMs) / float64(c) // ms between starts
	src.truth = map[string]float64{"slo_attainment": p, "goodput_req_s": p * 1000 / step}
	src.name += fmt.Sprintf(" p=%g", p)
	return sloSource{source: src, slo: schema.SLO{TTFTMs: &target}}
}

// attainmentFIFO is the FIFO queue's closed loop at concurrency c judged by the TTFT target a
// fraction p of 400,000 requests met: requests in flight together share the queue, so their
// verdicts come in runs.
func attainmentFIFO(p float64, c int) sloSource {
	src := fifo(c)
	long := queuesim.Run(rand.New(rand.NewPCG(uint64(c), 0xf1f0)), c, 1000, 400000, 0.8)
	ttft := make([]float64, len(long))
	for i, x := range long {
		ttft[i] = ms(x.FirstTokenNs - x.StartNs)
	}
	target := quantile(ttft, p)
	good := 0
	for _, x := range ttft {
		if x <= target {
			good++
		}
	}
	window := float64(long[len(long)-1].StartNs-long[0].StartNs) / 1e9
	att := float64(good) / float64(len(ttft))
	src.truth = map[string]float64{"slo_attainment": att, "goodput_req_s": float64(good) / window}
	src.name += fmt.Sprintf(" p=%g", p)
	return sloSource{source: src, slo: schema.SLO{TTFTMs: &target}}
}

// TestDecideWrongVerdictsAttainment is TestDecideWrongVerdicts for the per-request slo's
// metrics: "slo_attainment >= limit" and "goodput_req_s >= limit" with the limit 0.5–10 % off
// the truth on either side (a limit above an attainment of 1 cannot be met and is left out),
// under the look schedule decide uses, on iid and AR(1) 0.7 TTFTs at concurrency 4 and the FIFO
// queue at 8 (runs of misses as long as the requests in flight together), at attainments of 0.9
// and 0.99. A wrong verdict must stay within 5 %. 100 seeds; PERFDAG_LONG=1 runs 1,000
// (docs/statistics.md's table).
func TestDecideWrongVerdictsAttainment(t *testing.T) {
	seeds := 100
	if os.Getenv("PERFDAG_LONG") != "" {
		seeds = 1000
	}
	var sources []sloSource
	for _, p := range []float64{0.9, 0.99} {
		sources = append(sources, attainmentAR1(0, p, 4), attainmentAR1(0.7, p, 4), attainmentFIFO(p, 8))
	}
	for _, src := range sources {
		for _, metric := range []string{"slo_attainment", "goodput_req_s"} {
			t.Run(src.name+"/"+metric, func(t *testing.T) {
				t.Parallel()
				checkWrongVerdictsSLO(t, src, metric, seeds)
			})
		}
	}
}

func checkWrongVerdictsSLO(t *testing.T, src sloSource, metric string, seeds int) {
	truth := src.truth[metric]
	probe, err := NewDecider(schema.AutoCount{Decide: "x"}, metric+" >= 0.5", src.conc, &src.slo)
	if err != nil {
		t.Fatal(err)
	}
	points := make([][]schema.RequestRecord, seeds)
	for s := range seeds {
		points[s] = src.gen(rand.New(rand.NewPCG(uint64(s+1), uint64(src.conc))), probe.Max)
	}
	var rows []string
	var mu sync.Mutex
	for _, d := range simDistances {
		for _, side := range []float64{-1, 1} {
			limit := truth * (1 + side*d)
			if metric == "slo_attainment" && limit > 1 {
				continue
			}
			rule := fmt.Sprintf("%s >= %v", metric, limit)
			wrong, undecided, requests, decided := 0, 0, 0, 0
			for s := range seeds {
				dec := decideOnSLO(t, points[s], rule, src.conc, &src.slo)
				switch {
				case dec.Verdict == schema.VerdictUndecided:
					undecided++
				case (dec.Verdict == schema.VerdictMeets) != (truth >= limit):
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
			where := "truth meets"
			if side > 0 {
				where = "truth misses"
			}
			mu.Lock()
			rows = append(rows, fmt.Sprintf("%-18s %-14s %4.1f %% %-12s wrong %5.1f %%  undecided %5.1f %%  requests/decided %5d",
				src.name, metric, 100*d, where, 100*float64(wrong)/float64(seeds), 100*float64(undecided)/float64(seeds), per))
			mu.Unlock()
			if float64(wrong) > 0.05*float64(seeds) {
				t.Errorf("%s %s at %.1f %% (%s): %d of %d verdicts wrong, want at most 5 %%", src.name, metric, 100*d, where, wrong, seeds)
			}
		}
	}
	slices.Sort(rows)
	t.Logf("%d seeds, truth %.4g, looks at %v\n%s", seeds, truth, probe.Looks(), strings.Join(rows, "\n"))
}

// decideOnSLO is decideOn for a cell with a per-request slo.
func decideOnSLO(t testing.TB, recs []schema.RequestRecord, rule string, c int, slo *schema.SLO) schema.Decision {
	t.Helper()
	d, err := NewDecider(schema.AutoCount{Decide: rule}, rule, c, slo)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range d.looks {
		if d.Enough(recs[:n]) {
			return d.Stop(recs[:n])
		}
	}
	return d.Stop(recs[:d.Max])
}
