package stats

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/perfdag/perfdag/engine/plural"
	"github.com/perfdag/perfdag/schema"
)

// scheduled reports whether the records come from an open loop: some were sent on a schedule.
func scheduled(records []schema.RequestRecord) bool {
	for _, r := range records {
		if r.ScheduledNs > 0 {
			return true
		}
	}
	return false
}

// since is where a request's user-facing latencies run from: its scheduled send in an open
// loop (the moment its user arrived, whatever the client or the cap did), else its send.
func since(r schema.RequestRecord) int64 {
	if r.ScheduledNs > 0 {
		return r.ScheduledNs
	}
	return r.StartNs
}

// SLOTimes are a valid request's TTFT and latency (ms) as an SLO judges them: from its
// scheduled send in an open loop, so a request the cap or a stalled client held back is judged
// on what its user waited; from its send otherwise. Its TPOT is the same either way.
func SLOTimes(r schema.RequestRecord) (ttftMs, latencyMs float64) {
	s := since(r)
	return ms(r.FirstTokenNs - s), ms(r.LastContentNs - s)
}

// openLoop sets an open-loop point's latencies from the scheduled send and its OpenLoop
// block from its profiling records (every one, failed ones too: each was a send) and the
// valid ones among them.
func openLoop(p *schema.Point, profiling, valid []schema.RequestRecord, o Options) {
	var ttft, lat []float64
	for _, r := range valid {
		t, l := SLOTimes(r)
		ttft, lat = append(ttft, t), append(lat, l)
	}
	p.TTFTSched, p.RequestLatencySched = Summarize(ttft, UnitMs), Summarize(lat, UnitMs)
	ol := &schema.OpenLoop{AskedRate: o.RequestRate, Arrival: o.Arrival, InFlightCap: o.Concurrency, Sends: len(profiling), RateMet: true}
	if ol.Arrival == "" {
		ol.Arrival = "poisson"
	}
	p.OpenLoop = ol
	if len(profiling) == 0 {
		return
	}
	var (
		schedFirst, schedLast = int64(math.MaxInt64), int64(math.MinInt64)
		sendFirst, sendLast   = int64(math.MaxInt64), int64(math.MinInt64)
		endLast               int64
		lateness              = make([]float64, 0, len(profiling))
		events                = make([]event, 0, 2*len(profiling))
	)
	for _, r := range profiling {
		schedFirst, schedLast = min(schedFirst, r.ScheduledNs), max(schedLast, r.ScheduledNs)
		sendFirst, sendLast = min(sendFirst, r.StartNs), max(sendLast, r.StartNs)
		endLast = max(endLast, r.EndNs, r.LastContentNs)
		late := ms(max(r.StartNs-r.ScheduledNs, 0))
		lateness = append(lateness, late)
		if r.CapDelayed {
			ol.CapDelayedSends++
			ol.CapDelayTotalMs += late
			ol.CapDelayMaxMs = max(ol.CapDelayMaxMs, late)
		}
		if r.LookHeld {
			ol.LookHeldSends++
			ol.LookHeldMaxMs = max(ol.LookHeldMaxMs, late)
		}
		events = append(events, event{r.StartNs, +1}, event{max(r.EndNs, r.LastContentNs, r.StartNs), -1})
	}
	ol.SendLatenessMs = Summarize(lateness, UnitMs)
	ol.InFlightPeak = peak(events)
	if span := float64(endLast-sendFirst) / 1e9; span > 0 {
		ol.CompletionRate = float64(len(profiling)) / span
	}
	n := float64(len(profiling) - 1)
	if n < 1 || schedLast <= schedFirst {
		return
	}
	ol.ScheduledRate = n / (float64(schedLast-schedFirst) / 1e9)
	if sendLast > sendFirst {
		ol.AchievedRate = n / (float64(sendLast-sendFirst) / 1e9)
	}
	ol.RateShortfallPct = max(0, 100*(1-ol.AchievedRate/ol.ScheduledRate))
	if ol.RateShortfallPct <= schema.RateTolerancePct {
		return
	}
	ol.RateMet = false
	switch {
	case ol.LookHeldSends > ol.CapDelayedSends:
		ol.RateShort = fmt.Sprintf("server behind: %s of %d waited for the requests before a look to be answered (up to %s late)",
			plural.N(ol.LookHeldSends, "send"), ol.Sends, fmtMs(ol.LookHeldMaxMs))
	case ol.CapDelayedSends > 0:
		ol.RateShort = fmt.Sprintf("cap hit: %s of %d waited for one of %d in-flight slots (up to %s late)",
			plural.N(ol.CapDelayedSends, "send"), ol.Sends, ol.InFlightCap, fmtMs(ol.CapDelayMaxMs))
	default:
		ol.RateShort = fmt.Sprintf("client behind: sends went out up to %s late (p99 %s) with slots free",
			fmtMs(ol.SendLatenessMs.Max), fmtMs(ol.SendLatenessMs.P99))
	}
}

