package schema

// RequestRecord is one request of a run (a line of raw/c<N>/records.jsonl); every point metric
// can be recomputed from these. Times are Unix nanoseconds from the client's clock, stamped at
// the first byte of each SSE message, before parsing.
type RequestRecord struct {
	Index          int     `json:"index"`
	Phase          string  `json:"phase"` // profiling, warmup, burn-in, prewarm
	StartNs        int64   `json:"start_ns"`
	HeadersNs      int64   `json:"headers_ns,omitempty"`      // response headers arrived
	FirstTokenNs   int64   `json:"first_token_ns,omitempty"`  // first non-empty content or reasoning
	FirstOutputNs  int64   `json:"first_output_ns,omitempty"` // first non-empty content (answer)
	LastContentNs  int64   `json:"last_content_ns,omitempty"` // last non-empty content or reasoning
	EndNs          int64   `json:"end_ns"`                    // stream closed or request failed
	ChunkNs        []int64 `json:"chunk_ns,omitempty"`        // every content/reasoning message's first-byte time
	InputTokens    int     `json:"input_tokens"`              // o200k_base tokens of the prompt
	OutputTokens   int     `json:"output_tokens"`             // o200k_base tokens of the answer text
	ReasoningTok   int     `json:"reasoning_tokens"`          // o200k_base tokens of the reasoning text
	RequestedOut   int     `json:"requested_output_tokens"`   // max_tokens sent
	UsagePrompt    *int    `json:"usage_prompt_tokens"`       // server usage, when sent
	UsageComplete  *int    `json:"usage_completion_tokens"`   // server usage, when sent
	UsageReasoning *int    `json:"usage_reasoning_tokens"`    // server usage, when sent
	UsageMismatch  bool    `json:"usage_mismatch,omitempty"`  // |client − server| > min(5 %, 50)
	ReasoningField string  `json:"reasoning_field,omitempty"` // reasoning_content, reasoning, or empty
	FinishReason   string  `json:"finish_reason,omitempty"`   // from the last choice that carried one
	Status         int     `json:"status"`                    // HTTP status
	ErrorClass     string  `json:"error_class,omitempty"`     // empty when valid; see ErrorClass* constants
	Error          string  `json:"error,omitempty"`           // message, never containing the API key
}

// Error classes a request can fail with; statistics exclude them and count them by class.
const (
	ErrorHTTP      = "http_status"    // non-2xx status
	ErrorRateLimit = "http_429"       // HTTP 429
	ErrorSSE       = "sse_error"      // SSE event: error
	ErrorInBand    = "inband_error"   // data: {"error": ...} with HTTP 200
	ErrorTimeout   = "timeout"        // per-request timeout
	ErrorDropped   = "dropped_stream" // stream ended without [DONE] or finish
	ErrorMalformed = "malformed"      // a data message that is not valid JSON
	ErrorConnect   = "connect"        // could not connect or send
	ErrorEmpty     = "empty_response" // finished without any content or reasoning
	ErrorCancelled = "cancelled"      // the run was interrupted
	// The bounds a hostile server can hit (see steps/measure/openai's guard.go).
	ErrorRedirect  = "redirect"             // a 3xx: never followed, so the key stays with the origin
	ErrorOversized = "oversized_event"      // an SSE line or event, or a JSON body, past its bound
	ErrorNotSSE    = "not_sse"              // HTTP 2xx to a stream request with neither SSE nor JSON
	ErrorEncoding  = "unsupported_encoding" // a Content-Encoding (gzip, br, …) on the response
)

