package baseline

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/stats"
)

// noisyServer is a test double of one server measured twice: a closed loop of concurrency
// slots, each request's TTFT and its per-token ITL drawn log-normally around their medians (the
// run-to-run jitter a shared machine adds), every answer outputTokens long. slow multiplies
// both, a server that got slower. The true medians are known: ttftMs×slow and tpotMs×slow.
type noisyServer struct {
	ttftMs, tpotMs, sigmaTTFT, sigmaITL, slow float64
	inputTokens, outputTokens                 int
}

// run records requests profiling requests at concurrency c with seed, as a session would.
func (s noisyServer) run(seed uint64, c, requests int) []schema.RequestRecord {
	rng := rand.New(rand.NewPCG(seed, uint64(c)))
	free := make([]int64, c) // when each slot is next free, ns
	for i := range free {
		free[i] = int64(time.Second)
	}
	recs := make([]schema.RequestRecord, 0, requests)
	for i := range requests {
		slot := slices.Index(free, slices.Min(free))
		start := free[slot]
		ttft := s.ttftMs * s.slow * math.Exp(s.sigmaTTFT*rng.NormFloat64())
		itl := s.tpotMs * s.slow * math.Exp(s.sigmaITL*rng.NormFloat64())
		first := start + int64(ttft*1e6)
		last := first + int64(itl*1e6*float64(s.outputTokens-1))
		in, out := s.inputTokens, s.outputTokens
		recs = append(recs, schema.RequestRecord{Index: i, Phase: stats.PhaseProfiling, StartNs: start,
			FirstTokenNs: first, FirstOutputNs: first, LastContentNs: last, EndNs: last + 100_000,
			InputTokens: in, OutputTokens: out, RequestedOut: out, UsagePrompt: &in, UsageComplete: &out,
			FinishReason: "length", Status: 200})
		free[slot] = last + 200_000
	}
	slices.SortFunc(recs, func(a, b schema.RequestRecord) int { return int(a.StartNs - b.StartNs) })
	return recs
}

// perfPoint is the perfbench point of records, through stats.Compute (the campaign's path: its
// 95 % intervals too) and the snapshot's field choices (p50s, mean of 1/ITL, perfBenchIntervals).
func perfPoint(recs []schema.RequestRecord, c int) schema.PerfBenchPoint {
	p := stats.Compute(recs, stats.Options{Concurrency: c, TokenBasis: "server"})
	v := func(x float64) *float64 { return &x }
	return schema.PerfBenchPoint{
		ThroughputToksPerS: v(p.OutputTokenThroughput), TTFTP50Ms: v(p.TTFT.P50), TTFTP95Ms: v(p.TTFT.P95),
		TTFTP99Ms: v(p.TTFT.P99), ITLP50Ms: v(p.ITL.P50), TPSPerUser: v(p.TPSUser.Avg),
		RequestLatencyP50Ms: v(p.RequestLatency.P50), Errors: p.ErrorCount, Intervals: perfBenchIntervals(p.Intervals),
	}
}

// snapshotOf measures the server once at each concurrency and returns the perfbench document,
// with intervals or without (a legacy snapshot).
func snapshotOf(s noisyServer, seed uint64, concs []int, requests int, intervals bool) *schema.PerfBench {
	doc := &schema.PerfBench{Schema: schema.SchemaPerfBench, ModelPath: "org/sim", Metrics: map[string]schema.PerfBenchPoint{}}
	for _, c := range concs {
		p := perfPoint(s.run(seed, c, requests), c)
		if !intervals {
			p.Intervals = nil
		}
		doc.Metrics[strconv.Itoa(c)] = p
	}
	return doc
}

// stripIntervals is a copy of doc as a snapshot recorded before intervals existed.
func stripIntervals(doc *schema.PerfBench) *schema.PerfBench {
	out := *doc
	out.Metrics = map[string]schema.PerfBenchPoint{}
	for k, p := range doc.Metrics {
		p.Intervals = nil
		out.Metrics[k] = p
	}
	return &out
}

