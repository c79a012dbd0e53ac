package schema

// AtlasRow is one (cell, point) row of atlas.jsonl (schema atlas_v1): the identity of what
// was measured, the point metrics, and the telemetry joined onto it. Null means unmeasured.
type AtlasRow struct {
	Schema   string `json:"schema"` // atlas_v1
	Campaign string `json:"campaign"`
	CellID   string `json:"cell_id"`
	// Load is the point's key (c16, r2.5-cap64); "" on rows written before points were keyed
	// by load (PointLoad reads those).
	Load Load `json:"load"`
	// Concurrency is a closed-loop point's concurrency, or a rate point's in-flight cap (0: none).
	Concurrency int `json:"concurrency"`
	// RequestRate is a rate point's asked requests per second (0 on a closed-loop point).
	RequestRate float64 `json:"request_rate,omitempty"`

	Model               string `json:"model"`
	Hardware            string `json:"hardware"`
	Quant               string `json:"quant"`
	TensorParallel      int    `json:"tensor_parallel"`
	ParallelStrategy    string `json:"parallel_strategy"`
	MTP                 bool   `json:"mtp"`
	MaxNumBatchedTokens int    `json:"max_num_batched_tokens"`
	Engine              string `json:"engine"`
	EngineVersion       string `json:"engine_version,omitempty"`
	Delivery            string `json:"delivery"`
	Shape               string `json:"shape"`
	CacheMode           string `json:"cache_mode"`
	Arm                 string `json:"arm,omitempty"`
	Baseline            bool   `json:"baseline,omitempty"`
	Backend             string `json:"backend"` // perfdag, roofline-import, fixture
	GPUs                int    `json:"gpus"`

	CellStatus string `json:"cell_status"` // full, partial, failed
	PlotReady  bool   `json:"plot_ready"`  // the point has valid latency and throughput numbers

	NumPrompts   int `json:"num_prompts"`
	RequestCount int `json:"request_count"`
	ErrorCount   int `json:"error_count"`

	// Intervals are the point's 95 % confidence intervals of its headline metrics, by field name.
	Intervals Intervals `json:"intervals,omitempty"`
	// MeasurementCost is what measuring the point took (Point.MeasurementCost).
	MeasurementCost *MeasurementCost `json:"measurement_cost,omitempty"`
	// Decision is the point's SLO decision, when it measured until one was known (Point.Decision).
	Decision *Decision `json:"decision,omitempty"`

	TTFTAvgMs           *float64 `json:"ttft_avg_ms"`
	TTFTP50Ms           *float64 `json:"ttft_p50_ms"`
	TTFTP90Ms           *float64 `json:"ttft_p90_ms"`
	TTFTP95Ms           *float64 `json:"ttft_p95_ms"`
	TTFTP99Ms           *float64 `json:"ttft_p99_ms"`
	TTFOAvgMs           *float64 `json:"ttfo_avg_ms"`
	TTFOCoverage        *float64 `json:"ttfo_coverage"`
	ITLAvgMs            *float64 `json:"itl_avg_ms"` // = TPOT
	ITLP50Ms            *float64 `json:"itl_p50_ms"`
	ITLP99Ms            *float64 `json:"itl_p99_ms"`
	RequestLatencyAvgMs *float64 `json:"request_latency_avg_ms"`
	RequestLatencyP50Ms *float64 `json:"request_latency_p50_ms"`
	RequestLatencyP99Ms *float64 `json:"request_latency_p99_ms"`
	RequestThroughput   *float64 `json:"request_throughput"` // req/s
	OutputTokPerS       *float64 `json:"output_tok_s"`       // Σ OSL / window
	TotalTokPerS        *float64 `json:"total_tok_s"`        // (Σ ISL + Σ OSL) / window
	OutputTokPerSPerGPU *float64 `json:"output_tok_s_per_gpu"`
	TotalTokPerSPerGPU  *float64 `json:"total_tok_s_per_gpu"`
	TokPerSPerUser      *float64 `json:"tok_s_per_user"` // mean of 1/ITL
	AAOutputSpeed       *float64 `json:"aa_output_speed"`
	MeanInputTokens     *float64 `json:"mean_input_tokens"`
	MeanOutputTokens    *float64 `json:"mean_output_tokens"`
	ReasoningTokenAvg   *float64 `json:"reasoning_token_avg"`
	ReasoningField      string   `json:"reasoning_field,omitempty"`
	// TokenBasis is what the token metrics count: server (usage), o200k_base, tokenizer:<file>,
	// or imported:<source> <what it counted> on an imported point (schema.ImportedBasis); empty
	// on rows from sources that did not say (fixtures, points written before the field).
	TokenBasis string `json:"token_basis,omitempty"`
	// TokenBasisFallbacks counts valid requests without their basis's counts (no usage, no
	// tokenizer count) that were counted on o200k_base; nil when none.
	TokenBasisFallbacks *int `json:"token_basis_fallbacks,omitempty"`
	// AIPerf's usage_*_diff_pct: mean (server − client) / client × 100, the client counting with
	// the tokenizer file on a tokenizer basis, else o200k_base; nil without usage.
	UsagePromptDiffPct     *float64 `json:"usage_prompt_diff_pct,omitempty"`
	UsageCompletionDiffPct *float64 `json:"usage_completion_diff_pct,omitempty"`
	UsageReasoningDiffPct  *float64 `json:"usage_reasoning_diff_pct,omitempty"`
	TruncatedPrompts       *int     `json:"truncated_prompts,omitempty"` // requests whose prompt the server cut; nil when none
	Retries                *int     `json:"retries,omitempty"`           // requests retried after a stale connection; nil when none
	// UsagePromptUnknown counts valid requests whose usage stated no prompt count
	// (prompt_tokens absent or 0); nil when none.
	UsagePromptUnknown *int `json:"usage_prompt_unknown,omitempty"`
	// ErrorMessages are the distinct redacted server messages per error class (at most 5 each).
	ErrorMessages map[string][]string `json:"error_messages,omitempty"`
	// TTFTMinusServerPromptP50Ms is the p50 of client TTFT − the server's timings.prompt_ms: the
	// time outside prompt processing (queueing, network); nil when the server sent no timings.
	TTFTMinusServerPromptP50Ms *float64 `json:"ttft_minus_server_prompt_p50_ms,omitempty"`
	// SLOAttainment and GoodputReqS judge the point's requests against its cell's per-request
	// slo (Point.SLOAttainment, Point.GoodputReqS); absent when the cell declares none, and when
	// an imported file stated no per-request times. Their intervals are in Intervals.
	SLOAttainment *float64 `json:"slo_attainment,omitempty"`
	GoodputReqS   *float64 `json:"goodput_req_s,omitempty"`
	// Goodput is what they are made from: the targets, the requests judged, the good ones and
	// the misses by target (Point.Goodput); absent when the cell declares no slo.
	Goodput *Goodput `json:"goodput,omitempty"`

	AcceptanceLength   *float64 `json:"acceptance_length"`
	SpecAcceptRate     *float64 `json:"spec_accept_rate"`
	PrefixCacheHitRate *float64 `json:"prefix_cache_hit_rate"`

	SMActive         *float64 `json:"dcgm_sm_active"`
	SMOccupancy      *float64 `json:"dcgm_sm_occupancy"`
	TensorActive     *float64 `json:"dcgm_tensor_active"`
	DRAMActive       *float64 `json:"dcgm_dram_active"`
	GREngineActive   *float64 `json:"dcgm_gr_engine_active"`
	NVLinkBytesPerS  *float64 `json:"dcgm_nvlink_bytes_s"`
	PCIeBytesPerS    *float64 `json:"dcgm_pcie_bytes_s"`
	PowerWattsPerGPU *float64 `json:"power_watts_per_gpu"`
	TokensPerWatt    *float64 `json:"tokens_per_watt"`
	DCGMGrounded     bool     `json:"dcgm_grounded"`
	SolRigor         string   `json:"sol_rigor"` // L1..L4

	Flags []string `json:"flags,omitempty"` // steady_window_undercount, reasoning_parser_suspect, usage_mismatch, evicted, ...
	// Gates are the quality gates that did not pass on this point (or its cell), warn or fail:
	// evidence beside the numbers. A point that fails a gate is still measured data.
	Gates []GateVerdict  `json:"gates,omitempty"`
	Extra map[string]any `json:"extra,omitempty"`
}

