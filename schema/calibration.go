package schema

import "time"

// SchemaCalibration names calibration.json, the client machine's own overhead measured by
// `perfdag calibrate` against the built-in zero-delay simulator.
const SchemaCalibration = "calibration_v1"

// Calibration is what the measuring machine adds to the numbers it measures: per concurrency,
// the error of its TTFT and the token rate it can take at most. The report puts the error bar
// next to TTFT, so a reader knows how much of a small TTFT is the client's own.
type Calibration struct {
	Schema   string             `json:"schema"` // calibration_v1
	Campaign string             `json:"campaign"`
	Created  time.Time          `json:"created"` // when the calibration ended (UTC)
	Machine  CalibrationMachine `json:"machine"`
	// Method says how the figures were made, in one paragraph (it travels with the file).
	Method string             `json:"method"`
	Points []CalibrationPoint `json:"points"` // ascending concurrency
	// Ceilings are the most one client held on this machine; absent in a calibration made
	// before they were measured.
	Ceilings *CalibrationCeilings `json:"ceilings,omitempty"`
}

// CalibrationCeilings are the most one perfdag client held on the calibrated machine: streams,
// requests per second and tokens per second, each measured against the built-in simulator in a
// child process on the same machine, so each is a lower bound of the client's own (the
// simulator's work shares the cores). plan and run warn before a point that asks for more.
type CalibrationCeilings struct {
	// Streams is the highest concurrency of the stream ladder the client held: closed-loop
	// rungs doubling from 64 against the simulator pacing every stream at StreamTokensPerS
	// (no batching, no queue), each held when its client was not client_bound and it took at
	// least HeldRatio of the tokens the simulator paced. 0 when the first rung was not held.
	Streams          int     `json:"streams"`
	StreamTokensPerS float64 `json:"stream_tokens_per_s"` // each stream's pace: 1,000 / tpot_ms
	StreamTokens     int     `json:"stream_tokens"`       // tokens a ladder request asks for
	// StreamsEnd says why the ladder stopped: the first rung not held and why, or its top
	// (the --max-streams asked, or what the open-file limit allows).
	StreamsEnd string            `json:"streams_end"`
	Rungs      []CalibrationRung `json:"rungs"`
	// Concurrency is that of the zero-delay points below.
	Concurrency int `json:"concurrency"`
	// RequestsPerS is the request rate of one-token answers at zero delay (valid requests /
	// (last end − first start)); TokensPerS the token rate of long answers of one-token chunks
	// (server usage). Each comes with the client process's CPU over its window, in percent of
	// one core: which side was busy.
	RequestsPerS         float64 `json:"requests_per_s"`
	RequestsClientCPUPct float64 `json:"requests_client_cpu_pct"`
	TokensPerS           float64 `json:"tokens_per_s"`
	TokensPerRequest     int     `json:"tokens_per_request"`
	TokensClientCPUPct   float64 `json:"tokens_client_cpu_pct"`
}

// HeldRatio is the share of the paced tokens a ladder rung must take to be held.
const HeldRatio = 0.9

// CalibrationRung is one point of the stream ladder.
type CalibrationRung struct {
	Concurrency int     `json:"concurrency"`
	Requests    int     `json:"requests"` // sent (two rounds of the closed loop)
	Failed      int     `json:"failed"`
	WindowS     float64 `json:"window_s"` // first start to last end
	// Ratio is the tokens received over the window / the tokens the simulator's pace makes
	// in it: concurrency × stream_tokens / (ttft + (stream_tokens − 1) × tpot) a second.
	Ratio       float64      `json:"ratio"`
	ClientBound *ClientBound `json:"client_bound,omitempty"`
	Held        bool         `json:"held"`
	Why         string       `json:"why,omitempty"` // why it was not held
}

// CalibrationMachine is the client machine as the calibration saw it: enough to tell that a
// campaign ran somewhere else, or under another load.
type CalibrationMachine struct {
	Host           string     `json:"host,omitempty"` // as run.json records it
	GOOS           string     `json:"goos"`
	GOARCH         string     `json:"goarch"`
	NumCPU         int        `json:"num_cpu"`
	GOMAXPROCS     int        `json:"gomaxprocs"`
	LoadAvg        [3]float64 `json:"load_avg"`                   // 1, 5 and 15 min, when the calibration started
	LoadAvgAfter   [3]float64 `json:"load_avg_after"`             // and when it ended
	LoadAvgUnknown bool       `json:"load_avg_unknown,omitempty"` // no /proc/loadavg (not Linux)
	Version        string     `json:"perfdag_version"`
}

// CalibrationPoint is the client's overhead at one concurrency.
type CalibrationPoint struct {
	Concurrency int `json:"concurrency"`
	// Workload is the shape the TTFT requests used (the first cell with this concurrency),
	// with OutputTokens sent per request.
	Workload     string `json:"workload"`
	InputTokens  int    `json:"input_tokens"`
	OutputTokens int    `json:"output_tokens"`
	Requests     int    `json:"requests"` // TTFT requests matched with the simulator's truth
	Failed       int    `json:"failed"`   // TTFT requests that failed or could not be matched
	// TTFTErrorMs is what the client adds to TTFT, per request in ms: SendMs + ReceiveMs.
	TTFTErrorMs *Stat `json:"ttft_error_ms"`
	// SendMs: client start stamp → request written to its connection (client clock).
	SendMs *Stat `json:"send_ms"`
	// ReceiveMs: the simulator about to write the first answer chunk → the client's kernel
	// receive stamp of it (an upper bound of the client's share: it holds the write too; the
	// simulator's clock to the client's; both are the wall clock at process start plus the
	// monotonic clock since, on one machine).
	ReceiveMs *Stat `json:"receive_ms"`
	// ClockViolations counts requests whose stamps broke causality across the two processes
	// (received before sent, or arrived before started): > 0 means the two clocks disagree and
	// ReceiveMs is off by about that much.
	ClockViolations int `json:"clock_violations"`
	// ServerTTFTMs is the simulator's own TTFT (handler entered → first answer chunk written):
	// zero delay, so its parsing, queueing for a CPU and writing only. Not the client's.
	ServerTTFTMs *Stat `json:"server_ttft_ms"`
	// Ingest: a zero-delay stream of one-token chunks at this concurrency.
	IngestRequests     int     `json:"ingest_requests"`
	IngestTokens       int     `json:"ingest_tokens"`         // output tokens received (server usage)
	IngestWindowS      float64 `json:"ingest_window_s"`       // first start to last end
	IngestTokensPerS   float64 `json:"ingest_tokens_per_s"`   // the ceiling: tokens / window
	IngestChunksPerS   float64 `json:"ingest_chunks_per_s"`   // SSE messages / window
	IngestClientCPUS   float64 `json:"ingest_client_cpu_s"`   // the client process's CPU (user+sys) during the window
	IngestClientCPUPct float64 `json:"ingest_client_cpu_pct"` // that CPU / window, 100 = one core busy
}
