package schema

import (
	"fmt"
	"strconv"
)

// Schema names of the baseline registry's documents.
const (
	SchemaPerfBench     = "inference_perfbench_v1" // source-snapshot.json: one campaign cell's numbers
	SchemaBaselineEntry = "baseline_entry_v1"      // baseline.json: registry metadata of one snapshot
	SchemaBaselineDiff  = "baseline_diff_v1"       // a diff of a current run against a baseline
	SchemaVerdict       = "verdict_v1"             // verdict.json a scheduled run leaves in its campaign directory
)

// PerfBench is the inference_perfbench_v1 document of seed 002: the numbers one workload (one
// campaign cell) produced over its concurrency sweep, in a stable shape future diffs compare
// apples to apples. Additive changes stay on _v1; a reshaped metrics map would bump it to _v2.
// Null means not measured (a legacy baseline or an unscraped server), never zero.
type PerfBench struct {
	Schema     string              `json:"schema"`     // inference_perfbench_v1
	Model      string              `json:"model"`      // served model name (the endpoint's model)
	ModelPath  string              `json:"model_path"` // HF org/repo (the cell's identity model)
	Deployment PerfBenchDeployment `json:"deployment"`
	Workload   PerfBenchWorkload   `json:"workload"`
	// Metrics by concurrency, keyed by its decimal string ("16").
	Metrics            map[string]PerfBenchPoint `json:"metrics"`
	ServerMetricsDelta PerfBenchServer           `json:"server_metrics_delta"`
	// KernelClassGPUPct is percent of GPU time by kernel class (fp8_bmm, tp_all_reduce, ...);
	// null when no profile was captured against the run's window.
	KernelClassGPUPct map[string]*float64 `json:"kernel_class_gpu_pct"`
	// CPUSpinpollPct is percent of on-CPU samples in the engine's spin-poll IPC path; null when
	// no profile was captured.
	CPUSpinpollPct *float64 `json:"cpu_spinpoll_pct"`
	// Search is set when the cell searched for its SLO knee (additive): a diff compares the
	// knees, and a point only one search probed is not a point the other run missed.
	Search *PerfBenchSearch `json:"search,omitempty"`
	// SLO is the cell's per-request targets (additive) its points' goodput_req_s and
	// slo_attainment_pct judge by; a diff compares those only under the same targets.
	SLO *SLO `json:"slo,omitempty"`
}

// PerfBenchSearch is a searched cell's answer and the points its search probed.
type PerfBenchSearch struct {
	SLO   string `json:"slo"`
	From  int    `json:"from"`
	To    int    `json:"to"`
	Knee  int    `json:"knee"`                  // highest concurrency meeting the SLO, 0 when none
	AtTop bool   `json:"knee_at_top,omitempty"` // the upper bound met it: the knee may lie beyond
	// KneeLo and KneeHi are the band the knee lies in when probes were undecided
	// (SweepResult.KneeLo, KneeHi); a snapshot taken before bands has neither: [Knee, Knee].
	KneeLo int   `json:"knee_lo,omitempty"`
	KneeHi int   `json:"knee_hi,omitempty"`
	Probes []int `json:"probes"` // concurrencies probed, in order
	// Over is "rate" for a search over request rate: its bounds FromRate..ToRate on a grid of
	// ResolutionPct, its knee KneeRate in [KneeRateLo, KneeRateHi] requests/s, its probes by key
	// in ProbeLoads (r29.9913, r16-cap64); the concurrency fields are then 0 and empty.
	Over          string   `json:"over,omitempty"`
	FromRate      float64  `json:"from_rate,omitempty"`
	ToRate        float64  `json:"to_rate,omitempty"`
	ResolutionPct float64  `json:"resolution_pct,omitempty"`
	KneeRate      float64  `json:"knee_rate,omitempty"`
	KneeRateLo    float64  `json:"knee_rate_lo,omitempty"`
	KneeRateHi    float64  `json:"knee_rate_hi,omitempty"`
	ProbeLoads    []string `json:"probe_loads,omitempty"`
}

