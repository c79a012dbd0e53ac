package stats

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
)

func msf(v float64) *float64 { return &v }

// rec is a valid profiling request starting at startMs (from base) with the given TTFT, latency
// and o200k_base output tokens.
func rec(i int, startMs, ttftMs, latMs float64, tokens int) schema.RequestRecord {
	st := base + int64(startMs*1e6)
	return schema.RequestRecord{Index: i, Phase: PhaseProfiling, StartNs: st, FirstTokenNs: st + int64(ttftMs*1e6),
		FirstOutputNs: st + int64(ttftMs*1e6), LastContentNs: st + int64(latMs*1e6), EndNs: st + int64(latMs*1e6),
		Status: 200, InputTokens: 10, OutputTokens: tokens}
}

// The definitions, request by request: TTFT, TPOT ((latency − TTFT) / (tokens − 1)) and latency
// each at most their target (equal holds); a 1-token answer has no TPOT and is not judged by
// the tpot target; a failed request is in the denominator and never good; warm-up requests are
// in nothing; goodput divides the good by the point's window.
func TestGoodputDefinitions(t *testing.T) {
	slo := schema.SLO{TTFTMs: msf(2000), TPOTMs: msf(50), LatencyMs: msf(30000)}
	warm := rec(99, 0, 5000, 90000, 10)
	warm.Phase = "warmup"
	records := []schema.RequestRecord{
		warm,
		rec(0, 0, 100, 1000, 10), // TPOT 100 ms: misses tpot
		rec(1, 0, 100, 100, 1),   // one token: no TPOT; good
		{Index: 2, Phase: PhaseProfiling, StartNs: base + 50e6, EndNs: base + 60e6, Status: 500, ErrorClass: schema.ErrorHTTP},
		rec(3, 100, 3000, 3500, 11),   // TTFT 3000: misses ttft (TPOT 50: holds)
		rec(4, 200, 2000, 2450, 10),   // TTFT = 2000, TPOT = 50: exactly at both targets, good
		rec(5, 300, 500, 40000, 1000), // latency 40 s: misses latency (TPOT 39.5 holds)
		rec(6, 400, 2500, 60000, 2),   // misses all three
		rec(7, 500, 10, 400, 10),      // TPOT 43.3: good
	}
	p := Compute(records, Options{Concurrency: 2, TokenBasis: "o200k_base", SLO: &slo})
	g := p.Goodput
	if g == nil {
		t.Fatal("no goodput on a point whose cell declares an slo")
	}
	want := schema.Goodput{SLO: slo, Requests: 8, Good: 3, Failed: 1, MissedTTFT: 2, MissedTPOT: 2, MissedLatency: 2, NoTPOT: 1}
	if gj, wj := js(t, *g), js(t, want); gj != wj {
		t.Errorf("goodput\n got %s\nwant %s", gj, wj)
	}
	if p.SLOAttainment == nil || *p.SLOAttainment != 3.0/8 {
		t.Errorf("slo_attainment = %v, want 3/8 (failed requests count, warm-up does not)", p.SLOAttainment)
	}
	// window: first valid start (0) to the latest valid end (400 + 60000 ms)
	if !near(p.WindowS, 60.4) || p.GoodputReqS == nil || !near(*p.GoodputReqS, 3/60.4) {
		t.Errorf("window %v, goodput_req_s = %v, want 3 / 60.4 s", p.WindowS, p.GoodputReqS)
	}
	if *p.GoodputReqS > p.RequestThroughput {
		t.Errorf("goodput %v above the request throughput %v", *p.GoodputReqS, p.RequestThroughput)
	}
}

// TPOT counts on the point's token basis, as its ITL does: the same record judged on the
// server's usage (11 tokens: TPOT 90 ms) misses a 50 ms target it meets on a text count of
// 100 tokens (TPOT 9 ms).
func TestGoodputTokenBasis(t *testing.T) {
	r := rec(0, 0, 100, 1000, 100)
	usage := 11
	r.UsageComplete = &usage
	slo := schema.SLO{TPOTMs: msf(50)}
	for basis, good := range map[string]int{"o200k_base": 1, "server": 0} {
		p := Compute([]schema.RequestRecord{r}, Options{Concurrency: 1, TokenBasis: basis, SLO: &slo})
		if p.Goodput.Good != good {
			t.Errorf("%s basis: %d good, want %d", basis, p.Goodput.Good, good)
		}
	}
}