// PointLoad is the row's point: its load, or for a row written before points were keyed by
// load, its concurrency — capped at that concurrency, the rate its extra map names when the
// cell ran open loop (extra.request_rate).
func (r *AtlasRow) PointLoad() Load {
	rate, _ := r.Extra["request_rate"].(float64)
	if r.RequestRate > 0 {
		rate = r.RequestRate
	}
	return LoadOf(r.Load, r.Concurrency, rate)
}

// GateFailed reports whether a fail-severity gate did not pass on the row.
func (r *AtlasRow) GateFailed() bool {
	for _, v := range r.Gates {
		if v.Failing() {
			return true
		}
	}
	return false
}

// Flag names carried on atlas rows.
const (
	FlagSteadyWindowUndercount = "steady_window_undercount"
	FlagReasoningParserSuspect = "reasoning_parser_suspect"
	FlagUsageMismatch          = "usage_mismatch"
	FlagUsageDiscrepancy       = "usage_discrepancy"  // some mean |usage_*_diff_pct| > 10 % (AIPerf's threshold)
	FlagTruncatedPrompts       = "truncated_prompts"  // the server cut some prompts: ISL received < asked
	FlagProtocolViolation      = "protocol_violation" // the server broke the streaming protocol (see point violations)
	FlagNoEngineMetrics        = "no_engine_metrics"  // /metrics was scraped but no known engine family was in it
	FlagClientBound            = "client_bound"       // the point's client was its bottleneck (Point.ClientBound)
	FlagRateShort              = "rate_short"         // an open-loop point sent more than 5 % below its schedule (OpenLoop.RateMet false): it meets no SLO at its asked rate
)

// MetricsFamiliesNone is a point's metrics_families when /metrics was scraped and held no known
// engine family: the report says so instead of showing empty engine columns.
const MetricsFamiliesNone = "none"

// F returns a pointer to v, for the nullable fields of records.
func F(v float64) *float64 { return &v }
