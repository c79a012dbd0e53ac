package schema

import (
	"path/filepath"
	"strings"
)

// Campaign is one campaign YAML file: what to measure, against which endpoints, and how.
type Campaign struct {
	Version     int                 `yaml:"version" json:"version" range:"1,1" doc:"file format version; always 1"`
	Campaign    string              `yaml:"campaign" json:"campaign" doc:"slug naming the campaign: [a-z0-9._-], never a path"`
	Kind        string              `yaml:"kind,omitempty" json:"kind,omitempty" enum:"throughput,latency,mixed" doc:"throughput, latency or mixed; throughput and mixed campaigns need a roofline page to publish strictly"`
	Description string              `yaml:"description,omitempty" json:"description,omitempty" doc:"free text shown on the report cover"`
	Endpoints   map[string]Endpoint `yaml:"endpoints,omitempty" json:"endpoints,omitempty" doc:"the servers under test, by name (a campaign of imported cells only may have none)"`
	Defaults    Identity            `yaml:"defaults,omitempty" json:"defaults,omitempty" doc:"identity fields every cell inherits unless it sets its own"`
	Cells       []Cell              `yaml:"cells" json:"cells" doc:"the measurement cells: one workload over a list of concurrencies"`
	Settle      *Settle             `yaml:"settle,omitempty" json:"settle,omitempty" doc:"settle discipline: prewarm shapes, burn-in and pauses"`
	Gates       []Gate              `yaml:"gates,omitempty" json:"gates,omitempty" doc:"quality gates: expr rules evaluated on a step's result"`
	Pipeline    []PipelineStep      `yaml:"pipeline,omitempty" json:"pipeline,omitempty" doc:"explicit pipeline; absent means the default pipeline"`
	Publish     *Publish            `yaml:"publish,omitempty" json:"publish,omitempty" doc:"where strict-publish writes the lake tables"`
	Schedule    *Schedule           `yaml:"schedule,omitempty" json:"schedule,omitempty" doc:"cron schedule and baseline for regression sweeps"`
	TPM         *TPM                `yaml:"tpm,omitempty" json:"tpm,omitempty" doc:"overrides of the TPM SLA defaults"`
	Cost        *Cost               `yaml:"cost,omitempty" json:"cost,omitempty" doc:"overrides of the default $/GPU-hour table"`
	Source      *Source             `yaml:"source,omitempty" json:"source,omitempty" doc:"the code under test, shown on the report's source page"`
	Report      *Report             `yaml:"report,omitempty" json:"report,omitempty" doc:"report layout options"`
	BaselineRef *BaselineRef        `yaml:"baseline_ref,omitempty" json:"baseline_ref,omitempty" doc:"the baseline values decide: baseline points decide against; written by perfdag schedule from schedule.baseline's latest snapshot (docs/schedule.md)"`
}

// Endpoint is one OpenAI-compatible server; its API key stays in the environment.
type Endpoint struct {
	URL           string     `yaml:"url" json:"url" doc:"base URL (http://host:8000) or sim:// for the built-in simulator"`
	Model         string     `yaml:"model" json:"model" doc:"served model name sent in every request"`
	APIKeyEnv     string     `yaml:"api_key_env,omitempty" json:"api_key_env,omitempty" doc:"name of the environment variable holding the API key; the key itself is never written anywhere"`
	MetricsURL    string     `yaml:"metrics_url,omitempty" json:"metrics_url,omitempty" doc:"Prometheus /metrics of the server, scraped around every point"`
	DCGMURL       string     `yaml:"dcgm_url,omitempty" json:"dcgm_url,omitempty" doc:"a DCGM exporter's /metrics, sampled during run windows"`
	TimeoutS      float64    `yaml:"request_timeout_s,omitempty" json:"request_timeout_s,omitempty" range:"0,86400" doc:"per-request timeout in seconds (default 600)"`
	Sim           *SimConfig `yaml:"sim,omitempty" json:"sim,omitempty" doc:"simulator behaviour for sim:// endpoints"`
	ReasoningHint bool       `yaml:"reasoning,omitempty" json:"reasoning,omitempty" doc:"the served model is a reasoning model (enables the unconfigured-parser check)"`
	TokenBasis    string     `yaml:"token_basis,omitempty" json:"token_basis,omitempty" enum:"server,o200k_base,tokenizer" doc:"what the token statistics count: server (the usage the server reports), o200k_base (the client's count of the text) or tokenizer (the client's count with the endpoint's tokenizer file); default tokenizer when tokenizer is set, else server when every valid request carried usage, else o200k_base"`
	Tokenizer     string     `yaml:"tokenizer,omitempty" json:"tokenizer,omitempty" doc:"a Hugging Face tokenizer.json (relative to the campaign file), read offline, that the tokenizer basis counts the prompt and the returned text with; points name the basis tokenizer:<this path>"`
}

