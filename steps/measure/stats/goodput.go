package stats

import (
	"cmp"
	"slices"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/interval"
)

// Keys of the goodput figures, as points, atlas rows, gates and intervals name them.
const (
	KeySLOAttainment = "slo_attainment"
	KeyGoodputReqS   = "goodput_req_s"
)

// verdict is one request as an SLO judged it.
type verdict struct {
	good                bool
	ttft, tpot, latency bool // the target was missed
	noTPOT              bool // fewer than two output tokens: no TPOT to judge
}

// judge holds one valid request to every target of slo: TTFT (first content or reasoning −
// start), TPOT ((latency − TTFT) / (tokens − 1) on the point's token basis, the point's own
// ITL of the request) and latency (last content − start), each "at most" its target, as
// DistServe and vLLM's --goodput define them; in an open loop the start is the scheduled
// send (SLOTimes), so what the cap or the client held a request back counts against it. A request of fewer than two tokens has no TPOT:
// the tpot target does not judge it (vLLM counts its TPOT as 0).
func judge(slo schema.SLO, ttft, latency float64, tokens int) verdict {
	var v verdict
	if slo.TTFTMs != nil && ttft > *slo.TTFTMs {
		v.ttft = true
	}
	if slo.LatencyMs != nil && latency > *slo.LatencyMs {
		v.latency = true
	}
	if slo.TPOTMs != nil {
		if tpot, ok := itlOf(ttft, latency, tokens); !ok {
			v.noTPOT = true
		} else if tpot > *slo.TPOTMs {
			v.tpot = true
		}
	}
	v.good = !v.ttft && !v.tpot && !v.latency
	return v
}

// goodput judges a point's requests against slo and sets its Goodput, SLOAttainment and
// GoodputReqS, with their 95 % intervals: slo_attainment's from the 0/1 series of every
// request of the window (failed ones 0) in start order (interval.Proportion), goodput_req_s's
// the ratio form over the valid requests as request_throughput's, cut at 0 (only when the
// window is the records' own span). valid and counts are the point's valid requests and their token
// counts; failedStarts the start times of its failed requests.
func goodput(p *schema.Point, slo schema.SLO, valid []schema.RequestRecord, counts []tokenCount, failedStarts []int64, winEnd int64, windowGiven bool) {
	g := &schema.Goodput{SLO: slo, Requests: len(valid) + len(failedStarts), Failed: len(failedStarts)}
	p.Goodput = g
	type judged struct {
		start int64
		good  float64
	}
	series := make([]judged, 0, g.Requests)
	good := make([]bool, len(valid))
	for i, r := range valid {
		ttft, latency := SLOTimes(r)
		v := judge(slo, ttft, latency, counts[i].output+counts[i].reasoning)
		good[i] = v.good
		if v.good {
			g.Good++
		}
		g.MissedTTFT += b2i(v.ttft)
		g.MissedTPOT += b2i(v.tpot)
		g.MissedLatency += b2i(v.latency)
		g.NoTPOT += b2i(v.noTPOT)
		series = append(series, judged{r.StartNs, float64(b2i(v.good))})
	}
	for _, st := range failedStarts {
		series = append(series, judged{st, 0})
	}
	if g.Requests == 0 {
		return
	}
	att := float64(g.Good) / float64(g.Requests)
	p.SLOAttainment = &att
	if p.WindowS > 0 {
		gp := float64(g.Good) / p.WindowS
		p.GoodputReqS = &gp
	}
	slices.SortStableFunc(series, func(a, b judged) int { return cmp.Compare(a.start, b.start) })
	xs := make([]float64, len(series))
	for i, s := range series {
		xs[i] = s.good
	}
	b := batchingOf(valid, winEnd)
	set := func(key string, iv schema.Interval, ok bool) {
		if !ok {
			return
		}
		if p.Intervals == nil {
			p.Intervals = schema.Intervals{}
		}
		p.Intervals[key] = iv
	}
	iv, ok := b.Proportion(xs)
	set(KeySLOAttainment, iv, ok)
	if !windowGiven && p.GoodputReqS != nil {
		num, spans := goodSpans(valid, good, winEnd)
		iv, ok := b.Ratio(num, spans)
		iv.Lo = max(iv.Lo, 0) // a rate is never negative: with few good requests the t interval reaches below 0
		set(KeyGoodputReqS, iv, ok)
	}
}

// batchingOf is the batching a point's intervals use: batches of InflightFactor × the mean
// requests in flight (Little's law: Σ latency / window over the valid requests).
func batchingOf(valid []schema.RequestRecord, winEnd int64) interval.Batching {
	if len(valid) == 0 {
		return interval.For(0)
	}
	first := valid[0].StartNs
	latencyS := 0.0
	for _, r := range valid {
		first = min(first, r.StartNs)
		latencyS += float64(r.LastContentNs-r.StartNs) / 1e9
	}
	window := float64(winEnd-first) / 1e9
	if window <= 0 {
		return interval.For(0)
	}
	return interval.For(latencyS / window)
}

// goodSpans pairs each valid request in start order with 1 when it was good and the time to
// the next request's start (the last one's: to the window's end), the ratio Σgood / Σspan
// being good ÷ window: goodput_req_s.
func goodSpans(valid []schema.RequestRecord, good []bool, winEnd int64) (num, spans []float64) {
	order := make([]int, len(valid))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(valid[a].StartNs, valid[b].StartNs) })
	num, spans = make([]float64, len(order)), make([]float64, len(order))
	for j, i := range order {
		next := winEnd
		if j+1 < len(order) {
			next = valid[order[j+1]].StartNs
		}
		num[j], spans[j] = float64(b2i(good[i])), float64(next-valid[i].StartNs)/1e9
	}
	return num, spans
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// MeetsSLO reports whether one valid request met every target of slo, judged as a point's
// goodput judges it (TTFT and latency in ms, tokens its output on the point's basis).
func MeetsSLO(slo schema.SLO, ttftMs, latencyMs float64, tokens int) bool {
	return judge(slo, ttftMs, latencyMs, tokens).good
}
