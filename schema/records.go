package schema

// RequestRecord is one request of a run (a line of raw/c<N>/records.jsonl); every point metric
// can be recomputed from these. Times are Unix nanoseconds from the client's clock, stamped at
// the first byte of each SSE message, before parsing.
type RequestRecord struct {
	Index          int     `json:"index"`
	Phase          string  `json:"phase"` // profiling, warmup, burn-in, prewarm
	StartNs        int64   `json:"start_ns"`
	SentNs         int64   `json:"sent_ns,omitempty"`             // the request was written to its connection
	HeadersNs      int64   `json:"headers_ns,omitempty"`          // response headers arrived
	FirstTokenNs   int64   `json:"first_token_ns,omitempty"`      // first non-empty content or reasoning
	FirstOutputNs  int64   `json:"first_output_ns,omitempty"`     // first non-empty content (answer)
	LastContentNs  int64   `json:"last_content_ns,omitempty"`     // last non-empty content or reasoning
	EndNs          int64   `json:"end_ns"`                        // stream closed or request failed
	ChunkNs        []int64 `json:"chunk_ns,omitempty"`            // every content/reasoning message's first-byte time
	InputTokens    int     `json:"input_tokens"`                  // o200k_base tokens of the prompt
	OutputTokens   int     `json:"output_tokens"`                 // o200k_base tokens of the answer text
	ReasoningTok   int     `json:"reasoning_tokens"`              // o200k_base tokens of the reasoning text
	RequestedOut   int     `json:"requested_output_tokens"`       // max_tokens sent
	UsagePrompt    *int    `json:"usage_prompt_tokens"`           // server usage, when sent
	UsageComplete  *int    `json:"usage_completion_tokens"`       // server usage, when sent
	UsageReasoning *int    `json:"usage_reasoning_tokens"`        // server usage, when sent
	UsageCached    *int    `json:"usage_cached_tokens,omitempty"` // server usage prompt_tokens_details.cached_tokens, when sent
	UsageMismatch  bool    `json:"usage_mismatch,omitempty"`      // |client − server| > min(5 %, 50)
	// Counts with the endpoint's tokenizer file (token basis tokenizer:<name>); nil on other bases.
	TokenizerInput     *int   `json:"tokenizer_input_tokens,omitempty"`     // the prompt text (no chat template, no BOS)
	TokenizerOutput    *int   `json:"tokenizer_output_tokens,omitempty"`    // the answer text
	TokenizerReasoning *int   `json:"tokenizer_reasoning_tokens,omitempty"` // the reasoning text
	ReasoningField     string `json:"reasoning_field,omitempty"`            // reasoning_content, reasoning, or empty
	FinishReason       string `json:"finish_reason,omitempty"`              // from the last choice that carried one
	Status             int    `json:"status"`                               // HTTP status
	ErrorClass         string `json:"error_class,omitempty"`                // empty when valid; see ErrorClass* constants
	Error              string `json:"error,omitempty"`                      // message, never containing the API key
	// ServerMessage is the server's own error text (SSE error field, JSON error body, HTTP
	// status text), redacted, when the server said why it failed the request.
	ServerMessage string `json:"server_message,omitempty"`
	// PromptTruncated: the server processed less than was sent — it cut the prompt, or ran past
	// its context and shifted it (judged from usage and the server's context; see
	// steps/measure/openai.PromptTruncated).
	PromptTruncated bool `json:"prompt_truncated,omitempty"`
	// ConnectNs is the set-up (dial + TLS) of the connection this request was the first to use;
	// 0 on a reused connection. It lies inside the request's TTFT unless ConnPredialed.
	ConnectNs int64 `json:"connect_ns,omitempty"`
	// TLSNs is the TLS handshake part of ConnectNs.
	TLSNs int64 `json:"tls_ns,omitempty"`
	// ConnectDoneNs is when that connection was ready (set-up done); before StartNs when it
	// was pre-dialled, so its set-up cost the request nothing.
	ConnectDoneNs int64 `json:"connect_done_ns,omitempty"`
	// ConnPredialed: the request was the first on a connection the client dialled before it
	// was sent (a stock kept for servers that close connections after each response).
	ConnPredialed bool `json:"conn_predialed,omitempty"`
	// ConnReused: the request went out on a connection an earlier request had used.
	ConnReused bool `json:"conn_reused,omitempty"`
	// Retried: the first attempt failed on a connection the server had closed before answering,
	// and this record is the retry on a fresh connection.
	Retried bool `json:"retried,omitempty"`
	// Violations are the protocol violations this response showed (Violation* constants).
	Violations []string `json:"violations,omitempty"`
	// Timings are the server's own per-request timings, when it returns them (llama.cpp).
	Timings *ServerTimings `json:"server_timings,omitempty"`
	// ScheduledNs is when an open loop's arrival process asked for this send: the point's
	// start plus the arrival offsets, never moved by completions or by the in-flight cap; 0 in
	// a closed loop. The send is late by StartNs − ScheduledNs, and the point's *_sched_ms
	// latencies run from here, so a stall the client queued behind is not omitted.
	ScheduledNs int64 `json:"scheduled_ns,omitempty"`
	// CapDelayed: this open-loop send was held back by the in-flight cap (every slot was busy
	// at some moment between its scheduled time and its send), not by the client alone.
	CapDelayed bool `json:"cap_delayed,omitempty"`
	// LookHeld: this open-loop send was held back by an adaptive point's look, which lets a
	// send start at most its Ahead past a look whose earlier requests are still unanswered:
	// the server had not answered them, not the client fallen behind.
	LookHeld bool `json:"look_held,omitempty"`
}