// event is a send (+1) or an end (−1) on the records' clock.
type event struct {
	at    int64
	delta int
}

// peak is the most requests in flight at once; an end and a send at the same instant count
// the end first.
func peak(events []event) int {
	slices.SortFunc(events, func(a, b event) int {
		if a.at != b.at {
			return int(min(max(a.at-b.at, -1), 1))
		}
		return a.delta - b.delta
	})
	now, most := 0, 0
	for _, e := range events {
		now += e.delta
		most = max(most, now)
	}
	return most
}

// fmtMs words a duration given in ms with about three significant digits: in ms below a
// second, in s from there.
func fmtMs(v float64) string {
	switch {
	case v >= 100000:
		return fmt.Sprintf("%.0f s", v/1000)
	case v >= 1000:
		return fmt.Sprintf("%.3g s", v/1000)
	case v >= 1 || v == 0:
		return fmt.Sprintf("%.3g ms", v)
	default:
		return fmt.Sprintf("%.2f ms", v)
	}
}

// OpenLoopLine is an open-loop point's part of its run line: asked, scheduled and achieved
// rates, completions, the in-flight peak, what the cap held back, the TTFT from the schedule
// beside the one from the send, and why the rate was short when it was; "" on a closed loop.
func OpenLoopLine(p schema.Point) string {
	ol := p.OpenLoop
	if ol == nil {
		return ""
	}
	parts := []string{fmt.Sprintf("rate %.3g/s asked (%s", ol.AskedRate, ol.Arrival)}
	if ol.ScheduledRate > 0 && ol.Arrival != "constant" {
		parts[0] += fmt.Sprintf(", %.3g/s drawn", ol.ScheduledRate)
	}
	parts[0] += fmt.Sprintf("), %.3g/s sent, %.3g/s done", ol.AchievedRate, ol.CompletionRate)
	capWord := "no cap"
	if ol.InFlightCap > 0 {
		capWord = fmt.Sprintf("cap %d", ol.InFlightCap)
	}
	parts = append(parts, fmt.Sprintf("peak %d in flight (%s)", ol.InFlightPeak, capWord))
	if l := ol.SendLatenessMs; l != nil {
		parts = append(parts, fmt.Sprintf("sends late p50 %s, p99 %s", fmtMs(l.P50), fmtMs(l.P99)))
	}
	if ol.CapDelayedSends > 0 {
		parts = append(parts, fmt.Sprintf("%s delayed by the cap (max %s, total %s)",
			plural.N(ol.CapDelayedSends, "send"), fmtMs(ol.CapDelayMaxMs), fmtMs(ol.CapDelayTotalMs)))
	}
	if p.TTFTSched != nil && p.TTFT != nil {
		parts = append(parts, fmt.Sprintf("TTFT p50 %s from schedule (%s from send)", fmtMs(p.TTFTSched.P50), fmtMs(p.TTFT.P50)))
	}
	line := strings.Join(parts, ", ")
	if !ol.RateMet {
		line += fmt.Sprintf("; rate_short %.1f %%: %s", ol.RateShortfallPct, ol.RateShort)
	}
	return line
}
