package campaigndir

import "github.com/perfdag/perfdag/schema"

// PointResult is what gates on a measured point read (run-shape's result): flat, named like
// the atlas, so a sweep's SLO and a gate read the same names.
type PointResult struct {
	Cell                   string      `json:"cell"`
	Load                   schema.Load `json:"load,omitzero"`          // the point; absent in results recorded before points were keyed by load
	Concurrency            int         `json:"concurrency"`            // the concurrency, or a rate point's in-flight cap (0: none)
	RequestRate            float64     `json:"request_rate,omitempty"` // a rate point's asked requests per second
	NumPrompts             int         `json:"num_prompts"`
	RequestCount           int         `json:"request_count"`
	ErrorCount             int         `json:"error_count"`
	Status                 string      `json:"status"` // ok, partial, failed
	TTFTAvgMs              *float64    `json:"ttft_avg_ms"`
	TTFTP50Ms              *float64    `json:"ttft_p50_ms"`
	TTFTP99Ms              *float64    `json:"ttft_p99_ms"`
	TTFOAvgMs              *float64    `json:"ttfo_avg_ms"`
	TTFOCoverage           float64     `json:"ttfo_coverage"`
	ITLAvgMs               *float64    `json:"itl_avg_ms"`
	ITLP50Ms               *float64    `json:"itl_p50_ms"`
	RequestLatencyP50Ms    *float64    `json:"request_latency_p50_ms"`
	RequestThroughput      float64     `json:"request_throughput"`
	OutputTokPerS          float64     `json:"output_tok_s"`
	OutputTokPerSPerGPU    float64     `json:"output_tok_s_per_gpu"`
	TokPerSPerUser         *float64    `json:"tok_s_per_user"`
	AAOutputSpeed          float64     `json:"aa_output_speed"`
	MeanISL                float64     `json:"mean_isl"`
	MeanOSL                float64     `json:"mean_osl"`
	WindowS                float64     `json:"window_s"`
	Reasoning              bool        `json:"reasoning"`
	ReasoningField         string      `json:"reasoning_field"`
	ReasoningParserSuspect bool        `json:"reasoning_parser_suspect"`
	SteadyWindowUndercount bool        `json:"steady_window_undercount"`
	UsageMismatches        int         `json:"usage_mismatches"`
	TokenBasis             string      `json:"token_basis"`       // server or o200k_base: what OSL, ITL and tok/s count
	UsageDiscrepancy       bool        `json:"usage_discrepancy"` // some |usage_*_diff_pct| > 10 %
	TruncatedPrompts       int         `json:"truncated_prompts"` // prompts the server cut
	Violations             int         `json:"violations"`        // protocol violations, all kinds
	Retries                int         `json:"retries"`           // requests retried after a stale idle connection
	ErrorClasses           []string    `json:"error_classes"`
	// MeasurementCost is what measuring the point took: requests sent, endpoint seconds and
	// GPU-seconds (nil on a point recorded before cost accounting, or imported).
	MeasurementCost *schema.MeasurementCost `json:"measurement_cost,omitempty"`
	// Decision is the point's SLO decision when it measured until one was known.
	Decision *schema.Decision `json:"decision,omitempty"`
	// SLOAttainment and GoodputReqS judge the requests against the cell's slo
	// (schema.Point): nil when it declares none, so a rule reading them is not evaluated.
	SLOAttainment *float64 `json:"slo_attainment"`
	GoodputReqS   *float64 `json:"goodput_req_s"`
	// Open-loop points only (nil on a closed loop, so a rule reading them is not evaluated;
	// schema.OpenLoop): RateMet is false on a rate_short point — its sends fell more than
	// schema.RateTolerancePct below its schedule — which never counts as meeting an SLO at its
	// asked rate; the *_sched_ms latencies run from each request's scheduled send.
	RateMet                  *bool    `json:"rate_met,omitempty"`
	RateShortfallPct         *float64 `json:"rate_shortfall_pct,omitempty"`
	AchievedRate             *float64 `json:"achieved_rate,omitempty"`
	TTFTSchedP50Ms           *float64 `json:"ttft_sched_p50_ms,omitempty"`
	TTFTSchedP99Ms           *float64 `json:"ttft_sched_p99_ms,omitempty"`
	RequestLatencySchedP50Ms *float64 `json:"request_latency_sched_p50_ms,omitempty"`
	// Files names what the point wrote, for the steps that read it (scrape-spec's second
	// half, dcgm-correlate, aggregate).
	Files PointFiles `json:"files"`
}

// PointFiles offers the point's files downstream.
func (r *PointResult) PointFiles() PointFiles { return r.Files }
