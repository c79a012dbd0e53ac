package lake

// Type is a column's SQL type, spelled the same for SQLite and PostgreSQL.
type Type string

// Column types. SQLite maps them to its affinities: BIGINT → INTEGER, DOUBLE PRECISION → REAL,
// BOOLEAN → NUMERIC (stored 0/1), TEXT → TEXT.
const (
	Text    Type = "TEXT"
	BigInt  Type = "BIGINT"
	Double  Type = "DOUBLE PRECISION"
	Boolean Type = "BOOLEAN"
	JSON    Type = "TEXT" // JSON text; in PostgreSQL cast with ::jsonb to query into it
)

// Column is one typed column of a lake table.
type Column struct {
	Name  string // column name
	Type  Type
	Null  bool   // nullable: the record field is nullable (a pointer, or omitted when empty)
	Field string // JSON field of the record the value comes from; "" when computed (see source)
	JSON  bool   // the value is JSON text (arrays, maps, the whole row)
	Doc   string // one line, written into the DDL as a comment
}

// Table is one lake table: a versioned record type with typed columns and a primary key.
type Table struct {
	Name    string
	Doc     string
	Columns []Column
	Key     []string // primary key; campaign_id first, so deleting a campaign uses it
	// Order is the ORDER BY of Read (SQL the same on SQLite and PostgreSQL); nil means Key.
	Order []string
}

// Computed columns (Field == ""): filled by the publisher, not read from the record.
const (
	ColCampaignID = "campaign_id"      // every table: the run, <UTC-ts>-<slug>
	ColInputKey   = "input_tokens_key" // atlas_v1: mean input tokens, else extra.isl, else -1
	ColLoad       = "load"             // atlas_v1: the point's key (c16, r2.5-cap64)
	ColRate       = "request_rate"     // atlas_v1: a rate point's asked requests per second, 0 on a concurrency point
	ColRowJSON    = "row_json"         // every table: the whole record as JSON
	ColChampion   = "champion"         // campaign_v1: champion arm from champion.json
	ColPublished  = "published_at"     // campaign_v1: when this publish happened
)

// Table names, one per record schema.
const (
	AtlasTable    = "atlas_v1"
	CampaignTable = "campaign_v1"
	TPMTable      = "tpm_v1"
	CostTable     = "cost_v1"
	RooflineTable = "roofline_v1"
	HistoryTable  = "history_v1"
)

// column constructors keep the table literals below readable.
func txt(name string) Column     { return Column{Name: name, Type: Text, Field: name} }
func optTxt(name string) Column  { return Column{Name: name, Type: Text, Field: name, Null: true} }
func num(name string) Column     { return Column{Name: name, Type: BigInt, Field: name} }
func dbl(name string) Column     { return Column{Name: name, Type: Double, Field: name} }
func optReal(name string) Column { return Column{Name: name, Type: Double, Field: name, Null: true} }
func flag(name string) Column    { return Column{Name: name, Type: Boolean, Field: name} }
func list(name string) Column {
	return Column{Name: name, Type: JSON, Field: name, Null: true, JSON: true, Doc: "JSON array; NULL when empty"}
}
func optReals(names ...string) []Column {
	out := make([]Column, len(names))
	for i, n := range names {
		out[i] = optReal(n)
	}
	return out
}

func campaignID() Column {
	return Column{Name: ColCampaignID, Type: Text, Doc: "one run of a campaign: <UTC-ts>-<slug>, its default directory name; stable across re-publishes"}
}

func rowJSON(record string) Column {
	return Column{Name: ColRowJSON, Type: JSON, JSON: true, Doc: "the whole " + record + " record as JSON: nothing is lost"}
}

