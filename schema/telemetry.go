package schema

// SpecWindow is what scrape-spec measured around one point (cells/<id>/spec_metrics/c<N>.json):
// speculative-decoding acceptance over the window and the server-metric deltas baselines need.
// Null means the server did not export the counter (absent is not zero).
type SpecWindow struct {
	Schema      string `json:"schema"` // spec_window_v1
	Cell        string `json:"cell"`
	Load        Load   `json:"load,omitzero"` // the point; absent on windows written before points were keyed by load
	Concurrency int    `json:"concurrency"`
	Source      string `json:"source"` // vllm, sglang, none

	Drafts           *float64 `json:"drafts"`            // Δ spec_decode_num_drafts
	DraftTokens      *float64 `json:"draft_tokens"`      // Δ spec_decode_num_draft_tokens
	AcceptedTokens   *float64 `json:"accepted_tokens"`   // Δ spec_decode_num_accepted_tokens
	AcceptanceLength *float64 `json:"acceptance_length"` // 1 + accepted / drafts; null without drafts
	SpecAcceptRate   *float64 `json:"spec_accept_rate"`  // accepted / draft tokens; null without drafts

	PrefixCacheHitRatePre  *float64 `json:"prefix_cache_hit_rate_pre"`  // cumulative hits/queries at the before scrape
	PrefixCacheHitRatePost *float64 `json:"prefix_cache_hit_rate_post"` // cumulative hits/queries at the after scrape
	PrefixCacheHitRate     *float64 `json:"prefix_cache_hit_rate"`      // Δhits / Δqueries over the window
	KVCacheUsagePeak       *float64 `json:"kv_cache_usage_peak"`        // max of the KV usage gauge (0–1) seen in the window
	RunningRequestsPeak    *float64 `json:"num_requests_running_peak"`  // max of the running-requests gauge in the window
	GenerationTokens       *float64 `json:"generation_tokens"`          // Δ generation tokens counter
	AvgGenerationTokPerS   *float64 `json:"avg_generation_throughput_toks_per_s"`
	WindowS                float64  `json:"window_s"`
	BeforeFile             string   `json:"before_file,omitempty"` // raw scrape, relative to the cell dir
	AfterFile              string   `json:"after_file,omitempty"`
}

// DCGMPoint holds the window means of one point's DCGM fields, averaged over GPUs.
type DCGMPoint struct {
	Load             Load     `json:"load,omitzero"` // a rate point's key; absent on a closed-loop point (PointLoad)
	Concurrency      int      `json:"concurrency"`   // the concurrency, or a rate point's in-flight cap
	StartNs          int64    `json:"start_ns"`
	EndNs            int64    `json:"end_ns"`
	GPUs             int      `json:"gpus"`
	Samples          int      `json:"samples"`          // samples per GPU the means rest on (0 for frozen window means)
	SMActive         *float64 `json:"sm_active"`        // ratio 0–1
	SMOccupancy      *float64 `json:"sm_occupancy"`     // ratio 0–1
	TensorActive     *float64 `json:"tensor_active"`    // ratio 0–1
	DRAMActive       *float64 `json:"dram_active"`      // ratio 0–1
	GREngineActive   *float64 `json:"gr_engine_active"` // ratio 0–1
	NVLinkBytesPerS  *float64 `json:"nvlink_bytes_s"`   // TX + RX, bytes/s per GPU
	PCIeBytesPerS    *float64 `json:"pcie_bytes_s"`     // TX + RX, bytes/s per GPU
	PowerWattsPerGPU *float64 `json:"power_watts_per_gpu"`
	TokensPerWatt    *float64 `json:"tokens_per_watt"` // output tok/s ÷ (power per GPU × GPUs)
}

// PointLoad is the point the means belong to: its load, or the concurrency point.
func (p DCGMPoint) PointLoad() Load { return LoadOf(p.Load, p.Concurrency, 0) }

// DCGMCorrelation is cells/<id>/dcgm_correlation.json (schema dcgm_correlation_v1).
type DCGMCorrelation struct {
	Schema       string      `json:"schema"` // dcgm_correlation_v1
	Cell         string      `json:"cell"`
	Source       string      `json:"source"` // frozen, prometheus, exporter
	SourceDetail string      `json:"source_detail,omitempty"`
	Points       []DCGMPoint `json:"points"`
	DCGMGrounded bool        `json:"dcgm_grounded"`
	SolRigor     string      `json:"sol_rigor"` // L3 when grounded
}