// Token bases a point's statistics can count with.
const (
	TokenBasisServer    = "server"     // the server's usage (prompt_tokens, completion_tokens, ...)
	TokenBasisO200k     = "o200k_base" // tiktoken o200k_base over the prompt and the returned text
	TokenBasisTokenizer = "tokenizer"  // the endpoint's tokenizer.json over the prompt and the returned text
)

// TokenizerBasisPrefix starts the basis a point names when it counted with a tokenizer file:
// "tokenizer:" + TokenizerName.
const TokenizerBasisPrefix = TokenBasisTokenizer + ":"

// IsTokenizerBasis reports whether a point's basis is a tokenizer file's.
func IsTokenizerBasis(basis string) bool { return strings.HasPrefix(basis, TokenizerBasisPrefix) }

// Basis is the token basis the endpoint's points count on, as they name it: "" (the default:
// server or o200k_base, decided per point), server, o200k_base, or tokenizer:<name> when a
// tokenizer file is set.
func (e Endpoint) Basis(baseDir string) string {
	if e.Tokenizer != "" && (e.TokenBasis == "" || e.TokenBasis == TokenBasisTokenizer) {
		return TokenizerBasisPrefix + TokenizerName(baseDir, e.Tokenizer)
	}
	return e.TokenBasis
}

// TokenizerName names a tokenizer file in what perfdag writes: its path as the campaign wrote
// it when that stays under the campaign file's directory (baseDir), else its base name — never
// a machine path outside it.
func TokenizerName(baseDir, path string) string {
	rel := path
	if filepath.IsAbs(path) {
		r, err := filepath.Rel(baseDir, path)
		if err != nil || baseDir == "" {
			return filepath.Base(path)
		}
		rel = r
	}
	rel = filepath.Clean(rel)
	if rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return filepath.Base(path)
	}
	return filepath.ToSlash(rel)
}

// Identity names what a cell measured; atlas rows, TPM groups and the report key on it.
type Identity struct {
	Model               string `yaml:"model,omitempty" json:"model,omitempty" doc:"model name for the atlas (default: the endpoint's model)"`
	Hardware            string `yaml:"hardware,omitempty" json:"hardware,omitempty" doc:"GPU type: H100, H200, B200, GB300, ..."`
	Quant               string `yaml:"quant,omitempty" json:"quant,omitempty" doc:"weight quantization: BF16, FP8, NVFP4, ..."`
	TensorParallel      int    `yaml:"tensor_parallel,omitempty" json:"tensor_parallel,omitempty" range:"0,1024" doc:"tensor-parallel degree (GPUs per replica)"`
	ParallelStrategy    string `yaml:"parallel_strategy,omitempty" json:"parallel_strategy,omitempty" doc:"EP or TP"`
	MTP                 *bool  `yaml:"mtp,omitempty" json:"mtp,omitempty" doc:"speculative decoding (MTP) enabled"`
	MaxNumBatchedTokens int    `yaml:"max_num_batched_tokens,omitempty" json:"max_num_batched_tokens,omitempty" range:"0,100000000" doc:"server's max_num_batched_tokens"`
	Engine              string `yaml:"engine,omitempty" json:"engine,omitempty" doc:"vllm, sglang, dynamo, ..."`
	EngineVersion       string `yaml:"engine_version,omitempty" json:"engine_version,omitempty" doc:"engine version or commit"`
	Delivery            string `yaml:"delivery,omitempty" json:"delivery,omitempty" doc:"code-under-test identity (release, overlay, infr-patch, ...); results are evidence for this delivery only"`
	CacheMode           string `yaml:"cache_mode,omitempty" json:"cache_mode,omitempty" enum:"warm,cold" doc:"warm or cold prefix cache"`
	GPUs                int    `yaml:"gpus,omitempty" json:"gpus,omitempty" range:"0,100000" doc:"GPUs serving the endpoint, the divisor of tok/s/GPU (default: tensor_parallel, else 1)"`
	Arm                 string `yaml:"arm,omitempty" json:"arm,omitempty" doc:"champion-select arm this cell belongs to"`
	Baseline            bool   `yaml:"baseline,omitempty" json:"baseline,omitempty" doc:"this cell's arm is the champion baseline"`

	// gpusDefaulted says Inherit set GPUs to 1 because the campaign declares neither gpus nor
	// tensor_parallel: a divisor for tok/s/GPU, not a count a cost may multiply by.
	gpusDefaulted bool
}