func cat(parts ...[]Column) []Column {
	var out []Column
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// tpmKey is the TPM group key shared by tpm_v1 and cost_v1.
func tpmKey() []Column {
	return []Column{txt("point"), txt("model"), txt("hardware"), txt("quant"), num("tensor_parallel"),
		txt("parallel_strategy"), flag("mtp"), txt("shape")}
}

// Tables returns the lake's tables in publish order. Each call builds fresh values.
func Tables() []Table {
	return []Table{atlasTable(), campaignTable(), tpmTable(), costTable(), rooflineTable(), historyTable()}
}

// TableNamed finds a table by name.
func TableNamed(name string) (Table, bool) {
	for _, t := range Tables() {
		if t.Name == name {
			return t, true
		}
	}
	return Table{}, false
}

func atlasTable() Table {
	return Table{
		Name: AtlasTable,
		Doc:  "one (cell, point[, ISL]) row of the atlas (schema.AtlasRow); roofline prefill rows all sit at concurrency 1 and differ by input_tokens_key",
		Columns: cat(
			[]Column{campaignID(), txt("campaign"), txt("cell_id"),
				{Name: "concurrency", Type: BigInt, Field: "concurrency", Doc: "a closed-loop point's concurrency, or a rate point's in-flight cap (0: none)"},
				{Name: ColLoad, Type: Text, Field: "load", Doc: "the point's key: c16 (concurrency), r2.5 or r2.5-cap64 (request rate, with its in-flight cap); rows published before the column have it from their concurrency and extra.request_rate"},
				{Name: ColRate, Type: Double, Field: "request_rate", Doc: "a rate point's asked requests per second; 0 on a concurrency point"},
				{Name: ColInputKey, Type: Double, Doc: "mean_input_tokens, else extra.isl, else -1: tells a prefill ISL sweep's rows apart"}},
			[]Column{txt("model"), txt("hardware"), txt("quant"), num("tensor_parallel"), txt("parallel_strategy"),
				flag("mtp"), num("max_num_batched_tokens"), txt("engine"), optTxt("engine_version"), txt("delivery"),
				txt("shape"), txt("cache_mode"), optTxt("arm"), flag("baseline"),
				txt("backend"), num("gpus"), txt("cell_status"), flag("plot_ready"),
				num("num_prompts"), num("request_count"), num("error_count")},
			optReals("ttft_avg_ms", "ttft_p50_ms", "ttft_p90_ms", "ttft_p95_ms", "ttft_p99_ms", "ttfo_avg_ms",
				"ttfo_coverage", "itl_avg_ms", "itl_p50_ms", "itl_p99_ms", "request_latency_avg_ms",
				"request_latency_p50_ms", "request_latency_p99_ms", "request_throughput", "output_tok_s",
				"total_tok_s", "output_tok_s_per_gpu", "total_tok_s_per_gpu", "tok_s_per_user", "aa_output_speed",
				"mean_input_tokens", "mean_output_tokens", "reasoning_token_avg"),
			[]Column{optTxt("reasoning_field"),
				{Name: "token_basis", Type: Text, Field: "token_basis", Null: true, Doc: "what the token metrics count: server (usage), o200k_base, tokenizer:<file> (the client's count with a tokenizer.json), or imported:<source> <what it counted> (an imported point: ISL and OSL are the source tool's counts, e.g. imported:vllm-bench server usage, else tokenizer <name>); NULL when the source did not say"},
				{Name: "token_basis_fallbacks", Type: BigInt, Field: "token_basis_fallbacks", Null: true, Doc: "valid requests without their basis's counts (no usage, no tokenizer count) counted on o200k_base; NULL when none"},
				{Name: "truncated_prompts", Type: BigInt, Field: "truncated_prompts", Null: true, Doc: "requests whose prompt the server cut; NULL when none"},
				{Name: "usage_prompt_unknown", Type: BigInt, Field: "usage_prompt_unknown", Null: true, Doc: "valid requests whose usage stated no prompt count (prompt_tokens absent or 0); NULL when none"},
				{Name: "retries", Type: BigInt, Field: "retries", Null: true, Doc: "requests retried after a stale idle connection; NULL when none"},
				{Name: "error_messages_json", Type: JSON, Field: "error_messages", Null: true, JSON: true, Doc: "distinct redacted server messages per error class, as JSON"}},
			optReals("usage_prompt_diff_pct", "usage_completion_diff_pct", "usage_reasoning_diff_pct", "ttft_minus_server_prompt_p50_ms"),
			[]Column{
				{Name: "slo_attainment", Type: Double, Field: "slo_attainment", Null: true, Doc: "fraction of the point's requests (failed ones included) meeting every per-request target of the cell's slo (docs/measurement.md, Goodput); NULL when the cell declares none or an import stated no per-request times"},
				{Name: "goodput_req_s", Type: Double, Field: "goodput_req_s", Null: true, Doc: "requests per second of the window meeting every per-request target of the cell's slo (DistServe's goodput); NULL as slo_attainment"},
				{Name: "goodput_json", Type: JSON, Field: "goodput", Null: true, JSON: true, Doc: "what slo_attainment and goodput_req_s are made from: {slo targets, requests, good, failed, missed_ttft, missed_tpot, missed_latency, no_tpot, unknown, source_goodput_req_s}; NULL when the cell declares no slo"}},
			optReals("acceptance_length", "spec_accept_rate", "prefix_cache_hit_rate",
				"dcgm_sm_active", "dcgm_sm_occupancy", "dcgm_tensor_active", "dcgm_dram_active",
				"dcgm_gr_engine_active", "dcgm_nvlink_bytes_s", "dcgm_pcie_bytes_s", "power_watts_per_gpu",
				"tokens_per_watt"),
			[]Column{flag("dcgm_grounded"), txt("sol_rigor"), list("flags"),
				{Name: "extra_json", Type: JSON, Field: "extra", Null: true, JSON: true, Doc: "the row's extra map (roofline coordinates, point_status, ...) as JSON"},
				{Name: "gates_json", Type: JSON, Field: "gates", Null: true, JSON: true, Doc: "quality-gate verdicts that did not pass on the point (warn or fail): published evidence, never dropped"},
				{Name: "intervals_json", Type: JSON, Field: "intervals", Null: true, JSON: true, Doc: "95 % confidence intervals of the point's headline metrics by atlas field: {lo, hi, method, n} (docs/statistics.md); NULL when the point has none"},
				{Name: "decision_json", Type: JSON, Field: "decision", Null: true, JSON: true, Doc: "the point's SLO decision when it measured until one was known (requests_per_point decide): {rule, verdict, clauses with their bounds and confidence, alpha, looks, max_looks, requests, method} (docs/statistics.md); NULL otherwise"},
				{Name: "measurement_cost_json", Type: JSON, Field: "measurement_cost", Null: true, JSON: true, Doc: "what measuring the point took: {requests_sent, requests_valid, settle_s, run_s, endpoint_s, gpus, gpu_s} (gpu_s null when the campaign declares no GPU count; docs/campaign-directory.md); NULL on an imported point or one recorded before cost accounting"},
				rowJSON("atlas_v1")},
		),
		Key:   []string{ColCampaignID, "cell_id", ColLoad, ColInputKey},
		Order: []string{ColCampaignID, "cell_id", "concurrency", ColRate, ColLoad, ColInputKey},
	}
}

func campaignTable() Table {
	return Table{
		Name: CampaignTable,
		Doc:  "one published campaign (schema.CampaignRow): coverage, grounding, and every gate passed knowingly (gaps)",
		Columns: []Column{campaignID(), txt("campaign"), txt("kind"),
			{Name: "created", Type: Text, Field: "created", Doc: "campaign start, RFC 3339 UTC"},
			{Name: ColPublished, Type: Text, Doc: "this publish, RFC 3339 UTC"},
			num("cells"), num("full_cells"), num("partial_cells"), num("failed_cells"), num("plot_ready_points"),
			flag("dcgm_grounded"), {Name: "sol_rigor", Type: Text, Field: "sol_rigor", Doc: "L1..L4: the weakest plot-ready point"},
			flag("roofline_present"), {Name: "strict", Type: Boolean, Field: "strict", Doc: "false: published with --no-strict"},
			{Name: "gaps", Type: JSON, Field: "gaps", Null: true, JSON: true, Doc: `JSON array of "gate-id: message": gates passed knowingly`},
			optTxt("engine"), optTxt("engine_version"), {Name: "source_commit", Type: Text, Field: "commit", Null: true},
			optTxt("delivery"), {Name: "source_patch", Type: Text, Field: "patch", Null: true}, optTxt("source_url"),
			{Name: ColChampion, Type: Text, Null: true, Doc: "champion arm from champion.json, NULL when none"},
			rowJSON("campaign_v1")},
		Key: []string{ColCampaignID},
	}
}

func tpmTable() Table {
	return Table{
		Name: TPMTable,
		Doc:  "one TPM operating point (peak or sla) of a deployment group (schema.TPMRow)",
		Columns: cat(
			[]Column{campaignID(), txt("campaign")}, tpmKey(),
			[]Column{txt("cell_id"), num("concurrency"), optTxt("load"), txt("cache_mode"), optTxt("engine"), optTxt("delivery"), num("gpus_per_node")},
			optReals("mean_isl", "mean_osl", "ttft_avg_ms", "tpot_avg_ms"),
			[]Column{dbl("ttft_sla_ms"), dbl("tpot_sla_ms"), dbl("output_tok_s_per_gpu"), optReal("total_tok_s_per_gpu"),
				dbl("output_tpm_per_gpu"), dbl("output_tpm_per_replica"), dbl("output_tpm_per_node")},
			optReals("total_tpm_per_gpu", "total_tpm_per_replica", "total_tpm_per_node"),
			[]Column{list("flags"), rowJSON("tpm_v1")},
		),
		Key: []string{ColCampaignID, "point", "model", "hardware", "quant", "tensor_parallel", "parallel_strategy", "mtp", "shape"},
	}
}

func costTable() Table {
	return Table{
		Name: CostTable,
		Doc:  "the economics of one TPM operating point (schema.CostRow): $/1M tokens and tokens per watt",
		Columns: cat(
			[]Column{campaignID(), txt("campaign")}, tpmKey(),
			[]Column{txt("cell_id"), num("concurrency"), optTxt("load"), optReal("usd_per_gpu_hour"), flag("rate_estimate"), txt("rate_source")},
			optReals("usd_per_1m_output", "usd_per_1m_total", "power_watts_per_gpu", "tokens_per_watt"),
			[]Column{rowJSON("cost_v1")},
		),
		Key: []string{ColCampaignID, "point", "model", "hardware", "quant", "tensor_parallel", "parallel_strategy", "mtp", "shape"},
	}
}

func rooflineTable() Table {
	return Table{
		Name: RooflineTable,
		Doc:  "one point of an imported prefill/decode roofline sweep (schema.RooflineRow)",
		Columns: cat(
			[]Column{campaignID(), txt("campaign"), txt("import_id"), txt("cell_id"), txt("phase"), num("concurrency"),
				num("isl"), num("osl"), {Name: "context_tokens", Type: BigInt, Field: "context"}, num("num_prompts"),
				txt("hardware"), txt("quant"), num("tensor_parallel")},
			optReals("output_tok_s", "input_tok_s", "ttft_avg_ms", "itl_avg_ms"),
			[]Column{dbl("flop_per_step"), dbl("bytes_per_step"), dbl("arithmetic_intensity"), dbl("ridge_flop_per_byte"),
				txt("bound"), optReal("achieved_tflops_per_gpu"), dbl("peak_tflops_per_gpu"), optReal("compute_pct"),
				dbl("peak_hbm_tb_s"), optReal("hbm_bw_delivered_pct"), optReal("dram_active_pct")},
			optReals("dcgm_sm_active", "dcgm_tensor_active", "dcgm_dram_active", "dcgm_nvlink_bytes_s"),
			[]Column{list("flags"), rowJSON("roofline_v1")},
		),
		Key: []string{ColCampaignID, "import_id", "phase", "concurrency", "isl"},
	}
}

func historyTable() Table {
	return Table{
		Name: HistoryTable,
		Doc:  "a scheduled run's verdict against its baseline and its searched cells' knees (schema.HistoryRow), from its verdict.json; what perfdag history reads beside atlas_v1 and campaign_v1",
		Columns: []Column{campaignID(), txt("campaign"),
			{Name: "slot", Type: Text, Field: "slot", Doc: "the cron slot, RFC 3339 in the schedule's zone; a manual fire's is its fire time"},
			{Name: "trigger", Type: Text, Field: "trigger", Doc: "scheduled, catch-up, queued or manual (schedule --now)"},
			txt("started"), txt("ended"), txt("outcome"),
			{Name: "verdict", Type: Text, Field: "verdict", Doc: "GREEN, RED, FAILED, ERROR, INTERRUPTED, NO_BASELINE or NOT_COMPARED"},
			{Name: "baseline", Type: Text, Field: "baseline", Null: true, Doc: "the baseline entry the run was diffed against"},
			optTxt("baseline_sha256"), num("red_rows"), num("within_noise_rows"),
			{Name: "drift_changes", Type: BigInt, Field: "drift_changes", Doc: "change points that made the run RED under schedule.tolerances.drift (0 when none)"},
			optTxt("error"), optTxt("on_red"),
			{Name: "dir", Type: Text, Field: "dir", Null: true, Doc: "the campaign directory it was published from"},
			{Name: "perfdag_version", Type: Text, Field: "perfdag_version", Null: true, Doc: "the perfdag that measured the run (its run.json)"},
			{Name: "host", Type: Text, Field: "host", Null: true, Doc: "the machine the run ran on (its run.json)"},
			{Name: "endpoints_json", Type: JSON, Field: "endpoints", Null: true, JSON: true, Doc: "each endpoint measured: [{name, model, server}], server being what it reported of itself (version, build)"},
			{Name: "knees_json", Type: JSON, Field: "knees", Null: true, JSON: true, Doc: "each searched cell's knee: [{cell, slo, knee, knee_lo, knee_hi, knee_at_top, knee_unknown}]; NULL when no cell searched"},
			rowJSON("history_v1")},
		Key: []string{ColCampaignID},
	}
}
