package schema

// Schema names of the roofline records.
const (
	SchemaRooflineSweep  = "roofline_sweep_v1"        // cells/<id>-decode/roofline_sweep.json
	SchemaRoofline       = "roofline_v1"              // one sweep point (lake table roofline_v1)
	SchemaProvenance     = "experiment_provenance_v1" // provenance.json of a roofline bundle
	SchemaModelShape     = "model_shape_v1"           // the analytical model embedded in a sweep
	RooflinePhaseDecode  = "decode"                   // decode concurrency sweep point
	RooflinePhasePrefill = "prefill"                  // prefill ISL sweep point
	RooflineBackend      = "roofline-import"          // AtlasRow.Backend of imported cells
	HBMBytesLabel        = "byte-grounded delivered HBM BW % (analytical bytes/step × measured steps/s ÷ peak)"
	DRAMActiveLabel      = "DCGM DRAM_ACTIVE duty-cycle proxy % (not bytes)"
)

// ModelShape is the analytical model read from a Hugging Face config.json, with the derived
// per-token figures the roofline page plots. Parameter counts are matmul parameters unless named
// otherwise; FLOP figures are forward FLOP (2 per multiply-add).
type ModelShape struct {
	Schema     string `json:"schema"` // model_shape_v1
	Source     string `json:"source"` // the config.json it was read from
	ModelType  string `json:"model_type,omitempty"`
	Attention  string `json:"attention"` // gqa, mla
	HiddenSize int    `json:"hidden_size"`
	Layers     int    `json:"num_hidden_layers"`
	Heads      int    `json:"num_attention_heads"`
	KVHeads    int    `json:"num_key_value_heads"`
	HeadDim    int    `json:"head_dim"`
	Inter      int    `json:"intermediate_size"`
	Vocab      int    `json:"vocab_size"`

	RoutedExperts   int `json:"n_routed_experts,omitempty"`
	ExpertsPerToken int `json:"num_experts_per_tok,omitempty"`
	SharedExperts   int `json:"n_shared_experts,omitempty"`
	MoEInter        int `json:"moe_intermediate_size,omitempty"`
	FirstKDense     int `json:"first_k_dense_replace,omitempty"`
	MoELayerFreq    int `json:"moe_layer_freq,omitempty"`
	MoELayers       int `json:"moe_layers"`
	DenseLayers     int `json:"dense_layers"`

	QLoRARank     int `json:"q_lora_rank,omitempty"`
	KVLoRARank    int `json:"kv_lora_rank,omitempty"`
	QKNopeHeadDim int `json:"qk_nope_head_dim,omitempty"`
	QKRopeHeadDim int `json:"qk_rope_head_dim,omitempty"`
	VHeadDim      int `json:"v_head_dim,omitempty"`

	TotalParams       int64   `json:"total_params"`            // every weight incl. embeddings and all experts
	ActiveParams      int64   `json:"active_params"`           // matmul params touched per decoded token (incl. LM head)
	DenseParams       int64   `json:"dense_params"`            // matmul params every token touches (attention, dense MLP, shared experts, router, LM head)
	ExpertParams      int64   `json:"expert_params"`           // params of one routed expert in one layer
	FLOPPerToken      float64 `json:"flop_per_token"`          // 2 × active params, before attention scores
	AttnFLOPPerCtxTok float64 `json:"attn_flop_per_ctx_token"` // decode attention-score FLOP per token of context
	KVElemsPerToken   int64   `json:"kv_elems_per_token"`      // KV cache elements stored per token (all layers)
}

// ExperimentProvenance is a roofline bundle's provenance.json: what code produced the numbers.
type ExperimentProvenance struct {
	Schema         string `json:"schema"` // experiment_provenance_v1
	Engine         string `json:"engine"`
	EngineVersion  string `json:"engine_version"`
	Commit         string `json:"commit,omitempty"`
	Delivery       string `json:"delivery"`
	Patch          string `json:"patch,omitempty"`
	SourceURL      string `json:"source_url,omitempty"`
	Model          string `json:"model"`
	Hardware       string `json:"hardware"`
	TensorParallel int    `json:"tensor_parallel"`
	Quant          string `json:"quant"`
	KVCacheDtype   string `json:"kv_cache_dtype,omitempty"` // bf16 (default), fp8, nvfp4
	CaptureDate    string `json:"capture_date"`             // RFC 3339 date or timestamp
}