// RateBand is a rate search's knee band in requests/s, [KneeRate, KneeRate] without one.
func (s *PerfBenchSearch) RateBand() (lo, hi float64) {
	if s.KneeRateLo == 0 && s.KneeRateHi == 0 {
		return s.KneeRate, s.KneeRate
	}
	return s.KneeRateLo, s.KneeRateHi
}

// Band is the search's knee band [lo, hi], [Knee, Knee] for a snapshot without one.
func (s *PerfBenchSearch) Band() (lo, hi int) {
	if s.KneeLo == 0 && s.KneeHi == 0 {
		return s.Knee, s.Knee
	}
	return s.KneeLo, s.KneeHi
}

// PerfBenchDeployment names what served the numbers. The first eight fields are the seed's;
// the rest are perfdag additions (additive, so still _v1).
type PerfBenchDeployment struct {
	Namespace           string `json:"namespace"`            // k8s namespace; empty outside k8s
	Cluster             string `json:"cluster"`              // kube context; empty outside k8s
	Service             string `json:"service"`              // endpoint URL without credentials
	VLLMVersion         string `json:"vllm_version"`         // engine version (the seed's name; also set for other engines)
	TensorParallelSize  int    `json:"tensor_parallel_size"` // GPUs per replica
	Quantization        string `json:"quantization"`         // NVFP4, FP8, BF16, ...
	KVCacheDtype        string `json:"kv_cache_dtype"`       // empty when the campaign does not say
	SpeculativeDecoding string `json:"speculative_decoding"` // mtp or none

	Engine              string `json:"engine,omitempty"` // vllm, sglang, dynamo, ...
	Hardware            string `json:"hardware,omitempty"`
	GPUs                int    `json:"gpus,omitempty"`
	ParallelStrategy    string `json:"parallel_strategy,omitempty"`
	MaxNumBatchedTokens int    `json:"max_num_batched_tokens,omitempty"`
	Delivery            string `json:"delivery,omitempty"`
	Commit              string `json:"commit,omitempty"` // engine commit from the campaign's source block
	CacheMode           string `json:"cache_mode,omitempty"`
}

// PerfBenchWorkload says what was sent. The first six fields are the seed's.
type PerfBenchWorkload struct {
	Dataset          string `json:"dataset"`           // replay dataset path, or "synthetic"
	Split            string `json:"split"`             // dataset split; empty for synthetic prompts
	ConversationNum  int    `json:"conversation_num"`  // profiling requests over the whole sweep
	ConcurrencySweep []int  `json:"concurrency_sweep"` // the closed-loop points' concurrencies, ascending (in a snapshot written before load_sweep: every point's, a rate point's cap)
	InputTokenBand   string `json:"input_token_band"`  // 1k, 10k, 100k, ... (from the shape's input budget)
	OutputTokenBand  string `json:"output_token_band"` // 1k, 1.5k, ... (from the shape's answer budget)

	Shape        string `json:"shape,omitempty"` // aa-1k, aa-10k, aa-100k, custom
	Mode         string `json:"mode,omitempty"`  // synthetic or dataset-replay
	InputTokens  int    `json:"input_tokens,omitempty"`
	OutputTokens int    `json:"output_tokens,omitempty"`
	Campaign     string `json:"campaign,omitempty"` // campaign slug the cell came from
	Cell         string `json:"cell,omitempty"`     // cell id the numbers came from
	// LoadSweep is every point's key in order (c1, c16, r2.5-cap64): a snapshot that has it
	// keys its metrics by load — a closed-loop point by its bare concurrency as the seed's
	// schema does ("16"), a rate point by its key. A snapshot without it was written before
	// points were keyed by load: a bare key there may be an open-loop point's cap (MetricsLoad).
	LoadSweep []string `json:"load_sweep,omitempty"`
}

// MetricsKey is the key of point l in PerfBench.Metrics: a closed-loop point's bare
// concurrency (the seed's schema), a rate point's load key.
func MetricsKey(l Load) string {
	if l.IsRate() {
		return l.Key()
	}
	return strconv.Itoa(l.Concurrency)
}

