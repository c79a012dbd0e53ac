package schema

// Interval is a 95 % confidence interval of one headline metric of a point, so every decision
// made on that metric (a baseline RED, a champion, a stopping rule) can tell a change from noise.
type Interval struct {
	Lo     float64 `json:"lo"`
	Hi     float64 `json:"hi"`
	Method string  `json:"method"` // how it was made, e.g. batch-means, sectioning (docs/statistics.md)
	N      int     `json:"n"`      // batches (or resamples) the interval rests on
	// ESS is the effective sample size: the values over their integrated autocorrelation time
	// (Geyer's initial monotone sequence; for a quantile, of the indicator series at it), what
	// the correlated values are worth as independent ones; 0 when not estimated.
	ESS float64 `json:"ess,omitempty"`
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

// Verdicts of a decision on an SLO.
const (
	VerdictMeets     = "meets"     // every clause holds at the decision's confidence
	VerdictMisses    = "misses"    // some clause fails at the decision's confidence
	VerdictUndecided = "undecided" // max requests came first: the verdict is not known at that confidence
)

// Clause verdicts within a decision.
const (
	ClauseHolds   = "holds"
	ClauseFails   = "fails"
	ClauseUnknown = "unknown"
)

// Decision is how a point with requests_per_point {auto: {decide: ...}} reached its verdict on
// an SLO: per clause the bound that decided it and that bound's confidence, and what it cost,
// so a reader sees that "meets" is known at 95 %, not just read off a noisy value.
type Decision struct {
	Rule    string           `json:"rule"`    // the SLO decided
	Verdict string           `json:"verdict"` // meets, misses or undecided
	Clauses []DecisionClause `json:"clauses"`
	// Alpha is the chance allowed of a wrong verdict, over every look and clause (0.05).
	Alpha float64 `json:"alpha"`
	Looks int     `json:"looks"` // looks made
	// MaxLooks is how many looks the schedule could make up to max: the looks alpha is split over.
	MaxLooks int    `json:"max_looks"`
	Requests int    `json:"requests"` // requests measured
	Method   string `json:"method"`   // how the looks' bounds are made and alpha is spent (docs/statistics.md)
	// Reference names what a decide: baseline point decided against ("baseline NAME sha256:…");
	// each clause then bounds a metric against the baseline's value moved by its tolerance.
	Reference string `json:"reference,omitempty"`
}

// DecisionClause is one clause of a decided SLO (metric op threshold) at the deciding look: the
// metric's one-sided bounds, each at its own confidence, and whether the clause holds, fails or
// is not known. A count clause (error_count == 0) is decided by the count: no bounds.
type DecisionClause struct {
	Clause    string   `json:"clause"`
	Metric    string   `json:"metric"`
	Op        string   `json:"op"`
	Threshold float64  `json:"threshold"`
	Verdict   string   `json:"verdict"`            // holds, fails or unknown
	Value     float64  `json:"value"`              // the estimate (a count clause: the count) at the deciding look
	Lo        *float64 `json:"lo,omitempty"`       // lower bound at LoLevel
	Hi        *float64 `json:"hi,omitempty"`       // upper bound at HiLevel
	LoLevel   float64  `json:"lo_level,omitempty"` // one-sided confidence of Lo (e.g. 0.9975)
	HiLevel   float64  `json:"hi_level,omitempty"`
	Batches   int      `json:"batches,omitempty"` // batches the bounds rest on
	ESS       float64  `json:"ess,omitempty"`     // effective sample size of the metric's series
	// Baseline is the diff's metric name (ttft_p50_ms, throughput_toks_per_s, ...) a decide:
	// baseline clause judges; its threshold is the baseline's value moved by the tolerance, and
	// its bounds include the baseline's own uncertainty (in quadrature).
	Baseline string `json:"baseline,omitempty"`
}

// Known reports whether the decision reached a verdict (meets or misses).
func (d *Decision) Known() bool {
	return d != nil && (d.Verdict == VerdictMeets || d.Verdict == VerdictMisses)
}