// No slo declared: the point has no goodput, attainment or interval of them — absent from
// point.json, not zero. Every request failed: attainment 0, goodput unknown (no window).
func TestGoodputAbsentAndFailed(t *testing.T) {
	p := Compute(closedLoop(5, 4, 400), Options{Concurrency: 4, TokenBasis: "o200k_base"})
	b, _ := json.Marshal(p)
	for _, key := range []string{`"goodput"`, `"slo_attainment"`, `"goodput_req_s"`} {
		if strings.Contains(string(b), key) {
			t.Errorf("point.json without an slo holds %s", key)
		}
	}
	failed := []schema.RequestRecord{
		{Phase: PhaseProfiling, StartNs: base, EndNs: base + 1e6, Status: 500, ErrorClass: schema.ErrorHTTP},
		{Phase: PhaseProfiling, StartNs: base + 1e6, EndNs: base + 2e6, Status: 429, ErrorClass: schema.ErrorRateLimit},
	}
	p = Compute(failed, Options{Concurrency: 1, SLO: &schema.SLO{TTFTMs: msf(100)}})
	if p.Goodput == nil || p.Goodput.Requests != 2 || p.Goodput.Failed != 2 || p.SLOAttainment == nil || *p.SLOAttainment != 0 || p.GoodputReqS != nil {
		t.Errorf("all failed: goodput %+v, attainment %v, goodput_req_s %v; want 2 requests, 0 attainment, no goodput_req_s", p.Goodput, p.SLOAttainment, p.GoodputReqS)
	}
}

// On a long enough point both figures get a 95 % interval around them (batch means on the
// 0/1 series with a Wilson floor; the ratio form for the rate), and a window the file states
// gives the rate none, as request_throughput has none.
func TestGoodputIntervals(t *testing.T) {
	slo := schema.SLO{TTFTMs: msf(60)} // the closed loop's TTFT median is 50 ms: about 70 % good
	p := Compute(closedLoop(1, 4, 2100), Options{Concurrency: 4, TokenBasis: "o200k_base", SLO: &slo})
	att, gp := p.Intervals[KeySLOAttainment], p.Intervals[KeyGoodputReqS]
	if !att.Contains(*p.SLOAttainment) || att.HalfWidth() <= 0 || att.HalfWidth() > 0.05 || att.Method != "batch-means+wilson" {
		t.Errorf("slo_attainment %.4f: interval %+v", *p.SLOAttainment, att)
	}
	if !near((gp.Lo+gp.Hi)/2, *p.GoodputReqS) || gp.HalfWidth() <= 0 || gp.Method != "batch-means" {
		t.Errorf("goodput_req_s %.4f: interval %+v", *p.GoodputReqS, gp)
	}
	if *p.SLOAttainment < 0.5 || *p.SLOAttainment > 0.85 {
		t.Errorf("attainment %.3f: the case wants a fraction well inside (0, 1)", *p.SLOAttainment)
	}
	p = Compute(closedLoop(1, 4, 2100), Options{Concurrency: 4, TokenBasis: "o200k_base", SLO: &slo, WindowS: 100})
	if _, ok := p.Intervals[KeyGoodputReqS]; ok {
		t.Error("a stated window gave goodput_req_s an interval")
	}
	if _, ok := p.Intervals[KeySLOAttainment]; !ok {
		t.Error("a stated window took slo_attainment's interval (it needs no window)")
	}
}

func js(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A point where almost no request is good: the goodput's interval stops at 0 (the ratio
// form's symmetric t interval would reach below it), and still holds the goodput.
func TestGoodputIntervalNotNegative(t *testing.T) {
	slo := schema.SLO{TTFTMs: msf(20)} // the closed loop's TTFT median is 50 ms (σ 0.3): 2 of 2,058 good
	p := Compute(closedLoop(1, 4, 2100), Options{Concurrency: 4, TokenBasis: "o200k_base", SLO: &slo})
	iv, ok := p.Intervals[KeyGoodputReqS]
	if !ok || iv.Lo != 0 || !iv.Contains(*p.GoodputReqS) || p.Goodput.Good != 2 {
		t.Errorf("goodput %v (%d good) interval %+v", *p.GoodputReqS, p.Goodput.Good, iv)
	}
}
