package schema

// SimConfig tunes the built-in simulator behind a sim:// endpoint.
type SimConfig struct {
	Seed               int64     `yaml:"seed,omitempty" json:"seed,omitempty" range:"0,9007199254740991" doc:"seed for the simulator's random choices"`
	Deterministic      bool      `yaml:"deterministic,omitempty" json:"deterministic,omitempty" doc:"test double for engine tests: no network and no wall clock; every recorded time and count of a point is a pure function of cell, concurrency and request index; no /metrics or DCGM exporter"`
	ZeroDelay          bool      `yaml:"zero_delay,omitempty" json:"zero_delay,omitempty" doc:"stream as fast as possible (client benchmarks)"`
	TTFTMs             float64   `yaml:"ttft_ms,omitempty" json:"ttft_ms,omitempty" range:"0,600000" doc:"base time to first token in ms (default 40)"`
	TTFTSigma          float64   `yaml:"ttft_sigma,omitempty" json:"ttft_sigma,omitempty" range:"0,5" doc:"spread of TTFT: each request's TTFT (ttft_ms + prefill) is multiplied by exp(ttft_sigma × Z), Z standard normal, so TTFT is lognormal with that median; 0 = none"`
	PrefillMsPer1K     float64   `yaml:"prefill_ms_per_1k,omitempty" json:"prefill_ms_per_1k,omitempty" range:"0,600000" doc:"extra TTFT per 1,000 prompt tokens in ms (default 8)"`
	TPOTMs             float64   `yaml:"tpot_ms,omitempty" json:"tpot_ms,omitempty" range:"0,60000" doc:"time per output token at batch 1 in ms (default 8)"`
	BatchTPOTMs        float64   `yaml:"batch_tpot_ms,omitempty" json:"batch_tpot_ms,omitempty" range:"0,60000" doc:"extra time per token per other running request in ms (default 0.05)"`
	MaxBatch           int       `yaml:"max_batch,omitempty" json:"max_batch,omitempty" range:"0,1000000" doc:"running requests before new ones queue (default 256)"`
	Slowdown           float64   `yaml:"slowdown,omitempty" json:"slowdown,omitempty" range:"0,1000" doc:"multiplies every delay (1 = nominal); a degraded server for regression tests"`
	ChunkTokens        int       `yaml:"chunk_tokens,omitempty" json:"chunk_tokens,omitempty" range:"0,4096" doc:"tokens per streamed chunk (default 1)"`
	Reasoning          bool      `yaml:"reasoning,omitempty" json:"reasoning,omitempty" doc:"behave as a reasoning model: reasoning tokens before the answer"`
	ReasoningField     string    `yaml:"reasoning_field,omitempty" json:"reasoning_field,omitempty" enum:"reasoning_content,reasoning,think" doc:"where reasoning streams: reasoning_content (default), reasoning, or inline <think> in content"`
	ReasoningTokens    int       `yaml:"reasoning_tokens,omitempty" json:"reasoning_tokens,omitempty" range:"0,1000000" doc:"reasoning tokens per request (default 64)"`
	UnansweredFraction float64   `yaml:"unanswered_fraction,omitempty" json:"unanswered_fraction,omitempty" range:"0,1" doc:"fraction of requests that spend their whole budget reasoning"`
	SpecAcceptRate     float64   `yaml:"spec_accept_rate,omitempty" json:"spec_accept_rate,omitempty" range:"0,1" doc:"speculative decoding acceptance rate; 0 disables spec-decode counters"`
	SpecTokens         int       `yaml:"spec_tokens,omitempty" json:"spec_tokens,omitempty" range:"0,64" doc:"draft tokens per speculation step (default 3)"`
	GPUs               int       `yaml:"gpus,omitempty" json:"gpus,omitempty" range:"0,4096" doc:"GPUs whose DCGM gauges are exported (default 1)"`
	Faults             SimFaults `yaml:"faults,omitempty" json:"faults,omitempty" doc:"injected failures, as fractions of requests"`
}

// SimFaults are the simulator's switchable failure modes, each a fraction of requests.
type SimFaults struct {
	HTTP500   float64 `yaml:"http_500,omitempty" json:"http_500,omitempty" range:"0,1" doc:"answer HTTP 500"`
	HTTP429   float64 `yaml:"http_429,omitempty" json:"http_429,omitempty" range:"0,1" doc:"answer HTTP 429"`
	Drop      float64 `yaml:"drop,omitempty" json:"drop,omitempty" range:"0,1" doc:"close the stream mid-way"`
	Stall     float64 `yaml:"stall,omitempty" json:"stall,omitempty" range:"0,1" doc:"stop sending mid-way until the client gives up"`
	Malformed float64 `yaml:"malformed,omitempty" json:"malformed,omitempty" range:"0,1" doc:"send a chunk that is not JSON"`
	SSEError  float64 `yaml:"sse_error,omitempty" json:"sse_error,omitempty" range:"0,1" doc:"send an SSE error event mid-way"`
	InBand    float64 `yaml:"inband_error,omitempty" json:"inband_error,omitempty" range:"0,1" doc:"send a data: {\"error\":...} payload with HTTP 200"`
}
