package autostop

import (
	"math"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/interval"
	"github.com/perfdag/perfdag/steps/measure/stats"
)

const phaseProfiling = stats.PhaseProfiling

// metric is how one watchable metric is bounded: its per-request values (valid profiling
// requests, in issue order) and the interval made from them.
type metric struct {
	values func(valid []schema.RequestRecord) []float64
	q      float64 // the quantile for a percentile; 0 for a mean
	ratio  bool    // Σ output tokens / Σ time between starts (output_token_throughput)
}

// metrics are schema.AutoMetrics' implementations (a test checks the two lists agree).
var metrics = map[string]metric{
	"ttft_avg_ms":             {values: each(ttftMs)},
	"ttft_p50_ms":             {values: each(ttftMs), q: 0.5},
	"ttft_p90_ms":             {values: each(ttftMs), q: 0.9},
	"ttfo_avg_ms":             {values: each(ttfoMs)},
	"itl_avg_ms":              {values: each(itlMs)},
	"itl_p50_ms":              {values: each(itlMs), q: 0.5},
	"request_latency_avg_ms":  {values: each(latencyMs)},
	"request_latency_p50_ms":  {values: each(latencyMs), q: 0.5},
	"request_latency_p90_ms":  {values: each(latencyMs), q: 0.9},
	"tps_per_user":            {values: each(tpsPerUser)},
	"output_token_throughput": {ratio: true},
}

// series is the metric's per-request values over records (only valid profiling requests
// count), and for a ratio the paired denominators.
func (m metric) series(records []schema.RequestRecord) (xs, den []float64) {
	valid := make([]schema.RequestRecord, 0, len(records))
	for _, r := range records {
		if (r.Phase == "" || r.Phase == phaseProfiling) && stats.Class(r) == "" {
			valid = append(valid, r)
		}
	}
	if m.ratio {
		return throughputPairs(valid)
	}
	return m.values(valid), nil
}

// interval bounds the metric on records with the interval package (10 to 20 batches).
func (m metric) interval(records []schema.RequestRecord) (schema.Interval, bool) {
	xs, den := m.series(records)
	switch {
	case m.ratio:
		return interval.Ratio(xs, den)
	case m.q > 0:
		return interval.Quantile(xs, m.q)
	}
	return interval.Mean(xs)
}

// consistent bounds the metric on records with ⌊√n⌋ batches (the stopping rule's interval).
func (m metric) consistent(records []schema.RequestRecord) (schema.Interval, bool) {
	xs, den := m.series(records)
	return consistent(xs, m.q, den)
}

// need is the fewest values the metric's interval is made from.
func (m metric) need() int {
	if m.q == 0 {
		return interval.MinSamples
	}
	n := interval.MinSamples
	for interval.QuantileBatches(n, m.q) == 0 {
		n++
	}
	return n
}

// each turns a per-request value (ok false: the request has none) into a values func.
func each(f func(schema.RequestRecord) (float64, bool)) func([]schema.RequestRecord) []float64 {
	return func(valid []schema.RequestRecord) []float64 {
		out := make([]float64, 0, len(valid))
		for _, r := range valid {
			if v, ok := f(r); ok {
				out = append(out, v)
			}
		}
		return out
	}
}

func ms(ns int64) float64 { return float64(ns) / 1e6 }

func ttftMs(r schema.RequestRecord) (float64, bool) { return ms(r.FirstTokenNs - r.StartNs), true }

func ttfoMs(r schema.RequestRecord) (float64, bool) {
	return ms(r.FirstOutputNs - r.StartNs), r.FirstOutputNs != 0
}

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

// throughputPairs pairs each valid request's output tokens with the seconds from its start to
// the next one's (the last: to its last content), so Σden spans the window, as
// interval.Ratio expects for output_token_throughput.
func throughputPairs(valid []schema.RequestRecord) (num, den []float64) {
	num, den = make([]float64, len(valid)), make([]float64, len(valid))
	for i, r := range valid {
		num[i] = float64(tokens(r))
		end := r.LastContentNs
		if i+1 < len(valid) {
			end = valid[i+1].StartNs
		}
		den[i] = math.Max(float64(end-r.StartNs), 0) / 1e9
	}
	return num, den
}
