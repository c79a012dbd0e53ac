package main

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/perfdag/perfdag/engine/events"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/testkit"
)

// rateKneeCampaign searches request rate on the deterministic simulator's open loop (constant
// arrivals): max_batch %d slots, each held for a request's latency — TTFT 20 + 8 × 0.1 ms
// prefill, then 11 more tokens at 10 + 0.05 × (slots − 1) ms — so the server's service rate is
// slots / latency requests per second. Below it no request waits and TTFT is 20.8 ms; above it
// the queue grows with every arrival and so does the TTFT from the schedule.
const rateKneeCampaign = `version: 1
campaign: rate-knee
endpoints:
  main:
    url: sim://
    model: perfdag/sim
    sim: {deterministic: true, ttft_ms: 20, prefill_ms_per_1k: 8, tpot_ms: 10, batch_tpot_ms: 0.05, max_batch: %d, seed: 3}
defaults: {engine: vllm, hardware: H100, quant: FP8, tensor_parallel: 1}
cells:
  - id: knee
    workload: {shape: custom, input_tokens: 100, output_tokens: 12, arrival: constant}
    requests_per_point: %s
    %s
    search: {over: rate, slo: "ttft_p50_ms <= 21", from: %s, to: %s, resolution: %s}
publish: {lake: "sqlite://lake.db", strict: false}
`

// serviceRate is the simulated server's capacity in requests per second: its slots over a
// request's latency at a full batch.
func serviceRate(slots int) float64 {
	latencyMs := 20 + 0.8 + 11*(10+0.05*float64(slots-1))
	return float64(slots) / (latencyMs / 1000)
}

// rateBound is ⌈log2(steps)⌉ + 2 for the grid's steps between from and to.
func rateBound(grid []float64) int { return bits.Len(uint(len(grid)-2)) + 2 }

// Issue 29 item 3: a search over request rate against a server with a known service rate finds
// the knee within the resolution — the knee meets, the next rate of the grid (at most the
// resolution above it) misses, and the service rate lies between them — in at most
// ⌈log2(range / resolution)⌉ + 2 probes (range / resolution: the grid's steps, ln(to/from) /
// ln(1 + resolution) rounded up), every probe an ordinary point with its atlas row, and plan
// shows that bound before the run.
func TestRateSearchFindsServiceRate(t *testing.T) {
	for _, c := range []struct {
		slots    int
		from, to string
		res      string
	}{{4, "2", "200", "2%"}, {7, "1", "500", "2%"}, {16, "10", "400", "5%"}, {2, "0.5", "100", "1%"}} {
		t.Run(fmt.Sprintf("slots%d", c.slots), func(t *testing.T) {
			t.Parallel()
			mu := serviceRate(c.slots)
			from, _ := strconv.ParseFloat(c.from, 64)
			to, _ := strconv.ParseFloat(c.to, 64)
			pct, _ := strconv.ParseFloat(strings.TrimSuffix(c.res, "%"), 64)
			s := schema.Search{Over: schema.SearchOverRate, From: from, To: to, Resolution: schema.Resolution{Pct: pct}}
			grid := s.RateGrid()
			steps := math.Ceil(math.Log(to/from) / math.Log(1+pct/100))
			limit := rateBound(grid)
			if formula := bits.Len(uint(steps-1)) + 2; limit != formula {
				t.Fatalf("the grid's %d steps give a bound of %d, ⌈log2(%v)⌉ + 2 = %d", len(grid)-1, limit, steps, formula)
			}
			for _, g := range grid {
				if math.Abs(g/mu-1) < 0.002 {
					t.Fatalf("grid rate %v lies within 0.2 %% of the service rate %.3f: the campaign no longer tests what it says", g, mu)
				}
			}
			dir := t.TempDir()
			path := filepath.Join(dir, "c.yaml")
			src := fmt.Sprintf(rateKneeCampaign, c.slots, "200", "", c.from, c.to, c.res)
			if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			plan, err := perfdagChild("plan", path).CombinedOutput()
			if err != nil || !strings.Contains(string(plan), fmt.Sprintf("expands at run time: ≤ %d probes", limit)) {
				t.Fatalf("plan (%v) does not show the bound of %d probes:\n%s", err, limit, plan)
			}
			out := filepath.Join(dir, "out")
			if b, err := perfdagChild("run", path, "--out", out).CombinedOutput(); err != nil {
				t.Fatalf("run: %v\n%s", err, b)
			}
			r := readSweep(t, out)
			i := slices.Index(grid, r.KneeRate)
			switch {
			case r.Over != schema.SearchOverRate || i < 0 || i+1 >= len(grid):
				t.Fatalf("knee %v req/s (over %q) is not a grid rate below the top; probes %v", r.KneeRate, r.Over, probeKeys(r))
			case !(r.KneeRate <= mu && mu < grid[i+1]) || grid[i+1] > r.KneeRate*(1+pct/100)*(1+1e-9):
				t.Errorf("knee %v req/s, next grid rate %v: want the service rate %.3f between them, at most %s apart", r.KneeRate, grid[i+1], mu, c.res)
			case r.KneeRateLo != r.KneeRate || r.KneeRateHi != r.KneeRate || r.KneeAtTop || r.Knee != 0:
				t.Errorf("band %v–%v (knee %v, at top %v, concurrency knee %d): want exactly the knee", r.KneeRateLo, r.KneeRateHi, r.KneeRate, r.KneeAtTop, r.Knee)
			}
			if len(r.Probes) > limit || r.Bound != limit {
				t.Errorf("%d probes, bound %d: want at most %d", len(r.Probes), r.Bound, limit)
			}
			rows := map[schema.Load]schema.AtlasRow{}
			for _, row := range atlasRows(t, out) {
				rows[row.Load] = row
			}
			for _, p := range r.Probes {
				l := p.PointLoad()
				if !l.IsRate() || l.Cap != 0 || slices.Index(grid, l.Rate) < 0 {
					t.Errorf("probe %s is not an uncapped rate of the grid", l.Key())
				}
				if p.Met != (l.Rate <= mu) || p.RateShort {
					t.Errorf("probe %s met %v (rate short %v), the service rate %.3f says %v (%s)", l.Key(), p.Met, p.RateShort, mu, l.Rate <= mu, p.Values)
				}
				if row, ok := rows[l]; !ok || row.RequestRate != l.Rate || row.Concurrency != 0 {
					t.Errorf("probe %s: atlas row %+v", l.Key(), row.Load)
				}
			}
			if len(rows) != len(r.Probes) {
				t.Errorf("%d atlas rows for %d probes", len(rows), len(r.Probes))
			}
			t.Logf("service rate %.3f req/s: knee %v (next %v) in %d probes of ≤ %d: %v", mu, r.KneeRate, grid[i+1], len(r.Probes), limit, probeKeys(r))
		})
	}
}

