package schema

// Interval is a 95 % confidence interval of one headline metric of a point, so every decision
// made on that metric (a baseline RED, a champion, a stopping rule) can tell a change from noise.
type Interval struct {
	Lo     float64 `json:"lo"`
	Hi     float64 `json:"hi"`
	Method string  `json:"method"` // how it was made, e.g. batch-means, sectioning (docs/statistics.md)
	N      int     `json:"n"`      // batches (or resamples) the interval rests on
}

// HalfWidth is half the interval's width, the ± a report prints.
func (iv Interval) HalfWidth() float64 { return (iv.Hi - iv.Lo) / 2 }

// Contains reports whether v lies inside the interval, ends included.
func (iv Interval) Contains(v float64) bool { return v >= iv.Lo && v <= iv.Hi }

// Intervals are a point's (or an atlas row's) intervals keyed by the atlas metric name they
// bound (ttft_p50_ms, itl_avg_ms, output_tok_s, ...); a metric without one is absent.
type Intervals map[string]Interval

// AutoStop says why a point with requests_per_point auto stopped measuring, so a reader sees
// whether the asked precision was reached or the request cap cut it short.
type AutoStop struct {
	Metric   string  `json:"metric"`   // the atlas metric the rule watched
	RelCI    float64 `json:"rel_ci"`   // asked relative half-width
	Achieved float64 `json:"achieved"` // half-width ÷ |estimate| at the stop
	Batches  int     `json:"batches"`  // measuring batches sent
	Requests int     `json:"requests"` // requests measured
	Reason   string  `json:"reason"`   // "precision reached", "max requests", ...
}