// ShiftClock moves every instant of the record by d nanoseconds (durations stay as they are):
// a shard's records onto the coordinator's clock (Clients). Keep it beside the fields: a new
// instant field must be shifted here too (TestShiftClockMovesEveryInstant).
func (r *RequestRecord) ShiftClock(d int64) {
	for _, p := range []*int64{&r.StartNs, &r.SentNs, &r.HeadersNs, &r.FirstTokenNs, &r.FirstOutputNs,
		&r.LastContentNs, &r.EndNs, &r.ConnectDoneNs, &r.ScheduledNs} {
		if *p != 0 {
			*p += d
		}
	}
	for i := range r.ChunkNs {
		r.ChunkNs[i] += d
	}
}

// ServerPrompt is the prompt the server says it processed (usage.prompt_tokens); ok false when
// that is unknown: no usage, usage without it, or a prompt_tokens of 0, which no server
// processing a prompt reports (some send usage with the prompt count unfilled).
func (r RequestRecord) ServerPrompt() (int, bool) {
	if r.UsagePrompt == nil || *r.UsagePrompt <= 0 {
		return 0, false
	}
	return *r.UsagePrompt, true
}

// ServerTimings is llama.cpp's per-request `timings` object: the server's own view of the
// request (prompt processing and generation, in ms and tokens).
type ServerTimings struct {
	PromptN             int     `json:"prompt_n"`               // prompt tokens processed (not cached)
	PromptMs            float64 `json:"prompt_ms"`              // prompt processing time
	PromptPerTokenMs    float64 `json:"prompt_per_token_ms"`    // prompt_ms / prompt_n
	PromptPerSecond     float64 `json:"prompt_per_second"`      // prompt tokens per second
	PredictedN          int     `json:"predicted_n"`            // tokens generated
	PredictedMs         float64 `json:"predicted_ms"`           // first sampled token to last: n − 1 gaps
	PredictedPerTokenMs float64 `json:"predicted_per_token_ms"` // predicted_ms / predicted_n: 1/n below the ITL (see Point.ServerITLMs)
	PredictedPerSecond  float64 `json:"predicted_per_second"`   // generated tokens per second per request
}

// Protocol violations a response can show; each is counted on the point, never folded in.
const (
	ViolationNotStreamed = "non_streamed_reply"     // a streaming request answered with one JSON body
	ViolationAfterDone   = "content_after_done"     // data after [DONE] (ignored)
	ViolationHeldOpen    = "stream_held_after_done" // the server kept the stream open after [DONE]
	ViolationMultiChoice = "multiple_choices"       // a chunk carried more than one choice
	ViolationUsageFarOff = "usage_far_off"          // usage completion_tokens disagrees with the text by > 50 %
)

// Error classes a request can fail with; statistics exclude them and count them by class.
const (
	ErrorHTTP      = "http_status"      // non-2xx status
	ErrorRateLimit = "http_429"         // HTTP 429
	ErrorSSE       = "sse_error"        // SSE event: error
	ErrorInBand    = "inband_error"     // data: {"error": ...} with HTTP 200
	ErrorTimeout   = "timeout"          // per-request timeout
	ErrorDropped   = "dropped_stream"   // stream ended without [DONE] or finish
	ErrorMalformed = "malformed"        // a data message that is not valid JSON
	ErrorConnect   = "connect"          // could not connect or send
	ErrorEmpty     = "empty_response"   // finished without any content or reasoning
	ErrorCancelled = "cancelled"        // the run was interrupted
	ErrorContext   = "context_exceeded" // the server refused a prompt longer than its context
	// The bounds a hostile server can hit (see steps/measure/openai's guard.go).
	ErrorRedirect  = "redirect"             // a 3xx: never followed, so the key stays with the origin
	ErrorOversized = "oversized_event"      // an SSE line or event, or a JSON body, past its bound
	ErrorNotSSE    = "not_sse"              // HTTP 2xx to a stream request with neither SSE nor JSON
	ErrorEncoding  = "unsupported_encoding" // a Content-Encoding (gzip, br, …) on the response
)