// Issue 29 item 3: an open-loop probe whose sends fell short of its rate never meets the SLO.
// With max_in_flight at the server's slots the client holds sends back instead of the server
// queueing them, so the TTFT from the send stays 20.8 ms at any rate and the SLO on it holds
// everywhere; the search still finds a knee near the service rate, because the probes whose
// achieved rate fell more than 5 % short are misses — sweep_probes.json marks them rate_short
// with their achieved rate, says so in their values and on the node's line, and their atlas
// rows carry the rate_short flag.
func TestRateSearchRateShortIsAMiss(t *testing.T) {
	const slots = 4
	mu := serviceRate(slots)
	dir := t.TempDir()
	path := filepath.Join(dir, "c.yaml")
	src := fmt.Sprintf(rateKneeCampaign, slots, "200", fmt.Sprintf("max_in_flight: %d", slots), "2", "200", "2%")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	b, err := perfdagChild("run", path, "--out", out).CombinedOutput()
	if err != nil {
		t.Fatalf("run: %v\n%s", err, b)
	}
	r := readSweep(t, out)
	// the achieved rate of a capped point above mu is about mu (its first sends go on time):
	// short by more than 5 % from mu / 0.95 up
	if !(r.KneeRate > 0.95*mu && r.KneeRate < mu/0.95*1.02) || r.KneeAtTop || r.MaxInFlight != slots {
		t.Fatalf("knee %v req/s (at top %v, cap %d): want it within 5 %% (+ the resolution) of the service rate %.3f; probes %v",
			r.KneeRate, r.KneeAtTop, r.MaxInFlight, mu, probeKeys(r))
	}
	flags := map[schema.Load][]string{}
	for _, row := range atlasRows(t, out) {
		flags[row.Load] = row.Flags
	}
	short := 0
	for _, p := range r.Probes {
		l := p.PointLoad()
		if l.Cap != slots {
			t.Errorf("probe %s: want the cell's cap %d", l.Key(), slots)
		}
		if !strings.HasPrefix(p.Values, "ttft_p50_ms = 20.8") && !p.RateShort {
			t.Errorf("probe %s: values %q, want the TTFT from the send at 20.8 ms", l.Key(), p.Values)
		}
		if p.RateShort != slices.Contains(flags[l], schema.FlagRateShort) {
			t.Errorf("probe %s: rate_short %v, atlas flags %v", l.Key(), p.RateShort, flags[l])
		}
		if !p.RateShort {
			continue
		}
		short++
		if p.Met || p.AchievedRate == nil || *p.AchievedRate > 0.95*l.Rate || l.Rate < mu ||
			!regexp.MustCompile(`^rate short: sent at [0-9.]+ of the [0-9.]+ req/s asked \([0-9.]+ % short\), counted as a miss; ttft_p50_ms = 20\.8$`).MatchString(p.Values) {
			t.Errorf("rate-short probe %s: met %v, achieved %v, values %q", l.Key(), p.Met, p.AchievedRate, p.Values)
		}
	}
	if short == 0 || !strings.Contains(string(b), "rate short, counted as misses: r") {
		t.Errorf("%d rate-short probes; the run said:\n%s", short, b)
	}
	t.Logf("service rate %.3f req/s: knee %v in %d probes (%d rate short): %v", mu, r.KneeRate, len(r.Probes), short, probeKeys(r))
}

