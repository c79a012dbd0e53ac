package autostop

import (
	"cmp"
	"slices"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/interval"
	"github.com/perfdag/perfdag/steps/measure/stats"
)

const phaseProfiling = stats.PhaseProfiling

// metric is how one watchable metric is bounded from per-request values: a mean, a
// q-quantile, or a ratio Σnum / Σ(time to the next start) (num nil: the request count).
type metric struct {
	value func(schema.RequestRecord) (float64, bool) // per request; ok false: the request has none
	q     float64                                    // the quantile for a percentile; 0 for a mean
	ratio bool
	num   func(schema.RequestRecord) float64 // a ratio's numerator per request
}

// metrics are schema.AutoMetrics' implementations (a test checks the two lists agree), keyed
// and defined as the points' own intervals are (steps/measure/stats, docs/statistics.md).
var metrics = map[string]metric{
	"ttft_avg_ms":            {value: ttftMs},
	"ttft_p50_ms":            {value: ttftMs, q: 0.5},
	"ttft_p90_ms":            {value: ttftMs, q: 0.9},
	"ttft_p95_ms":            {value: ttftMs, q: 0.95},
	"itl_avg_ms":             {value: itlMs},
	"itl_p50_ms":             {value: itlMs, q: 0.5},
	"request_latency_avg_ms": {value: latencyMs},
	"request_latency_p50_ms": {value: latencyMs, q: 0.5},
	"tok_s_per_user":         {value: tpsPerUser},
	"output_tok_s":           {ratio: true, num: func(r schema.RequestRecord) float64 { return float64(tokens(r)) }},
	"request_throughput":     {ratio: true, num: func(schema.RequestRecord) float64 { return 1 }},
}

// sample is a metric's values over a point's valid profiling requests in start order, a
// ratio's paired spans, and the mean requests in flight (Little's law: Σ latency / window).
type sample struct {
	xs, den  []float64
	inflight float64
}

func (m metric) sample(records []schema.RequestRecord) sample {
	valid := make([]schema.RequestRecord, 0, len(records))
	var winEnd int64
	latency := 0.0
	for _, r := range records {
		if (r.Phase == "" || r.Phase == phaseProfiling) && stats.Class(r) == "" {
			valid = append(valid, r)
			winEnd = max(winEnd, r.LastContentNs)
			latency += float64(r.LastContentNs - r.StartNs)
		}
	}
	slices.SortStableFunc(valid, func(a, b schema.RequestRecord) int { return cmp.Compare(a.StartNs, b.StartNs) })
	var s sample
	if len(valid) == 0 {
		return s
	}
	if w := float64(winEnd - valid[0].StartNs); w > 0 {
		s.inflight = latency / w
	}
	for i, r := range valid {
		if m.ratio {
			next := winEnd
			if i+1 < len(valid) {
				next = valid[i+1].StartNs
			}
			s.xs, s.den = append(s.xs, m.num(r)), append(s.den, float64(next-r.StartNs)/1e9)
		} else if v, ok := m.value(r); ok {
			s.xs = append(s.xs, v)
		}
	}
	return s
}

// interval bounds the metric on records as the point's own interval is made (the interval
// package, 10 to 20 batches, each at least interval.InflightFactor × the requests in flight).
func (m metric) interval(records []schema.RequestRecord) (schema.Interval, bool) {
	s := m.sample(records)
	b := interval.For(s.inflight)
	switch {
	case m.ratio:
		return b.Ratio(s.xs, s.den)
	case m.q > 0:
		iv := b.Quantiles(s.xs, m.q)[0]
		return iv, iv.N > 0
	}
	return b.Mean(s.xs)
}

// estimate is the metric on records with the spread of its batches: a decision look's
// batching when decide (as few as two batches), else the point intervals' own.
func (m metric) estimate(records []schema.RequestRecord, decide bool) (interval.Estimate, bool) {
	s := m.sample(records)
	b := interval.For(s.inflight)
	if decide {
		b = interval.Decide(s.inflight)
		if m.ratio && len(s.xs) > 1 {
			// a decision reads a rate off the gaps between starts: the last request's span, to
			// the window's end, is its latency, not a gap, and a prefix of a few hundred
			// requests would run low by (c − 1) ÷ n turns for it
			s.xs, s.den = s.xs[:len(s.xs)-1], s.den[:len(s.den)-1]
		}
	}
	switch {
	case m.ratio:
		return b.RatioEstimate(s.xs, s.den)
	case m.q > 0:
		e := b.QuantileEstimates(s.xs, m.q)[0]
		return e, e.K > 0
	}
	return b.MeanEstimate(s.xs)
}

// consistent bounds the metric on records with ⌊√n⌋ batches (the stopping rule's interval).
func (m metric) consistent(records []schema.RequestRecord) (schema.Interval, bool) {
	s := m.sample(records)
	return consistent(s.xs, m.q, s.den, s.inflight)
}

// need is the fewest values the metric's interval is made from with inflight requests in
// flight (0: no in-flight rule).
func (m metric) need(inflight float64) int {
	b := interval.For(inflight)
	n := interval.MinSamples
	for ; n <= schema.MaxRequestsPerPoint; n++ {
		if (m.q == 0 && b.Batches(n) > 0) || (m.q > 0 && b.QuantileBatches(n, m.q) > 0) {
			return n
		}
	}
	return n
}

func ms(ns int64) float64 { return float64(ns) / 1e6 }

func ttftMs(r schema.RequestRecord) (float64, bool) { return ms(r.FirstTokenNs - r.StartNs), true }

func latencyMs(r schema.RequestRecord) (float64, bool) { return ms(r.LastContentNs - r.StartNs), true }

// tokens is a request's output (answer + reasoning) tokens while the point runs: the
// server's usage when it sent one, else the client's counts when made, else its chunks. The
// point's own statistics count on its stated basis after the window; on a server that
// reports usage (the common case) the two agree.
func tokens(r schema.RequestRecord) int {
	switch {
	case r.UsageComplete != nil:
		return *r.UsageComplete
	case r.OutputTokens+r.ReasoningTok > 0:
		return r.OutputTokens + r.ReasoningTok
	}
	return len(r.ChunkNs)
}

// itlMs is (latency − TTFT) / (OSL − 1), for OSL ≥ 2, as the point defines ITL.
func itlMs(r schema.RequestRecord) (float64, bool) {
	n := tokens(r)
	if n < 2 {
		return 0, false
	}
	return ms(r.LastContentNs-r.FirstTokenNs) / float64(n-1), true
}

func tpsPerUser(r schema.RequestRecord) (float64, bool) {
	v, ok := itlMs(r)
	if !ok || v <= 0 {
		return 0, false
	}
	return 1000 / v, true
}