// DeclaredGPUs is the GPU count the campaign declares for the cell (gpus, else
// tensor_parallel), 0 when it declares neither: GPU-seconds are then unknown, not assumed.
func (id Identity) DeclaredGPUs() int {
	if id.gpusDefaulted {
		return 0
	}
	return id.GPUs
}

// Cell is one workload measured at several loads (concurrencies, request rates) on one endpoint.
type Cell struct {
	ID               string    `yaml:"id" json:"id" doc:"cell id: [a-z0-9._-], never a path"`
	Endpoint         string    `yaml:"endpoint,omitempty" json:"endpoint,omitempty" doc:"endpoint name (default: the only endpoint)"`
	Workload         Workload  `yaml:"workload" json:"workload" doc:"what each request looks like"`
	Concurrencies    []int     `yaml:"concurrencies" json:"concurrencies" range:"1,100000" doc:"closed-loop points: positive, unique concurrencies (none with search:, whose probes are the points); with workload.request_rate, the in-flight caps of its open-loop points"`
	Rates            []float64 `yaml:"rates,omitempty" json:"rates,omitempty" range:"0,100000" doc:"open-loop points: positive, unique request rates (requests per second, at most 6 significant digits), arrivals scheduled against the clock by workload.arrival; each point is keyed r<rate> (r2.5), or r<rate>-cap<max_in_flight>"`
	MaxInFlight      int       `yaml:"max_in_flight,omitempty" json:"max_in_flight,omitempty" range:"0,100000" doc:"the in-flight cap of the cell's rates: an arrival finding this many requests in flight waits for one to end (default none: every arrival is sent on time)"`
	RequestsPerPoint Count     `yaml:"requests_per_point,omitempty" json:"requests_per_point,omitempty" doc:"requests per point: an integer, \"Nx\" for N times the concurrency (default 3x, at least 10), {auto: {metric, rel_ci, min, max}} to measure until the metric's 95 % interval is within ±rel_ci, or {auto: {decide: slo}} to measure until the SLO's verdict is known at 95 %; at most 100000 however written, Nx up to 1000x"`
	WarmupRequests   int       `yaml:"warmup_requests,omitempty" json:"warmup_requests,omitempty" range:"0,100000" doc:"requests sent before each point and excluded from statistics"`
	Clients          int       `yaml:"clients,omitempty" json:"clients,omitempty" range:"0,64" doc:"client processes each point's load is split over (default 1): closed loop, the concurrency split as evenly as possible; open loop, the rate, each client with its own arrival stream and a share of max_in_flight; the point is computed from the merged records, each client's clock offset applied"`
	Identity         `yaml:",inline" json:",inline"`
	Extra            map[string]any `yaml:"extra,omitempty" json:"extra,omitempty" doc:"free-form values copied into every atlas row's extra map"`
	Import           *CellImport    `yaml:"import,omitempty" json:"import,omitempty" doc:"the cell's points come from existing benchmark outputs (the import kind) instead of being measured"`
	Search           *Search        `yaml:"search,omitempty" json:"search,omitempty" doc:"find the highest concurrency, or request rate (over: rate), meeting an SLO by bisection (the sweep kind) instead of measuring a fixed list"`
	Sweep            Sweep          `yaml:"sweep,omitempty" json:"sweep,omitzero" doc:"auto: find the cell's operating range at run time as GuideLLM's sweep does — a synchronous point (c1), a saturating one (a closed loop at throughput_concurrency: the cell's max_in_flight, else 128), then rates (default 8) open-loop points evenly spaced from the first's request throughput to the second's; {auto: {rates, throughput_concurrency}} to choose"`
	StopWhen         string         `yaml:"stop_when,omitempty" json:"stop_when,omitempty" doc:"expr rule over the last point (its fields, gain_pct, prev_gain_pct, points): when true the rest of the concurrency list is skipped"`
	SLO              *SLO           `yaml:"slo,omitempty" json:"slo,omitempty" doc:"per-request targets (ttft_ms, tpot_ms, latency_ms; any subset): each point states its goodput_req_s (requests/s meeting every target) and slo_attainment (the fraction of requests that do), which searches, gates, champion-select and baseline diff can read; not inherited from defaults"`
}

