package stats

import (
	"math"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
)

// sched is an open-loop request: scheduled at schedMs, sent at startMs, first token at
// firstMs, ended at endMs (all from base), held back by the cap or not.
func sched(i int, schedMs, startMs, firstMs, endMs float64, capDelayed bool) schema.RequestRecord {
	at := func(v float64) int64 { return base + int64(v*1e6) }
	return schema.RequestRecord{Index: i, Phase: PhaseProfiling, ScheduledNs: at(schedMs), StartNs: at(startMs), CapDelayed: capDelayed,
		FirstTokenNs: at(firstMs), FirstOutputNs: at(firstMs), LastContentNs: at(endMs), EndNs: at(endMs), Status: 200, InputTokens: 10, OutputTokens: 4}
}

// stalled is 11 requests at a constant 10/s with a cap of 2: requests 3 and 4 are stuck in a
// server stall until 1,000 ms, so 5..10 (due 500..1,000 ms) wait for a slot and go out late,
// two at a time, as the slots free.
func stalled() []schema.RequestRecord {
	return []schema.RequestRecord{
		sched(0, 0, 0, 20, 50, false),
		sched(1, 100, 100, 120, 150, false),
		sched(2, 200, 200, 220, 250, false),
		sched(3, 300, 300, 1005, 1010, false),
		sched(4, 400, 400, 1005, 1010, false),
		sched(5, 500, 1010, 1015, 1020, true),
		sched(6, 600, 1010, 1015, 1020, true),
		sched(7, 700, 1020, 1025, 1030, true),
		sched(8, 800, 1020, 1025, 1030, true),
		sched(9, 900, 1030, 1035, 1040, true),
		sched(10, 1000, 1030, 1035, 1040, true),
	}
}

// The open-loop figures, by hand: scheduled rate 10 gaps / 1 s, achieved 10 / 1.03 s (2.9 %
// short: within the 5 % tolerance), completions 11 / 1.04 s, two in flight at most, six sends
// held back by the cap, 510 + 410 + 320 + 220 + 130 + 30 = 1,620 ms late in all and 510 ms at
// most; TTFT from the schedule includes what request 5 waited (1,015 − 500 = 515 ms) where its
// TTFT from the send is 5 ms.
func TestOpenLoopFigures(t *testing.T) {
	p := Compute(stalled(), Options{Concurrency: 2, RequestRate: 10, Arrival: "constant", TokenBasis: "o200k_base"})
	ol := p.OpenLoop
	if ol == nil {
		t.Fatal("no open_loop block on a point whose records were sent on a schedule")
	}
	if ol.AskedRate != 10 || ol.Arrival != "constant" || ol.InFlightCap != 2 || ol.Sends != 11 {
		t.Errorf("asked %v %s cap %d sends %d, want 10 constant, cap 2, 11 sends", ol.AskedRate, ol.Arrival, ol.InFlightCap, ol.Sends)
	}
	if !near(ol.ScheduledRate, 10) || !near(ol.AchievedRate, 10/1.03) || !near(ol.CompletionRate, 11/1.04) {
		t.Errorf("rates scheduled %v achieved %v completed %v, want 10, %v, %v", ol.ScheduledRate, ol.AchievedRate, ol.CompletionRate, 10/1.03, 11/1.04)
	}
	if !near(ol.RateShortfallPct, 100*(1-1/1.03)) || !ol.RateMet || ol.RateShort != "" {
		t.Errorf("shortfall %v %% met %v (%q), want %v %% and met", ol.RateShortfallPct, ol.RateMet, ol.RateShort, 100*(1-1/1.03))
	}
	if ol.InFlightPeak != 2 {
		t.Errorf("in-flight peak %d, want 2", ol.InFlightPeak)
	}
	if ol.CapDelayedSends != 6 || !near(ol.CapDelayTotalMs, 1620) || !near(ol.CapDelayMaxMs, 510) {
		t.Errorf("cap delayed %d sends, %v ms in all, %v at most; want 6, 1620, 510", ol.CapDelayedSends, ol.CapDelayTotalMs, ol.CapDelayMaxMs)
	}
	if s := ol.SendLatenessMs; s == nil || s.Count != 11 || !near(s.Max, 510) || !near(s.Min, 0) {
		t.Errorf("send lateness %+v, want 11 sends, 0 to 510 ms", s)
	}
	// TTFT from the schedule: 20, 20, 20, 705, 605, then 515, 415, 325, 225, 135, 35 for the
	// six held back (from their sends: 5 ms each); latency likewise (from the sends: 10 ms each).
	if p.TTFTSched == nil || !near(p.TTFTSched.Avg, 3020.0/11) || !near(p.TTFT.Avg, 1400.0/11) {
		t.Errorf("TTFT from the schedule %+v, from the send %+v; want means 3020/11 and 1400/11 ms", p.TTFTSched, p.TTFT)
	}
	if p.RequestLatencySched == nil || !near(p.RequestLatencySched.Avg, 3150.0/11) || !near(p.RequestLatency.Avg, 1530.0/11) {
		t.Errorf("latency from the schedule %+v, from the send %+v; want means 3150/11 and 1530/11 ms", p.RequestLatencySched, p.RequestLatency)
	}
	line := OpenLoopLine(p)
	for _, want := range []string{"rate 10/s asked (constant)", "9.71/s sent", "10.6/s done", "peak 2 in flight (cap 2)", "sends late p50 30 ms, p99 500 ms",
		"6 sends delayed by the cap (max 510 ms, total 1.62 s)", "TTFT p50 225 ms from schedule (5 ms from send)"} {
		if !strings.Contains(line, want) {
			t.Errorf("run line %q lacks %q", line, want)
		}
	}
	if strings.Contains(line, "rate_short") {
		t.Errorf("run line %q says rate_short on a point within the tolerance", line)
	}
}