// RooflineRow is one point of an imported sweep with its roofline coordinates (schema roofline_v1).
// Delivered HBM % (byte-grounded) and the DRAM_ACTIVE proxy are kept side by side, never merged.
type RooflineRow struct {
	Schema         string `json:"schema"` // roofline_v1
	Campaign       string `json:"campaign"`
	ImportID       string `json:"import_id"`
	CellID         string `json:"cell_id"`
	Phase          string `json:"phase"` // decode, prefill
	Concurrency    int    `json:"concurrency"`
	ISL            int    `json:"isl"`
	OSL            int    `json:"osl"`
	Context        int    `json:"context"` // tokens of context the analytical model assumed per request
	NumPrompts     int    `json:"num_prompts"`
	Hardware       string `json:"hardware"`
	Quant          string `json:"quant"`
	TensorParallel int    `json:"tensor_parallel"`

	OutputTokPerS *float64 `json:"output_tok_s"` // decode
	InputTokPerS  *float64 `json:"input_tok_s"`  // prefill
	TTFTAvgMs     *float64 `json:"ttft_avg_ms"`
	ITLAvgMs      *float64 `json:"itl_avg_ms"`

	FLOPPerStep          float64  `json:"flop_per_step"`           // analytical FLOP of one forward step (B tokens decode, ISL tokens prefill)
	BytesPerStep         float64  `json:"bytes_per_step"`          // analytical HBM bytes of that step, whole replica
	ArithmeticIntensity  float64  `json:"arithmetic_intensity"`    // FLOP/byte = flop_per_step ÷ bytes_per_step
	RidgeFLOPPerByte     float64  `json:"ridge_flop_per_byte"`     // peak FLOP/s ÷ HBM B/s of the hardware and quant
	Bound                string   `json:"bound"`                   // memory, compute (AI vs ridge)
	AchievedTFLOPsPerGPU *float64 `json:"achieved_tflops_per_gpu"` // flop/token × measured tok/s ÷ GPUs
	PeakTFLOPsPerGPU     float64  `json:"peak_tflops_per_gpu"`
	ComputePct           *float64 `json:"compute_pct"` // achieved ÷ peak × 100
	PeakHBMTBs           float64  `json:"peak_hbm_tb_s"`
	HBMBWDeliveredPct    *float64 `json:"hbm_bw_delivered_pct"` // see HBMBytesLabel
	DRAMActivePct        *float64 `json:"dram_active_pct"`      // see DRAMActiveLabel

	SMActive        *float64 `json:"dcgm_sm_active"`
	TensorActive    *float64 `json:"dcgm_tensor_active"`
	DRAMActive      *float64 `json:"dcgm_dram_active"`
	NVLinkBytesPerS *float64 `json:"dcgm_nvlink_bytes_s"`

	Flags []string `json:"flags,omitempty"`
}

// RooflineSweep is roofline_sweep.json: one imported configuration, its model and its points.
type RooflineSweep struct {
	Schema         string               `json:"schema"` // roofline_sweep_v1
	Campaign       string               `json:"campaign"`
	ImportID       string               `json:"import_id"`
	DecodeCell     string               `json:"decode_cell"`
	PrefillCell    string               `json:"prefill_cell"`
	Hardware       string               `json:"hardware"`
	Quant          string               `json:"quant"`
	TensorParallel int                  `json:"tensor_parallel"`
	CacheMode      string               `json:"cache_mode"`
	WeightBytes    float64              `json:"weight_bytes_per_param"` // b_w used for the byte model
	KVBytes        float64              `json:"kv_bytes_per_elem"`      // b_kv used for the byte model
	Provenance     ExperimentProvenance `json:"provenance"`
	Model          ModelShape           `json:"model"`
	HBMLabel       string               `json:"hbm_label"`  // HBMBytesLabel
	DRAMLabel      string               `json:"dram_label"` // DRAMActiveLabel
	Rows           []RooflineRow        `json:"rows"`
	Warnings       []string             `json:"warnings,omitempty"`
}