// CellImport names the files an imported cell's points are read from; the cell's identity
// says what they measured.
type CellImport struct {
	Format        string        `yaml:"format" json:"format" enum:"aiperf,vllm-bench,sglang-bench" doc:"aiperf (artifact directory), vllm-bench (bench serve --save-result JSON) or sglang-bench (bench_serving JSONL)"`
	SourceVersion string        `yaml:"source_version,omitempty" json:"source_version,omitempty" doc:"the tool's version when the file does not state it"`
	Points        []ImportPoint `yaml:"points" json:"points" doc:"one file (or AIPerf directory) per point of the cell: each concurrency, and each rate"`
}

// ImportPoint is one imported point: a closed-loop run at a concurrency, or an open-loop run
// at a request rate (capped by the cell's max_in_flight, as the run was by its max concurrency).
type ImportPoint struct {
	Concurrency int     `yaml:"concurrency,omitempty" json:"concurrency,omitempty" range:"0,100000" doc:"the concurrency the file measured (a closed loop: vLLM/SGLang --request-rate inf with --max-concurrency N); with workload.request_rate, the in-flight cap of that rate's point"`
	Rate        float64 `yaml:"rate,omitempty" json:"rate,omitempty" range:"0,100000" doc:"the request rate the file measured (vLLM/SGLang --request-rate R), one of the cell's rates; its max concurrency is the cell's max_in_flight"`
	Path        string  `yaml:"path" json:"path" doc:"file or AIPerf artifact directory, relative to the campaign file"`
}

// ImportLoad is the point an import point of the cell fills: the rate at the cell's in-flight
// cap, or the point its concurrency stands for (LegacyLoad).
func (c *Cell) ImportLoad(p ImportPoint) Load {
	if p.Rate > 0 {
		return RateAt(p.Rate, c.MaxInFlight)
	}
	return c.LegacyLoad(p.Concurrency)
}

// ImportPath is the file an imported cell names for point l ("" when none).
func (c *Cell) ImportPath(l Load) string {
	if c == nil || c.Import == nil {
		return ""
	}
	for _, p := range c.Import.Points {
		if c.ImportLoad(p) == l {
			return p.Path
		}
	}
	return ""
}

// Workload describes the requests of a cell: an AA shape or custom token budgets.
type Workload struct {
	Shape        string         `yaml:"shape,omitempty" json:"shape,omitempty" doc:"aa-1k, aa-10k, aa-100k, or custom (then input_tokens and output_tokens)"`
	Mode         string         `yaml:"mode,omitempty" json:"mode,omitempty" enum:"synthetic,dataset-replay" doc:"synthetic prompts (default) or dataset-replay of a mooncake_trace JSONL"`
	Dataset      string         `yaml:"dataset,omitempty" json:"dataset,omitempty" doc:"mooncake_trace JSONL for dataset-replay (relative to the campaign file)"`
	InputTokens  int            `yaml:"input_tokens,omitempty" json:"input_tokens,omitempty" range:"0,2000000" doc:"input budget in o200k_base tokens (overrides the shape)"`
	OutputTokens int            `yaml:"output_tokens,omitempty" json:"output_tokens,omitempty" range:"0,1000000" doc:"answer length in tokens (overrides the shape)"`
	RequestRate  float64        `yaml:"request_rate,omitempty" json:"request_rate,omitempty" range:"0,100000" doc:"the older spelling of one open-loop rate: requests per second, each of concurrencies becoming a point at this rate with that in-flight cap (r<rate>-cap<c>); write rates: and max_in_flight: on the cell instead"`
	Arrival      string         `yaml:"arrival,omitempty" json:"arrival,omitempty" enum:"poisson,constant,gamma" doc:"open-loop arrival process: poisson (default), constant (evenly spaced), or gamma (gaps drawn from a gamma distribution of shape burstiness)"`
	Burstiness   float64        `yaml:"burstiness,omitempty" json:"burstiness,omitempty" range:"0,1000" doc:"arrival gamma's shape: 1 is poisson, below 1 burstier, above 1 more even (vLLM bench's --burstiness); only with arrival: gamma, which needs it"`
	Seed         int64          `yaml:"seed,omitempty" json:"seed,omitempty" range:"0,9007199254740991" doc:"seed for prompts and arrivals"`
	ExtraBody    map[string]any `yaml:"extra_body,omitempty" json:"extra_body,omitempty" doc:"merged into every request body last, so it can override min_tokens, ignore_eos, temperature, ..."`
}

