package autostop

import (
	"cmp"
	"math"
	"slices"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/interval"
	"github.com/perfdag/perfdag/steps/measure/stats"
)

// bounds is what a look reads a clause's metric from: its estimate and its one-sided bounds
// at any confidence, with the batches and effective sample size they rest on.
type bounds struct {
	centre       float64
	lower, upper func(conf float64) float64
	k            int
	ess          float64
}

// fromEstimate is the bounds of a mean, quantile or ratio estimate.
func fromEstimate(e interval.Estimate) bounds {
	return bounds{centre: e.Centre, lower: e.Lower, upper: e.Upper, k: e.K, ess: e.ESS}
}

// sloMetric is a metric of the per-request slo (slo_attainment, goodput_req_s): each request
// judged against the cell's targets, as the point's goodput judges it.
type sloMetric struct {
	key string
	slo schema.SLO
}

// sloMetrics are the decidable metrics that need the cell's slo.
var sloMetrics = []string{stats.KeySLOAttainment, stats.KeyGoodputReqS}

// judged is a prefix as an slo metric reads it: every profiling request in start order (failed
// ones are misses, as slo_attainment counts them), whether it was good, its start, and the
// requests in flight (Little's law over the valid ones).
type judged struct {
	good     []float64 // 0/1 per request, valid and failed, in start order
	starts   []int64   // the same requests' starts
	inflight float64
	exact    bool // every valid request judged on the same values and none failed: a server without variance
}

func (m sloMetric) judge(records []schema.RequestRecord) judged {
	type req struct {
		start               int64
		good                bool
		ttft, latency, tpot float64
		valid               bool
	}
	var rs []req
	var j judged
	latency, first, winEnd := 0.0, int64(math.MaxInt64), int64(0)
	failed := false
	for _, r := range records {
		if !isProfiling(r) {
			continue
		}
		if stats.Class(r) != "" {
			rs = append(rs, req{start: r.StartNs})
			failed = true
			continue
		}
		ttft, lat := stats.SLOTimes(r) // from the scheduled send in an open loop, as the point's goodput
		n := tokens(r)
		tpot := -1.0
		if v, ok := itlMs(r); ok {
			tpot = v
		}
		rs = append(rs, req{start: r.StartNs, good: stats.MeetsSLO(m.slo, ttft, lat, n), ttft: ttft, latency: lat, tpot: tpot, valid: true})
		winEnd = max(winEnd, r.LastContentNs)
		first = min(first, r.StartNs)
		latency += float64(r.LastContentNs - r.StartNs)
	}
	slices.SortStableFunc(rs, func(a, b req) int { return cmp.Compare(a.start, b.start) })
	if w := float64(winEnd - first); w > 0 {
		j.inflight = latency / w
	}
	j.exact = !failed && len(rs) >= interval.DecideMinBatches
	for i, r := range rs {
		j.good = append(j.good, float64(b2f(r.good)))
		j.starts = append(j.starts, r.start)
		if i > 0 && r.valid && (r.ttft != rs[0].ttft || r.latency != rs[0].latency || r.tpot != rs[0].tpot) {
			j.exact = false
		}
	}
	return j
}

func b2f(b bool) int {
	if b {
		return 1
	}
	return 0
}

// estimate bounds the metric on a look's prefix. slo_attainment: the batch means of the 0/1
// series joined with the Wilson bound over its effective observations
// (interval.ProportionEstimate) at each side's confidence. goodput_req_s = attainment × the
// rate at which requests start (valid and failed, one per gap between starts), each bounded at half the
// side's error (their product's bound holds when both do). A server without variance — every
// valid request judged on the same TTFT, TPOT and latency to the nanosecond, none failed — is
// exact from two requests on, as a mean's series without spread is; an all-good series alone
// is not (it is an ordinary sample of an attainment just below 1).
func (m sloMetric) estimate(records []schema.RequestRecord) (bounds, bool) {
	j := m.judge(records)
	if len(j.good) == 0 {
		return bounds{}, false
	}
	att := mean(j.good)
	var rate interval.Estimate
	if m.key == stats.KeyGoodputReqS && len(j.starts) > 1 {
		// the rate requests start at: one per gap between consecutive starts. The window's own
		// rate (n over first start to last end) runs low by the last request's latency over
		// the window, a bias of (c − 1) / n turns a decision at a few hundred requests would
		// take for evidence.
		n := len(j.starts) - 1
		ones, gaps := make([]float64, n), make([]float64, n)
		for i := range n {
			ones[i], gaps[i] = 1, float64(j.starts[i+1]-j.starts[i])/1e9
		}
		var ok bool
		if rate, ok = interval.Decide(j.inflight).RatioEstimate(ones, gaps); !ok && !j.exact {
			return bounds{}, false
		}
		if w := float64(j.starts[n]-j.starts[0]) / 1e9; !ok && w > 0 {
			rate.Centre = float64(n) / w
		}
	}
	if j.exact {
		v := att
		if m.key == stats.KeyGoodputReqS {
			v *= rate.Centre
		}
		at := func(float64) float64 { return v }
		return bounds{centre: v, lower: at, upper: at, k: min(len(j.good), interval.MaxBatches), ess: float64(len(j.good))}, true
	}
	p, ok := interval.Decide(j.inflight).ProportionEstimate(j.good)
	if !ok {
		return bounds{}, false
	}
	if m.key == stats.KeySLOAttainment {
		return bounds{centre: att, lower: p.Lower, upper: p.Upper, k: p.Mean.K, ess: p.Count}, true
	}
	half := func(conf float64) float64 { return 1 - (1-conf)/2 }
	return bounds{
		centre: att * rate.Centre,
		lower:  func(conf float64) float64 { return p.Lower(half(conf)) * max(rate.Lower(half(conf)), 0) },
		upper:  func(conf float64) float64 { return p.Upper(half(conf)) * max(rate.Upper(half(conf)), 0) },
		k:      min(p.Mean.K, rate.K), ess: min(p.Count, rate.ESS),
	}, true
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