// redRows counts a diff's RED rows by metric.
func redRows(d *schema.BaselineDiff) map[string]int {
	out := map[string]int{}
	for _, r := range d.Rows {
		if r.Verdict == Red {
			out[r.Metric]++
		}
	}
	return out
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// flakyServer is the same-server case at the smallest size steps/measure/interval bounds a
// median at (200 requests; p95 needs 2,000, p99 10,000): TTFT jitter of σ = 0.6 and ITL jitter
// of σ = 0.25 (log scale) per request, 200 requests at concurrencies 1 and 4 — medians move
// several percent between two runs, as much as the tolerances.
var (
	flakyServer = noisyServer{ttftMs: 40, tpotMs: 8, sigmaTTFT: 0.8, sigmaITL: 0.35, slow: 1, inputTokens: 64, outputTokens: 64}
	flakyConcs  = []int{1, 4}
)

const (
	flakyRequests = 400
	flakyRepeats  = 20
)

// TestFlakySameServer is the flaky case: two runs of the same server (different seeds, same
// configuration), 20 times. Judged on tolerance alone the pair is RED again and again; with
// both runs' intervals (stats.Compute's, as run-shape records them) no row that has them is
// RED. The tail rows (p95, p99) carry no interval at 200 requests and stay on tolerance alone;
// their REDs are counted apart. The intervals are checked to cover the true TTFT and ITL
// medians, so the rule is not passing on intervals that are merely wide.
func TestFlakySameServer(t *testing.T) {
	oldRed, newRed, tailRed := map[string]int{}, map[string]int{}, map[string]int{}
	oldRedRepeats, newRedRepeats, notes := 0, 0, 0
	covered, total := 0, 0
	for r := range flakyRepeats {
		base := snapshotOf(flakyServer, uint64(1000+2*r), flakyConcs, flakyRequests, true)
		cur := snapshotOf(flakyServer, uint64(1001+2*r), flakyConcs, flakyRequests, true)
		for _, doc := range []*schema.PerfBench{base, cur} {
			for _, p := range doc.Metrics {
				for metric, truth := range map[string]float64{"ttft_p50_ms": flakyServer.ttftMs, "itl_p50_ms": flakyServer.tpotMs} {
					if iv, ok := p.Intervals[metric]; ok {
						total++
						covered += btoi(iv.Contains(truth))
					}
				}
			}
		}
		dOld, err := Diff(stripIntervals(base), stripIntervals(cur), nil)
		if err != nil {
			t.Fatal(err)
		}
		dNew, err := Diff(base, cur, nil)
		if err != nil {
			t.Fatal(err)
		}
		oldAny, newAny := false, false
		for i, row := range dNew.Rows {
			switch {
			case row.Change == nil && row.Verdict == Red:
				tailRed[row.Metric]++
			case row.Change == nil:
			case row.Verdict == Red:
				newRed[row.Metric]++
				newAny = true
			}
			if row.Change != nil && dOld.Rows[i].Verdict == Red {
				oldRed[row.Metric]++
				oldAny = true
			}
		}
		oldRedRepeats += btoi(oldAny)
		newRedRepeats += btoi(newAny)
		notes += dNew.WithinNoise
	}
	t.Logf("same server, %d repeats × 2 runs, c%v, %d requests, rows with intervals: tolerance only %d RED rows in %d repeats %v; tolerance and interval %d RED rows in %d repeats %v, %d NOTE rows",
		flakyRepeats, flakyConcs, flakyRequests, sum(oldRed), oldRedRepeats, oldRed, sum(newRed), newRedRepeats, newRed, notes)
	t.Logf("tail rows without an interval (tolerance only either way): %d RED %v; interval coverage of the true medians %d/%d",
		sum(tailRed), tailRed, covered, total)
	if sum(newRed) != 0 {
		t.Errorf("with intervals: %d RED rows on the same server (%v), want 0", sum(newRed), newRed)
	}
	if oldRedRepeats == 0 {
		t.Errorf("tolerance only: no repeat RED: the case is not flaky, it proves nothing")
	}
	if float64(covered) < 0.9*float64(total) {
		t.Errorf("intervals cover the true medians %d of %d times, want ≥ 90 %%", covered, total)
	}
}

// TestRealRegression is the same server made 20 % slower (TTFT and ITL × 1.2), 20 times:
// every diff is RED, at every concurrency, on rows whose change interval lies wholly beyond the
// tolerance. Which rows prove it varies with the noise (TTFT p50: a 20 % move against a 5 %
// tolerance with about ±15 % of noise on the change); the detections per row are logged.
func TestRealRegression(t *testing.T) {
	slow := flakyServer
	slow.slow = 1.2
	detected := map[string]int{}
	for r := range flakyRepeats {
		base := snapshotOf(flakyServer, uint64(3000+2*r), flakyConcs, flakyRequests, true)
		cur := snapshotOf(slow, uint64(3001+2*r), flakyConcs, flakyRequests, true)
		d, err := Diff(base, cur, nil)
		if err != nil {
			t.Fatal(err)
		}
		if d.Verdict != Red {
			t.Errorf("repeat %d: verdict %s, want RED for a 20 %% slower server", r, d.Verdict)
		}
		redAt := map[int]bool{}
		for _, row := range d.Rows {
			if row.Verdict == Red && row.Change != nil {
				detected[row.Metric+"@c"+strconv.Itoa(row.Concurrency)]++
				redAt[row.Concurrency] = true
			}
		}
		for _, c := range flakyConcs {
			if !redAt[c] {
				t.Errorf("repeat %d: no row with intervals RED at concurrency %d", r, c)
			}
		}
	}
	t.Logf("20 %% slower server, %d repeats: RED rows with intervals by metric@concurrency %v", flakyRepeats, detected)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