// Settle is the settle discipline of the seeds: prewarm, burn-in, pauses.
type Settle struct {
	PrewarmShapes []string `yaml:"prewarm_shapes,omitempty" json:"prewarm_shapes,omitempty" doc:"one completion per shape before a cell's sweep"`
	BurnIn        bool     `yaml:"burn_in,omitempty" json:"burn_in,omitempty" doc:"one run-and-discard pass of the cell's first concurrency point"`
	SettleS       float64  `yaml:"settle_s,omitempty" json:"settle_s,omitempty" range:"0,86400" doc:"pause in seconds after prewarm/burn-in and between recorded points"`
}

// Gate is a quality rule on a step's result; fail stops dependents, warn is recorded.
type Gate struct {
	ID       string `yaml:"id" json:"id" doc:"gate id"`
	On       string `yaml:"on" json:"on" doc:"step id or step kind whose result the rule reads"`
	Rule     string `yaml:"rule" json:"rule" doc:"expr rule over the result fields, e.g. num_prompts >= 2 * concurrency"`
	Severity string `yaml:"severity,omitempty" json:"severity,omitempty" enum:"fail,warn" doc:"fail (default) or warn"`
	Message  string `yaml:"message,omitempty" json:"message,omitempty" doc:"text shown when the rule is false"`
}

// PipelineStep is one step of an explicit pipeline; foreach expands it into nodes.
type PipelineStep struct {
	ID       string         `yaml:"id" json:"id" doc:"step id; nodes are named id[cell/cN]"`
	Kind     string         `yaml:"kind" json:"kind" doc:"step kind, one of those perfdag kinds lists"`
	Foreach  string         `yaml:"foreach,omitempty" json:"foreach,omitempty" enum:"campaign,cell,point" doc:"expansion: one node per campaign, cell or point (default: the kind's scope)"`
	Needs    []string       `yaml:"needs,omitempty" json:"needs,omitempty" doc:"step ids this step waits for and reads"`
	Brackets string         `yaml:"brackets,omitempty" json:"brackets,omitempty" doc:"step id this step runs immediately before and after (per point)"`
	With     map[string]any `yaml:"with,omitempty" json:"with,omitempty" doc:"the kind's parameters, decoded strictly"`
	When     string         `yaml:"when,omitempty" json:"when,omitempty" doc:"expr condition; false skips the node"`
	Endpoint string         `yaml:"endpoint,omitempty" json:"endpoint,omitempty" doc:"endpoint for campaign-scope steps that hold one"`
}

// Publish says where strict-publish writes and which gates it enforces.
type Publish struct {
	Lake        string   `yaml:"lake,omitempty" json:"lake,omitempty" doc:"sqlite://path.db (default) or postgres://... (DSN from the URL; password via PGPASSWORD)"`
	Strict      *bool    `yaml:"strict,omitempty" json:"strict,omitempty" doc:"refuse a campaign failing a strict gate (default true)"`
	Gates       []Gate   `yaml:"gates,omitempty" json:"gates,omitempty" doc:"strict gates; an id equal to a default gate replaces it"`
	Acknowledge []string `yaml:"acknowledge,omitempty" json:"acknowledge,omitempty" doc:"flags accepted knowingly, e.g. steady_window_undercount"`
}