// probeKeys are a sweep's probes by key, in the order they were made.
func probeKeys(r schema.SweepResult) []string {
	var out []string
	for _, p := range r.Probes {
		out = append(out, p.PointLoad().Key())
	}
	return out
}

// Issue 29 item 3: a rate search killed (SIGKILL) at random moments — after a node's end,
// as a measurement starts, in the middle of one — is brought to its end by ONE `perfdag
// resume`: exit 0, the same probes and knee, and status, sweep_probes.json, every file under
// cells/, the atlas, the TPM summaries, the report's text and the lake rows equal an
// uninterrupted run's (TestSweepInterruptedResumesAtOnce's comparison). 16 of the run's
// SIGKILL moments, drawn with a fixed seed from every node end and every measurement's start
// and middle.
func TestRateSearchKilledResumesAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("16 killed runs and their resumes")
	}
	pdftotext := testkit.NeedTool(t, "pdftotext")
	// service rate 30.2 req/s; the 5 % grid of 10..60: r10, r60, then the bisection to the knee r29.019 (r30.459 misses)
	src := fmt.Sprintf(rateKneeCampaign, 4, "2x", "", "10", "60", "5%")
	probes := []string{"r10", "r60", "r23.909", "r36.969", "r29.019", "r31.97", "r30.459"}
	sweepInterrupts(t, pdftotext, src, probes, func(all []stopAt) []stopAt {
		var kills []stopAt
		for _, s := range all {
			if s.sig == syscall.SIGKILL {
				kills = append(kills, s)
			}
			if s.sig == syscall.SIGINT && s.typ == events.Progress { // the middle of a measurement
				s.sig = syscall.SIGKILL
				kills = append(kills, s)
			}
		}
		rng := rand.New(rand.NewPCG(29, 3))
		rng.Shuffle(len(kills), func(i, j int) { kills[i], kills[j] = kills[j], kills[i] })
		return kills[:min(16, len(kills))]
	})
}

// Issue 29 item 3 with issue 28's decision rule: a rate search whose probes measure until
// their SLO verdict is known (requests_per_point {auto: {decide: slo}}) finds the same knee as
// with a fixed count: every probe at or below the service rate decides meets at its first
// looks (no variance there), the ones just above it decide misses as their queue grows, and
// the band is the knee alone; the looks are whole seconds of arrivals of an uncapped rate (its
// count base, the rate rounded up), not single requests.
func TestRateSearchDecides(t *testing.T) {
	const slots = 4
	mu := serviceRate(slots)
	dir := t.TempDir()
	path := filepath.Join(dir, "c.yaml")
	src := fmt.Sprintf(rateKneeCampaign, slots, "{auto: {decide: slo}}", "", "2", "200", "2%")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if b, err := perfdagChild("run", path, "--out", out).CombinedOutput(); err != nil {
		t.Fatalf("run: %v\n%s", err, b)
	}
	r := readSweep(t, out)
	s := schema.Search{Over: schema.SearchOverRate, From: 2, To: 200, Resolution: schema.Resolution{Pct: 2}}
	grid := s.RateGrid()
	i := slices.Index(grid, r.KneeRate)
	if i < 0 || i+1 >= len(grid) || !(r.KneeRate <= mu && mu < grid[i+1]) || r.KneeRateLo != r.KneeRate || r.KneeRateHi != r.KneeRate || r.BandLevel == 0 {
		t.Fatalf("knee %v (band %v–%v at %v), service rate %.3f: want the grid rate just below it, exactly; probes %v", r.KneeRate, r.KneeRateLo, r.KneeRateHi, r.BandLevel, mu, probeKeys(r))
	}
	for _, p := range r.Probes {
		l := p.PointLoad()
		if l.Rate <= mu && (p.Verdict != schema.VerdictMeets || p.MeasurementCost == nil || p.MeasurementCost.RequestsSent < 4*int(math.Ceil(l.Rate))) {
			t.Errorf("probe %s below the service rate: verdict %q after %v: want meets at a look of whole seconds of arrivals", l.Key(), p.Verdict, p.MeasurementCost)
		}
		if l.Rate > mu && p.Verdict == schema.VerdictMeets {
			t.Errorf("probe %s above the service rate decided meets (%s)", l.Key(), p.Values)
		}
	}
	t.Logf("knee %v req/s in %d probes of ≤ %d: %v", r.KneeRate, len(r.Probes), r.Bound, probeKeys(r))
}
