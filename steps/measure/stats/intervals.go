package stats

import (
	"cmp"
	"slices"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/interval"
)

// quantileKeys are the atlas metrics bounded by a sectioning interval, by series and quantile.
var quantileKeys = []struct {
	key    string
	series int // index into the per-request series of pointIntervals
	q      float64
}{
	{"ttft_p50_ms", seriesTTFT, 0.50}, {"ttft_p90_ms", seriesTTFT, 0.90},
	{"ttft_p95_ms", seriesTTFT, 0.95}, {"ttft_p99_ms", seriesTTFT, 0.99},
	{"itl_p50_ms", seriesITL, 0.50}, {"itl_p99_ms", seriesITL, 0.99},
	{"request_latency_p50_ms", seriesLatency, 0.50}, {"request_latency_p99_ms", seriesLatency, 0.99},
}

// meanKeys are the atlas metrics bounded by a batch-means interval of a per-request mean.
var meanKeys = []struct {
	key    string
	series int
}{
	{"ttft_avg_ms", seriesTTFT}, {"itl_avg_ms", seriesITL},
	{"request_latency_avg_ms", seriesLatency}, {"tok_s_per_user", seriesTPS},
}

const (
	seriesTTFT = iota
	seriesITL
	seriesLatency
	seriesTPS
	nSeries
)

// pointIntervals makes the 95 % intervals of the point's headline metrics (docs/statistics.md)
// from its valid requests in start order, keyed by atlas field name; a metric whose series is
// too short, or whose batches would be shorter than the requests in flight, has none. The
// throughputs (Σ per request / window) get one only when the window is the records' own span
// (windowGiven false): each request's time span runs to the next request's start.
func pointIntervals(valid []schema.RequestRecord, counts []tokenCount, winEnd int64, windowGiven bool) schema.Intervals {
	if len(valid) == 0 {
		return nil
	}
	order := make([]int, len(valid))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(valid[a].StartNs, valid[b].StartNs) })
	var series [nSeries][]float64
	tokens, ones, spans := make([]float64, len(order)), make([]float64, len(order)), make([]float64, len(order))
	latencyS := 0.0
	for j, i := range order {
		r := valid[i]
		t, l := ms(r.FirstTokenNs-r.StartNs), ms(r.LastContentNs-r.StartNs)
		n := counts[i].output + counts[i].reasoning
		series[seriesTTFT] = append(series[seriesTTFT], t)
		series[seriesLatency] = append(series[seriesLatency], l)
		if v, ok := itlOf(t, l, n); ok {
			series[seriesITL] = append(series[seriesITL], v)
			if v > 0 {
				series[seriesTPS] = append(series[seriesTPS], 1000/v)
			}
		}
		next := winEnd
		if j+1 < len(order) {
			next = valid[order[j+1]].StartNs
		}
		tokens[j], ones[j], spans[j] = float64(n), 1, float64(next-r.StartNs)/1e9
		latencyS += l / 1e3
	}
	window := float64(winEnd-valid[order[0]].StartNs) / 1e9
	if window <= 0 {
		return nil
	}
	b := interval.For(latencyS / window) // Little's law: mean requests in flight
	out := schema.Intervals{}
	for _, m := range meanKeys {
		if iv, ok := b.Mean(series[m.series]); ok {
			out[m.key] = iv
		}
	}
	for sr, xs := range series {
		var keys []string
		var qs []float64
		for _, m := range quantileKeys {
			if m.series == sr {
				keys, qs = append(keys, m.key), append(qs, m.q)
			}
		}
		for i, iv := range b.Quantiles(xs, qs...) {
			if iv.N > 0 {
				out[keys[i]] = iv
			}
		}
	}
	if !windowGiven {
		for key, num := range map[string][]float64{"output_tok_s": tokens, "request_throughput": ones} {
			if iv, ok := b.Ratio(num, spans); ok {
				out[key] = iv
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// itlOf is a request's inter-token latency (latency − TTFT) / (tokens − 1), ms; false below
// two tokens, where it is undefined.
func itlOf(ttft, latency float64, tokens int) (float64, bool) {
	if tokens < 2 {
		return 0, false
	}
	return (latency - ttft) / float64(tokens-1), true
}