// Schedule runs a campaign on a cron expression and diffs it against a baseline.
type Schedule struct {
	Cron          string             `yaml:"cron" json:"cron" doc:"5-field cron expression"`
	Timezone      string             `yaml:"timezone,omitempty" json:"timezone,omitempty" doc:"IANA time zone (default UTC)"`
	Overlap       string             `yaml:"overlap,omitempty" json:"overlap,omitempty" enum:"skip,queue,replace" doc:"what a due run does while one is running (default skip)"`
	CatchupWindow Duration           `yaml:"catchup_window,omitempty" json:"catchup_window,omitempty" doc:"runs missed while the scheduler was down within this window are caught up (e.g. 24h)"`
	CatchupMax    int                `yaml:"catchup_max,omitempty" json:"catchup_max,omitempty" range:"0,1000" doc:"at most this many missed runs are caught up (default 1)"`
	Baseline      string             `yaml:"baseline,omitempty" json:"baseline,omitempty" doc:"registered baseline name each run is diffed against"`
	Tolerances    map[string]float64 `yaml:"tolerances,omitempty" json:"tolerances,omitempty" range:"0,1000000" doc:"per-metric tolerance overrides (metric: % or points, as baseline diff --tolerance), and drift: the change-point rule, a % beyond which a change point regressing a metric over the runs turns a run RED"`
	OnRed         *ExecSpec          `yaml:"on_red,omitempty" json:"on_red,omitempty" doc:"command run when a run is RED or failed (notify)"`
}

// ExecSpec is a command to run: the exec step kind's parameters and schedule hooks.
type ExecSpec struct {
	Command []string          `yaml:"command" json:"command" doc:"argv: program and arguments (no shell)"`
	Env     map[string]string `yaml:"env,omitempty" json:"env,omitempty" doc:"extra environment variables"`
	Dir     string            `yaml:"dir,omitempty" json:"dir,omitempty" doc:"working directory (default: the campaign directory)"`
	Timeout Duration          `yaml:"timeout,omitempty" json:"timeout,omitempty" doc:"kill the command after this long (e.g. 30s)"`
}

// TPM overrides the SLA used for the SLA point of the TPM summary.
type TPM struct {
	TTFTSLAMs   float64 `yaml:"ttft_sla_ms,omitempty" json:"ttft_sla_ms,omitempty" range:"0,600000" doc:"TTFT threshold in ms (default 2000)"`
	TPOTSLAMs   float64 `yaml:"tpot_sla_ms,omitempty" json:"tpot_sla_ms,omitempty" range:"0,60000" doc:"TPOT threshold in ms (default 50)"`
	GPUsPerNode int     `yaml:"gpus_per_node,omitempty" json:"gpus_per_node,omitempty" range:"0,1024" doc:"GPUs per node for per-node TPM (default 8)"`
}

// Cost overlays the default $/GPU-hour table.
type Cost struct {
	USDPerGPUHour map[string]float64 `yaml:"usd_per_gpu_hour,omitempty" json:"usd_per_gpu_hour,omitempty" range:"0,10000" doc:"$/GPU-hour by hardware name"`
}

// Source identifies the code under test for the report's source page.
type Source struct {
	Engine        string `yaml:"engine,omitempty" json:"engine,omitempty" doc:"vllm, sglang, dynamo, ..."`
	EngineVersion string `yaml:"engine_version,omitempty" json:"engine_version,omitempty" doc:"version tag"`
	Commit        string `yaml:"commit,omitempty" json:"commit,omitempty" doc:"git commit of the engine"`
	Delivery      string `yaml:"delivery,omitempty" json:"delivery,omitempty" doc:"release, overlay, infr-patch, ..."`
	Patch         string `yaml:"patch,omitempty" json:"patch,omitempty" doc:"patch applied on top"`
	URL           string `yaml:"url,omitempty" json:"url,omitempty" doc:"repository or commit URL"`
}

// Report holds the report's layout options.
type Report struct {
	Title                string `yaml:"title,omitempty" json:"title,omitempty" doc:"cover title (default: the campaign slug)"`
	LabelConcurrencies   []int  `yaml:"label_concurrencies,omitempty" json:"label_concurrencies,omitempty" range:"1,100000" doc:"concurrencies labelled inline on scatter panes (default 1, 8, 32)"`
	HeatmapConcurrencies []int  `yaml:"heatmap_concurrencies,omitempty" json:"heatmap_concurrencies,omitempty" range:"1,100000" doc:"concurrencies of the heatmap page (default 8, 16, 32)"`
}