// Stat summarises one metric over the valid requests of a point (AIPerf semantics: linear
// interpolation percentiles, population std).
type Stat struct {
	Unit  string  `json:"unit"`
	Count int     `json:"count"`
	Avg   float64 `json:"avg"`
	Min   float64 `json:"min"`
	Max   float64 `json:"max"`
	P1    float64 `json:"p1"`
	P5    float64 `json:"p5"`
	P10   float64 `json:"p10"`
	P25   float64 `json:"p25"`
	P50   float64 `json:"p50"`
	P75   float64 `json:"p75"`
	P90   float64 `json:"p90"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
	Std   float64 `json:"std"`
}

// AdjStat holds percentiles where every failed request counts as +Inf (null when infinite).
type AdjStat struct {
	P50 *float64 `json:"p50"`
	P90 *float64 `json:"p90"`
	P95 *float64 `json:"p95"`
	P99 *float64 `json:"p99"`
}

// Point is one concurrency point of a cell (raw/c<N>/point.json, schema point_v1).
type Point struct {
	Schema        string         `json:"schema"` // point_v1
	Cell          string         `json:"cell"`
	Concurrency   int            `json:"concurrency"`
	RequestRate   float64        `json:"request_rate,omitempty"`
	Arrival       string         `json:"arrival,omitempty"`
	Shape         string         `json:"shape"`
	Mode          string         `json:"mode"`
	GPUs          int            `json:"gpus"`
	NumPrompts    int            `json:"num_prompts"`   // requests issued (profiling phase)
	RequestCount  int            `json:"request_count"` // valid requests
	ErrorCount    int            `json:"error_count"`
	ErrorsByClass map[string]int `json:"errors_by_class,omitempty"`
	StartedAt     string         `json:"started_at"` // RFC 3339
	EndedAt       string         `json:"ended_at"`
	WindowS       float64        `json:"window_s"` // latest (start+latency) − earliest start, valid requests

	TTFT           *Stat `json:"ttft_ms"`
	TTFO           *Stat `json:"ttfo_ms"`
	ITL            *Stat `json:"itl_ms"` // (latency − TTFT) / (OSL − 1), OSL ≥ 2
	ICL            *Stat `json:"inter_chunk_ms"`
	RequestLatency *Stat `json:"request_latency_ms"`
	TPSUser        *Stat `json:"tps_per_user"` // 1 / ITL
	ISL            *Stat `json:"isl"`
	OSL            *Stat `json:"osl"`
	OutputTokens   *Stat `json:"output_tokens"`
	ReasoningTok   *Stat `json:"reasoning_tokens"`

	AdjTTFT           *AdjStat `json:"adj_ttft_ms,omitempty"`
	AdjRequestLatency *AdjStat `json:"adj_request_latency_ms,omitempty"`

	TTFOCoverage          float64 `json:"ttfo_coverage"` // answered / valid
	RequestThroughput     float64 `json:"request_throughput"`
	OutputTokenThroughput float64 `json:"output_token_throughput"` // Σ OSL / window
	TotalTokenThroughput  float64 `json:"total_token_throughput"`  // (Σ ISL + Σ OSL) / window
	OutputTokPerSPerGPU   float64 `json:"output_tok_s_per_gpu"`
	TotalTokPerSPerGPU    float64 `json:"total_tok_s_per_gpu"`
	AAOutputSpeed         float64 `json:"aa_output_speed"` // Σ(tokens − 1) / Σ(last − first visible chunk)
	MeanISL               float64 `json:"mean_isl"`
	MeanOSL               float64 `json:"mean_osl"`
	UsageMismatches       int     `json:"usage_mismatches"`

	Reasoning              bool   `json:"reasoning"`                // any reasoning tokens were seen
	ReasoningField         string `json:"reasoning_field"`          // reasoning_content, reasoning, none
	ReasoningParserSuspect bool   `json:"reasoning_parser_suspect"` // reasoning model with TTFT == TTFO on every request

	SteadyWindowUndercount bool   `json:"steady_window_undercount"` // num_prompts < 2 × concurrency
	Status                 string `json:"status"`                   // ok, partial (some errors), failed (no valid request)
}

// Cell statuses written to cells/<id>/status.txt.
const (
	CellFull    = "full"
	CellPartial = "partial"
	CellFailed  = "failed"
)
