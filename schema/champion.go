package schema

// SchemaChampion names champion.json.
const SchemaChampion = "champion_v1"

// Rigor ladder levels (sol_rigor) a number can stand on; see steps/analysis/champion for definitions.
const (
	RigorL1 = "L1" // throughput only
	RigorL2 = "L2" // DCGM duty-cycle proxy
	RigorL3 = "L3" // byte-grounded DCGM
	RigorL4 = "L4" // kernel-level profile
)

// ChampionArm is one arm's summary: its best point under the TPOT SLO and its rigor.
type ChampionArm struct {
	Arm           string   `json:"arm"`
	Engine        string   `json:"engine"`
	EngineVersion string   `json:"engine_version,omitempty"`
	Delivery      string   `json:"delivery"`
	Baseline      bool     `json:"baseline"`
	Cells         []string `json:"cells"`
	Rank          int      `json:"rank"` // 1 = best under the focus metric; 0 = no point meets the SLO

	Points          int      `json:"points"`            // plot-ready points of the arm
	PointsMeetSLO   int      `json:"points_meet_slo"`   // of which meet the TPOT SLO
	FocusValue      *float64 `json:"focus_value"`       // best focus metric among points meeting the SLO
	CellID          string   `json:"cell_id,omitempty"` // where the best point is
	Concurrency     int      `json:"concurrency,omitempty"`
	TPOTMs          *float64 `json:"tpot_ms"`
	TTFTAvgMs       *float64 `json:"ttft_avg_ms"`
	OutputTokPerGPU *float64 `json:"output_tok_s_per_gpu"`
	// GoodputReqS and SLOAttainment are the best point's goodput and SLO attainment under
	// its cell's per-request slo; absent when the cell declares none.
	GoodputReqS     *float64 `json:"goodput_req_s,omitempty"`
	SLOAttainment   *float64 `json:"slo_attainment,omitempty"`
	DeltaVsBaseline *float64 `json:"delta_vs_baseline_pct"` // (value − baseline) ÷ baseline × 100
	// FocusInterval is the 95 % interval of FocusValue at the best point, so a reader sees whether
	// the ranking is beyond noise; nil when the point carries none (docs/champion.md).
	FocusInterval *Interval `json:"focus_interval,omitempty"`

	SolRigor  string `json:"sol_rigor"`  // L1..L4
	RigorNote string `json:"rigor_note"` // what the level rests on, in words
}

// Champion is champion.json: the ranked baseline + top-X arms and the production recommendation.
type Champion struct {
	Schema      string  `json:"schema"` // champion_v1
	Campaign    string  `json:"campaign"`
	FocusMetric string  `json:"focus_metric"` // atlas field, e.g. output_tok_s_per_gpu
	TPOTSLOMs   float64 `json:"tpot_slo_ms"`
	// SLO is the per-request slo every arm's cells declare, when the arms were ranked by
	// goodput under it (a goodput focus metric): tpot_slo_ms then filtered nothing.
	SLO            *SLO          `json:"slo,omitempty"`
	TopX           int           `json:"top_x"`
	Baseline       string        `json:"baseline"` // baseline arm, empty when none is marked
	Champion       string        `json:"champion"` // winning arm, empty when no arm meets the SLO
	Delivery       string        `json:"delivery"` // the delivery the recommendation is evidence for
	Arms           []ChampionArm `json:"arms"`     // baseline first, then the top-X arms by rank
	ArmsConsidered int           `json:"arms_considered"`
	Recommendation string        `json:"recommendation"`
	// Separated says whether the top two ranked arms' focus values differ beyond noise (the
	// difference's 95 % interval excludes 0); null when unknown (an arm without an interval, or
	// fewer than two ranked arms). SeparationNote says which, in words.
	Separated      *bool    `json:"separated"`
	SeparationNote string   `json:"separation_note,omitempty"`
	Warnings       []string `json:"warnings,omitempty"`
}