// MetricsLoad reads a PerfBench.Metrics key back: a bare concurrency or a load key.
func MetricsLoad(key string) (Load, error) {
	var l Load
	if err := l.UnmarshalText([]byte(key)); err != nil || l.IsZero() {
		return Load{}, fmt.Errorf("metrics key %q: want a positive concurrency or a point's key (r2.5-cap64)", key)
	}
	return l, nil
}

// KeyedByLoad reports whether the snapshot was written with load keys (LoadSweep present).
func (p *PerfBench) KeyedByLoad() bool { return len(p.Workload.LoadSweep) > 0 }

// PerfBenchPoint is one concurrency's headline metrics (AIPerf definitions, from the atlas).
type PerfBenchPoint struct {
	ThroughputToksPerS  *float64 `json:"throughput_toks_per_s"` // output tokens / s over the window
	TTFTP50Ms           *float64 `json:"ttft_p50_ms"`
	TTFTP95Ms           *float64 `json:"ttft_p95_ms"`
	TTFTP99Ms           *float64 `json:"ttft_p99_ms"`
	ITLP50Ms            *float64 `json:"itl_p50_ms"`
	TPSPerUser          *float64 `json:"tps_per_user"` // mean of 1 / ITL
	RequestLatencyP50Ms *float64 `json:"request_latency_p50_ms"`
	// GoodputReqS and SLOAttainmentPct judge the requests against the cell's per-request
	// SLO (PerfBench.SLO; additive): requests/s meeting every target, and the percent (0–100)
	// of the requests, failed ones included, that did. Absent when the cell declares none.
	GoodputReqS      *float64 `json:"goodput_req_s,omitempty"`
	SLOAttainmentPct *float64 `json:"slo_attainment_pct,omitempty"`
	Errors           int      `json:"errors"` // failed profiling requests
	// Intervals are the point's 95 % confidence intervals by this struct's metric names
	// (additive: a legacy snapshot has none and is compared on tolerance alone).
	Intervals Intervals `json:"intervals,omitempty"`
	// Decision is the point's decision when it was measured with decide: baseline (additive):
	// a diff against the same baseline values takes each clause's verdict for its row.
	Decision *Decision `json:"decision,omitempty"`
}

// PerfBenchServer is what the server's /metrics said around the sweep. Rates are percent
// (0–100), so tolerances on them are absolute percentage points.
type PerfBenchServer struct {
	PrefixCacheHitRatePre           *float64 `json:"prefix_cache_hit_rate_pre"`  // % at the first point's before-scrape
	PrefixCacheHitRatePost          *float64 `json:"prefix_cache_hit_rate_post"` // % at the last point's after-scrape
	GPUCacheUsagePercPeak           *float64 `json:"gpu_cache_usage_perc_peak"`  // % of KV blocks, peak over the sweep
	NumRequestsRunningPeak          *int     `json:"num_requests_running_peak"`
	AvgGenerationThroughputToksPerS *float64 `json:"avg_generation_throughput_toks_per_s"` // Σ generated tokens / Σ window seconds
}

// BaselineEntry is baseline.json: where a registered snapshot came from and its digest.
type BaselineEntry struct {
	Schema         string `json:"schema"`      // baseline_entry_v1
	Family         string `json:"family"`      // inference
	Measurement    string `json:"measurement"` // the baseline's name
	Kind           string `json:"kind"`        // inference_perfbench_v1
	Unit           string `json:"unit"`        // structured-json
	Created        string `json:"created"`     // RFC 3339, UTC
	Notes          string `json:"notes,omitempty"`
	Source         string `json:"source"`          // campaign directory the snapshot was taken from
	Cell           string `json:"cell"`            // cell id within it
	SourceSnapshot string `json:"source_snapshot"` // file name of the document, beside baseline.json
	SHA256         string `json:"sha256"`          // hex digest of that file's bytes
	PerfdagVersion string `json:"perfdag_version,omitempty"`
}