// Stat summarises one metric over the valid requests of a point (AIPerf semantics: linear
// interpolation percentiles, population std). A statistic its source did not state (an
// imported aggregate without a p90, say) is unstated: null in JSON, never 0 — see Unstate.
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

	unstated uint16 // bit i set: statNames[i] was not stated (written as null, read as 0)
}

// AdjStat holds percentiles where every failed request counts as +Inf (null when infinite).
type AdjStat struct {
	P50 *float64 `json:"p50"`
	P90 *float64 `json:"p90"`
	P95 *float64 `json:"p95"`
	P99 *float64 `json:"p99"`
}

// Point is one point of a cell (raw/<point>/point.json, schema point_v1).
type Point struct {
	Schema        string         `json:"schema"` // point_v1
	Cell          string         `json:"cell"`
	Load          Load           `json:"load,omitzero"` // the point's key; absent on points written before points were keyed by load (PointLoad)
	Concurrency   int            `json:"concurrency"`   // the concurrency, or a rate point's in-flight cap (0: none)
	RequestRate   float64        `json:"request_rate,omitempty"`
	Arrival       string         `json:"arrival,omitempty"`
	Shape         string         `json:"shape"`
	Mode          string         `json:"mode"`
	GPUs          int            `json:"gpus"`
	NumPrompts    int            `json:"num_prompts"`   // requests issued (profiling phase)
	RequestCount  int            `json:"request_count"` // valid requests
	ErrorCount    int            `json:"error_count"`
	ErrorsByClass map[string]int `json:"errors_by_class,omitempty"`
	StartedAt     string         `json:"started_at"` // RFC 3339; on an imported point as its file states it (import.clock says how), "" when unknown
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

	// Goodput judges the point's requests against its cell's per-request SLO (slo:);
	// SLOAttainment and GoodputReqS are its headline figures (docs/measurement.md, "Goodput").
	// All three are absent when the cell declares no SLO, and the two figures also when the
	// requests' times are unknown (an aggregate import: Goodput.Unknown says so).
	Goodput       *Goodput `json:"goodput,omitempty"`
	SLOAttainment *float64 `json:"slo_attainment,omitempty"` // good ÷ every request of the window, failed ones included
	GoodputReqS   *float64 `json:"goodput_req_s,omitempty"`  // good ÷ window_s: requests/s meeting every target

	// Token accounting (see TokenBasis*). ISL stays the asked (o200k_base) prompt size; OSL,
	// output/reasoning tokens, ITL and the token throughputs count on TokenBasis. An imported
	// point's ISL and OSL are both its source's counts (ImportedBasis).
	TokenBasis          string `json:"token_basis"`                     // server, o200k_base, tokenizer:<file> or imported:<source> <counted> (ISL too is the source's): what OSL, ITL and tok/s count
	TokenBasisFallbacks int    `json:"token_basis_fallbacks,omitempty"` // valid requests without the basis's counts (no usage, no tokenizer count) counted on o200k_base
	ISLReceived         *Stat  `json:"isl_received"`                    // usage.prompt_tokens: the prompt the server actually processed
	CachedTokens        *Stat  `json:"cached_tokens"`                   // usage.prompt_tokens_details.cached_tokens
	// AIPerf's usage_*_diff_pct: mean over requests of (server − client) / client × 100, the
	// client counting with the tokenizer file on a tokenizer basis, else o200k_base.
	UsagePromptDiffPct     *float64 `json:"usage_prompt_diff_pct"`
	UsageCompletionDiffPct *float64 `json:"usage_completion_diff_pct"`
	UsageReasoningDiffPct  *float64 `json:"usage_reasoning_diff_pct"`
	UsageDiscrepancy       bool     `json:"usage_discrepancy"` // some |usage_*_diff_pct| > UsageDiffThresholdPct
	TruncatedPrompts       int      `json:"truncated_prompts"` // requests whose prompt the server cut (record.prompt_truncated)
	// UsagePromptUnknown counts valid requests whose usage stated no prompt count
	// (prompt_tokens absent or 0: RequestRecord.ServerPrompt): their received ISL, prompt
	// discrepancy and truncation are unknown, not zero, and enter none of those figures.
	UsagePromptUnknown int `json:"usage_prompt_unknown,omitempty"`

	// ErrorMessages are the distinct redacted server messages per error class (at most 5 each).
	ErrorMessages map[string][]string `json:"error_messages,omitempty"`
	// Violations counts protocol violations by Violation* name (requests showing each).
	Violations map[string]int `json:"violations,omitempty"`
	Retries    int            `json:"retries"` // requests retried once after a stale idle connection

	ConnectMs      *Stat `json:"connect_ms"`      // connection set-up (dial + TLS) of requests that were first on a new one
	NewConnections int   `json:"new_connections"` // requests of the window that were first on a new connection
	// ConnectsInTTFT counts requests of the window that waited for a connect: its set-up lies
	// inside their TTFT (new connections that were not pre-dialled).
	ConnectsInTTFT int `json:"connects_in_ttft"`
	// PredialedConnections counts requests of the window served by a connection dialled before
	// they were sent (its set-up is in connect_ms, not in their TTFT).
	PredialedConnections int `json:"predialed_connections"`
	// Connections opened before the window (one per in-flight slot), so no request paid one.
	WarmConnections int   `json:"warm_connections"`
	WarmConnectMs   *Stat `json:"warm_connect_ms"` // their set-up time (dial + TLS)

	// Server-side timings (llama.cpp `timings`), over valid requests that returned them, on the
	// client's definitions: timings.predicted_ms spans the first sampled token to the last, n − 1
	// gaps, so the server's ITL is predicted_ms / (predicted_n − 1), like the client's
	// (latency − TTFT) / (OSL − 1); llama.cpp's own predicted_per_token_ms divides by n and
	// reads 1/n low (0.8 % at 128 tokens, 12.5 % at 8).
	ServerPromptMs          *Stat    `json:"server_prompt_ms"`            // timings.prompt_ms
	ServerPredictedMs       *Stat    `json:"server_predicted_ms"`         // timings.predicted_ms
	ServerITLMs             *Stat    `json:"server_itl_ms"`               // predicted_ms / (predicted_n − 1), predicted_n ≥ 2
	ServerOutputTokPerUser  *Stat    `json:"server_tps_per_user"`         // 1 / server ITL, per request (compare tps_per_user)
	ServerOutputSpeed       *float64 `json:"server_output_speed"`         // Σ(predicted_n − 1) / Σ predicted_ms in tok/s (compare aa_output_speed); nil without timings
	TTFTMinusServerPromptMs *Stat    `json:"ttft_minus_server_prompt_ms"` // client TTFT − timings.prompt_ms, per request
	ServerTimedRequests     int      `json:"server_timed_requests"`       // valid requests that carried timings
	// MetricsFamilies names the engine metric families the /metrics scrape recognised
	// (vllm, sglang, llamacpp, trtllm, dynamo); "none" when the scrape found none known.
	MetricsFamilies string `json:"metrics_families,omitempty"`

	Reasoning              bool   `json:"reasoning"`                // any reasoning tokens were seen
	ReasoningField         string `json:"reasoning_field"`          // reasoning_content, reasoning, none
	ReasoningParserSuspect bool   `json:"reasoning_parser_suspect"` // reasoning model with TTFT == TTFO on every request

	SteadyWindowUndercount bool   `json:"steady_window_undercount"` // num_prompts < 2 × concurrency
	Status                 string `json:"status"`                   // ok, partial (some errors), failed (no valid request)

	Import *PointImport `json:"import,omitempty"` // set when the point was read from another tool's output

	// Intervals are 95 % confidence intervals of the headline metrics (schema.Interval).
	Intervals Intervals `json:"intervals,omitempty"`
	// Auto is set when requests_per_point was auto: why the point stopped measuring.
	Auto *AutoStop `json:"auto,omitempty"`
	// MeasurementCost is what measuring the point took (requests sent, the seconds it held the
	// endpoint, GPU-seconds when the GPUs are declared); absent on an imported point and on one
	// recorded before cost accounting. A reused point keeps the cost it was measured at.
	MeasurementCost *MeasurementCost `json:"measurement_cost,omitempty"`
	// Decision is set when requests_per_point was {auto: {decide: ...}}: the SLO verdict the
	// point measured until, with its bounds, their confidence and the looks it took.
	Decision *Decision `json:"decision,omitempty"`
	// ClientBound says whether the point's client was its bottleneck (its CPU, late sends,
	// reads lagging the kernel's stamps); absent on a point no client of this perfdag measured
	// (imported, the deterministic simulator) and on one recorded before it was measured.
	ClientBound *ClientBound `json:"client_bound,omitempty"`
	// Clients is set when the point's load was split over client processes (cells[].clients):
	// each shard's share, records file, clock offset and client verdict. ClientBound is then
	// the most loaded shard's.
	Clients *Clients `json:"clients,omitempty"`

	// Open-loop points (request_rate) only; absent on a closed-loop point. TTFTSched and
	// RequestLatencySched run from each request's scheduled send (RequestRecord.ScheduledNs),
	// not its actual one: the coordinated-omission-free latencies, the headline of an open
	// loop (docs/measurement.md, "Open loop"). OpenLoop says what rate was asked and achieved.
	TTFTSched           *Stat     `json:"ttft_sched_ms,omitempty"`
	RequestLatencySched *Stat     `json:"request_latency_sched_ms,omitempty"`
	OpenLoop            *OpenLoop `json:"open_loop,omitempty"`
}