// A point whose sends fell more than 5 % behind its schedule is rate_short, and says why: the
// cap when it held sends back, the server when an adaptive point's look held them waiting for
// its earlier requests' answers, the client when neither did; 4.9 % short is still met.
func TestOpenLoopRateShort(t *testing.T) {
	// 11 sends due every 100 ms, each sent after the previous one's 300 ms answer (cap 1).
	var capped, behind, held, within []schema.RequestRecord
	for i := range 11 {
		at := float64(i)
		capped = append(capped, sched(i, 100*at, 300*at, 300*at+10, 300*at+300, i > 0))
		behind = append(behind, sched(i, 100*at, 150*at, 150*at+10, 150*at+20, false))
		held = append(held, behind[i])
		held[i].LookHeld = i > 0
		within = append(within, sched(i, 100*at, 100*at/0.951, 100*at/0.951+10, 100*at/0.951+20, false))
	}
	for _, tc := range []struct {
		name      string
		records   []schema.RequestRecord
		shortfall float64
		reason    string
	}{
		{"cap", capped, 100 * (1 - 1.0/3), "cap hit: 10 sends of 11 waited for one of 1 in-flight slots (up to 2 s late)"},
		{"client", behind, 100 * (1 - 1/1.5), "client behind: sends went out up to 500 ms late (p99 495 ms) with slots free"},
		{"look", held, 100 * (1 - 1/1.5), "server behind: 10 sends of 11 waited for the requests before a look to be answered (up to 500 ms late)"},
		{"within", within, 100 * (1 - 0.951), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Compute(tc.records, Options{Concurrency: 1, RequestRate: 10, TokenBasis: "o200k_base"})
			ol := p.OpenLoop
			if math.Abs(ol.RateShortfallPct-tc.shortfall) > 1e-6 || ol.RateMet != (tc.reason == "") || ol.RateShort != tc.reason {
				t.Errorf("shortfall %v %%, met %v, reason %q; want %v %%, met %v, %q", ol.RateShortfallPct, ol.RateMet, ol.RateShort, tc.shortfall, tc.reason == "", tc.reason)
			}
			if line := OpenLoopLine(p); (tc.reason != "") != strings.Contains(line, "rate_short") || !strings.Contains(line, tc.reason) {
				t.Errorf("run line %q, want it to name rate_short and %q", line, tc.reason)
			}
		})
	}
}

// An open loop's goodput judges TTFT and latency from the scheduled send: request 5 of the
// stalled point answered 5 ms after it was sent, but its user had waited 515 ms; five of the
// six the cap held back miss a 100 ms TTFT target (request 10, 30 ms late, meets it), as do
// the two stuck in the stall.
func TestOpenLoopGoodputFromTheSchedule(t *testing.T) {
	slo := schema.SLO{TTFTMs: msf(100)}
	p := Compute(stalled(), Options{Concurrency: 2, RequestRate: 10, TokenBasis: "o200k_base", SLO: &slo})
	if g := p.Goodput; g.Good != 4 || g.MissedTTFT != 7 {
		t.Errorf("good %d, missed TTFT %d; want 4 (requests 0..2 and 10) and 7 (the stalled two, five held back)", g.Good, g.MissedTTFT)
	}
	for _, r := range stalled()[5:] {
		if ttft, _ := SLOTimes(r); !near(ttft, float64(r.FirstTokenNs-r.ScheduledNs)/1e6) {
			t.Errorf("request %d: SLO TTFT %v, want it from the schedule", r.Index, ttft)
		}
	}
}

// A closed loop's records carry no schedule: no open_loop block, no *_sched_ms latencies, and
// goodput from the send as before.
func TestClosedLoopHasNoOpenLoopFigures(t *testing.T) {
	recs := stalled()
	for k := range recs {
		recs[k].ScheduledNs, recs[k].CapDelayed = 0, false
	}
	p := Compute(recs, Options{Concurrency: 2, TokenBasis: "o200k_base", SLO: &schema.SLO{TTFTMs: msf(100)}})
	if p.OpenLoop != nil || p.TTFTSched != nil || p.RequestLatencySched != nil || OpenLoopLine(p) != "" {
		t.Errorf("closed loop: open_loop %+v, ttft_sched %+v, line %q; want none", p.OpenLoop, p.TTFTSched, OpenLoopLine(p))
	}
	if g := p.Goodput; g.Good != 9 {
		t.Errorf("closed loop: %d good, want 9 (only the two stuck in the stall miss, judged from their sends)", g.Good)
	}
}