// DiffRow is one compared metric: at one point, or sweep-wide (concurrency 0, no load).
type DiffRow struct {
	Concurrency int      `json:"concurrency,omitempty"` // the point's concurrency, or a rate point's in-flight cap
	Load        string   `json:"load,omitempty"`        // a rate point's key (r2.5-cap64); empty on a concurrency point
	Metric      string   `json:"metric"`
	Baseline    *float64 `json:"baseline"`
	Current     *float64 `json:"current"`
	Delta       *float64 `json:"delta"`     // current − baseline (absolute points for rate metrics)
	DeltaPct    *float64 `json:"delta_pct"` // 100 × delta / baseline, for percent-tolerance metrics
	Tolerance   float64  `json:"tolerance"`
	Unit        string   `json:"unit"`      // "%" (relative), "pts" (absolute points), "count"
	Direction   string   `json:"direction"` // lower_is_worse or higher_is_worse
	Verdict     string   `json:"verdict"`   // GREEN, RED, NOTE (beyond the tolerance, within noise), NULL_LEGACY_BASELINE
	Note        string   `json:"note,omitempty"`
	// Change is the 95 % interval of current − baseline (the metric's own unit) from both
	// sides' intervals; nil when either side has none and the row was judged on tolerance only.
	Change *Interval `json:"change_interval,omitempty"`
	// ChangePct is Change as percent of the baseline, for percent-tolerance metrics.
	ChangePct *Interval `json:"change_interval_pct,omitempty"`
}

// BaselineDiff is the diff of a current run against a registered baseline.
type BaselineDiff struct {
	Schema         string    `json:"schema"` // baseline_diff_v1
	Verdict        string    `json:"verdict"`
	Baseline       string    `json:"baseline"` // registry directory
	BaselineName   string    `json:"baseline_name"`
	BaselineSHA256 string    `json:"baseline_sha256"`
	Current        string    `json:"current"` // campaign directory
	CurrentCell    string    `json:"current_cell"`
	Red            int       `json:"red"`
	Green          int       `json:"green"`
	Null           int       `json:"null_legacy_baseline"`
	WithinNoise    int       `json:"within_noise,omitempty"` // NOTE rows: beyond the tolerance, not beyond the change's interval
	Rows           []DiffRow `json:"rows"`
	Notes          []string  `json:"notes,omitempty"`
}

// Verdict is verdict.json, written into the campaign directory of every scheduled run.
type Verdict struct {
	Schema   string        `json:"schema"` // verdict_v1
	Campaign string        `json:"campaign"`
	File     string        `json:"file"`
	Slot     string        `json:"slot"` // the cron slot (RFC 3339, in the schedule's zone)
	Trigger  string        `json:"trigger"`
	Started  string        `json:"started"`
	Ended    string        `json:"ended"`
	Outcome  string        `json:"outcome"` // succeeded, failed, interrupted
	Verdict  string        `json:"verdict"` // GREEN, RED, FAILED, ERROR (diff impossible), INTERRUPTED, NO_BASELINE, NOT_COMPARED
	Error    string        `json:"error,omitempty"`
	Diff     *BaselineDiff `json:"diff,omitempty"`
	OnRed    string        `json:"on_red,omitempty"` // what the on_red command did
	// Drift are the change points that turned the run RED under schedule.tolerances.drift.
	Drift []DriftFinding `json:"drift,omitempty"`
}

// DriftFinding is a change point in a metric's series over a campaign's runs, a regression
// beyond the drift rule's limit, that the judged run belongs to.
type DriftFinding struct {
	Cell     string  `json:"cell"`
	Load     string  `json:"load,omitempty"` // "" for the knee
	Metric   string  `json:"metric"`
	Since    string  `json:"since"`     // start of the first run at the new level (RFC 3339)
	SinceDir string  `json:"since_dir"` // that run's campaign directory
	Runs     int     `json:"runs"`      // runs at the new level, this one included
	Before   float64 `json:"before"`    // mean level before the change
	After    float64 `json:"after"`     // mean level since
	Pct      float64 `json:"pct"`       // the change, % of Before
	PctLo    float64 `json:"pct_lo"`    // its 95 % interval
	PctHi    float64 `json:"pct_hi"`    //
	Limit    float64 `json:"limit"`     // the drift rule's %
	Detail   string  `json:"detail"`
}