// OpenLoop is what an open-loop point asked of its arrival process and what the client did:
// the rates, the in-flight peak, the sends the cap held back and how late they went out.
// Every figure is recomputed from the records (scheduled_ns, start_ns, end_ns, cap_delayed).
type OpenLoop struct {
	AskedRate   float64 `json:"asked_rate"`   // requests/s asked (workload.request_rate)
	Arrival     string  `json:"arrival"`      // poisson or constant
	InFlightCap int     `json:"inflight_cap"` // the cap (the point's concurrency); 0 for none
	Sends       int     `json:"sends"`        // requests sent (profiling phase)
	// ScheduledRate is the schedule's own rate, (sends − 1) / (last − first scheduled send):
	// the seeded draw of the arrival process (a Poisson draw of n sends lies within about
	// ±1/√n of the asked rate; a constant one is the asked rate).
	ScheduledRate float64 `json:"scheduled_rate"`
	// AchievedRate is (sends − 1) / (last − first actual send): the rate the client sent at.
	AchievedRate float64 `json:"achieved_rate"`
	// CompletionRate is finished requests (failed too) / (last end − first send).
	CompletionRate float64 `json:"completion_rate"`
	InFlightPeak   int     `json:"inflight_peak"` // most requests between send and end at once
	// CapDelayedSends are the sends the in-flight cap held back (RequestRecord.CapDelayed);
	// CapDelayTotalMs and CapDelayMaxMs sum and bound their lateness (actual − scheduled send).
	CapDelayedSends int     `json:"cap_delayed_sends"`
	CapDelayTotalMs float64 `json:"cap_delay_total_ms"`
	CapDelayMaxMs   float64 `json:"cap_delay_max_ms"`
	// LookHeldSends are the sends an adaptive point's look held back (RequestRecord.LookHeld)
	// while the requests before it went unanswered; LookHeldMaxMs bounds their lateness.
	LookHeldSends int     `json:"look_held_sends,omitempty"`
	LookHeldMaxMs float64 `json:"look_held_max_ms,omitempty"`
	// SendLatenessMs is actual − scheduled send over every send: the client's own lag (a few
	// tens of µs when it keeps up) plus any wait for the cap or a look.
	SendLatenessMs *Stat `json:"send_lateness_ms"`
	// RateShortfallPct is how far the achieved rate fell below the scheduled one, in percent
	// (0 when it did not); RateMet is false when that is more than RateTolerancePct, and
	// RateShort then says why (the cap was hit, the server left a look's requests unanswered,
	// or the client fell behind). A point whose rate was not met never counts as meeting an
	// SLO at its asked rate.
	RateShortfallPct float64 `json:"rate_shortfall_pct"`
	RateMet          bool    `json:"rate_met"`
	RateShort        string  `json:"rate_short,omitempty"`
}

// RateTolerancePct is how far (in percent) an open-loop point's achieved send rate may fall
// below its schedule's before the point is rate_short.
const RateTolerancePct = 5.0

// PointImport says where an imported point came from and how its statistics were made.
type PointImport struct {
	Source        string `json:"source"`                   // aiperf, vllm-bench, sglang-bench
	SourceVersion string `json:"source_version,omitempty"` // the tool's version, when known
	File          string `json:"file"`                     // relative to the campaign file
	StatsFrom     string `json:"stats_from"`               // per-request (recomputed) or aggregate (as the file states)
	TokenBasis    string `json:"token_basis"`              // what the source's token counts are (server usage, tokenizer <name>, ...); the point's token_basis is imported:<source> + this
	Clock         string `json:"clock,omitempty"`          // where started_at / ended_at come from (the file's own wall-clock), or why they are unknown
}

// Cell statuses written to cells/<id>/status.txt.
const (
	CellFull    = "full"
	CellPartial = "partial"
	CellFailed  = "failed"
)
