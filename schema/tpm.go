package schema

// Schema names of the TPM and cost records.
const (
	SchemaTPMSummary = "tpm_summary_v1" // tpm_summary.json
	SchemaTPM        = "tpm_v1"         // one TPM operating point (lake table tpm_v1)
	SchemaCost       = "cost_v1"        // one cost operating point (lake table cost_v1)
)

// TPM operating-point kinds: the warm best case and the customer-commitment number.
const (
	TPMPointPeak = "peak" // max output tok/s/GPU of the group
	TPMPointSLA  = "sla"  // max output tok/s/GPU among rows meeting TTFT and TPOT SLAs
)

// TPMGroupKey identifies one TPM group: what a capacity number is a number for.
// Shape is part of the key so a group never mixes ISL/OSL workloads.
type TPMGroupKey struct {
	Model            string `json:"model"`
	Hardware         string `json:"hardware"`
	Quant            string `json:"quant"`
	TensorParallel   int    `json:"tensor_parallel"`
	ParallelStrategy string `json:"parallel_strategy"`
	MTP              bool   `json:"mtp"`
	Shape            string `json:"shape"`
}

// TPMRow is one operating point of a TPM group (schema tpm_v1; a row of the lake table).
// TPM = tokens per minute = tok/s × 60; per GPU, per replica (× tensor_parallel GPUs) and per
// node (× gpus_per_node). Total (input+output) values are null when input tokens are unknown.
type TPMRow struct {
	Schema   string `json:"schema"` // tpm_v1
	Campaign string `json:"campaign"`
	Point    string `json:"point"` // peak, sla
	TPMGroupKey

	CellID      string `json:"cell_id"`
	Concurrency int    `json:"concurrency"`   // the point's concurrency, or a rate point's in-flight cap
	Load        Load   `json:"load,omitzero"` // a rate point's key (r2.5-cap64); absent on a concurrency point
	CacheMode   string `json:"cache_mode"`    // warm, cold, or empty when undeclared
	Engine      string `json:"engine,omitempty"`
	Delivery    string `json:"delivery,omitempty"`
	GPUsPerNode int    `json:"gpus_per_node"`

	MeanISL   *float64 `json:"mean_isl"` // mean input tokens of the chosen point (the workload it was measured at)
	MeanOSL   *float64 `json:"mean_osl"` // mean output tokens of the chosen point
	TTFTAvgMs *float64 `json:"ttft_avg_ms"`
	TPOTAvgMs *float64 `json:"tpot_avg_ms"` // = ITL avg
	TTFTSLAMs float64  `json:"ttft_sla_ms"` // the thresholds the sla point was chosen under
	TPOTSLAMs float64  `json:"tpot_sla_ms"`

	OutputTokPerSPerGPU float64  `json:"output_tok_s_per_gpu"`
	TotalTokPerSPerGPU  *float64 `json:"total_tok_s_per_gpu"`

	OutputTPMPerGPU     float64  `json:"output_tpm_per_gpu"`
	OutputTPMPerReplica float64  `json:"output_tpm_per_replica"`
	OutputTPMPerNode    float64  `json:"output_tpm_per_node"`
	TotalTPMPerGPU      *float64 `json:"total_tpm_per_gpu"`
	TotalTPMPerReplica  *float64 `json:"total_tpm_per_replica"`
	TotalTPMPerNode     *float64 `json:"total_tpm_per_node"`

	Flags []string `json:"flags,omitempty"` // the chosen atlas row's flags (e.g. steady_window_undercount)
}

// PointLoad is the row's point: its load, or the concurrency point.
func (t *TPMRow) PointLoad() Load { return LoadOf(t.Load, t.Concurrency, 0) }

// CostRow is the economics of one TPM operating point (schema cost_v1; a row of the lake table).
// $/1M tokens = $/GPU-hour ÷ (tok/s/GPU × 3600) × 1e6. Tokens per watt come from DCGM power
// only: a cost: block cannot synthesize them.
type CostRow struct {
	Schema   string `json:"schema"` // cost_v1
	Campaign string `json:"campaign"`
	Point    string `json:"point"` // peak, sla
	TPMGroupKey

	CellID      string `json:"cell_id"`
	Concurrency int    `json:"concurrency"`
	Load        Load   `json:"load,omitzero"` // a rate point's key; absent on a concurrency point

	USDPerGPUHour  *float64 `json:"usd_per_gpu_hour"` // null when no rate is known for the hardware
	RateEstimate   bool     `json:"rate_estimate"`    // the rate is an estimate (GB300: no public list rate)
	RateSource     string   `json:"rate_source"`      // campaign (cost: block) or catalog (with its source)
	USDPer1MOutput *float64 `json:"usd_per_1m_output"`
	USDPer1MTotal  *float64 `json:"usd_per_1m_total"`

	PowerWattsPerGPU *float64 `json:"power_watts_per_gpu"`
	TokensPerWatt    *float64 `json:"tokens_per_watt"`
}

// TPMGroup is one group's peak and SLA points with their economics.
type TPMGroup struct {
	TPMGroupKey
	Peak     TPMRow   `json:"peak"`
	PeakCost CostRow  `json:"peak_cost"`
	SLA      *TPMRow  `json:"sla"`      // null when no row meets the SLA or the rows carry no decode metric
	SLACost  *CostRow `json:"sla_cost"` // null exactly when SLA is
	SLANote  string   `json:"sla_note,omitempty"`
	Rows     int      `json:"rows"` // atlas rows the group was chosen from
}

// TPMSummary is tpm_summary.json: the TPM and cost rollup of a campaign's atlas.
type TPMSummary struct {
	Schema      string     `json:"schema"` // tpm_summary_v1
	Campaign    string     `json:"campaign"`
	Caveat      string     `json:"caveat"` // warm/cold and ISL/OSL caveat every TPM number carries
	TTFTSLAMs   float64    `json:"ttft_sla_ms"`
	TPOTSLAMs   float64    `json:"tpot_sla_ms"`
	GPUsPerNode int        `json:"gpus_per_node"`
	Groups      []TPMGroup `json:"groups"`
	// MeasurementCost is what measuring the campaign took (requests, endpoint seconds,
	// GPU-seconds), in total and per cell: the sum over its measured atlas rows. Absent when
	// no row was measured by perfdag (an imported or fixture atlas).
	MeasurementCost *CampaignCost `json:"measurement_cost,omitempty"`
}

// TPMRows flattens the summary into tpm_v1 rows (peak, then sla when set, per group).
func (s TPMSummary) TPMRows() []TPMRow {
	var out []TPMRow
	for _, g := range s.Groups {
		out = append(out, g.Peak)
		if g.SLA != nil {
			out = append(out, *g.SLA)
		}
	}
	return out
}

// CostRows flattens the summary into cost_v1 rows (peak, then sla when set, per group).
func (s TPMSummary) CostRows() []CostRow {
	var out []CostRow
	for _, g := range s.Groups {
		out = append(out, g.PeakCost)
		if g.SLACost != nil {
			out = append(out, *g.SLACost)
		}
	}
	return out
}
