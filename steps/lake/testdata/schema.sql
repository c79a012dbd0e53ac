-- perfdag lake schema: the same DDL runs on SQLite and PostgreSQL.
-- Every table carries campaign_id; publishing a campaign deletes its rows in every
-- table and inserts the new ones in one transaction.

-- atlas_v1: one (cell, point[, ISL]) row of the atlas (schema.AtlasRow); roofline prefill rows all sit at concurrency 1 and differ by input_tokens_key
CREATE TABLE IF NOT EXISTS atlas_v1 (
  campaign_id TEXT NOT NULL, -- one run of a campaign: <UTC-ts>-<slug>, its default directory name; stable across re-publishes
  campaign TEXT NOT NULL,
  cell_id TEXT NOT NULL,
  concurrency BIGINT NOT NULL, -- a closed-loop point's concurrency, or a rate point's in-flight cap (0: none)
  load TEXT NOT NULL, -- the point's key: c16 (concurrency), r2.5 or r2.5-cap64 (request rate, with its in-flight cap); rows published before the column have it from their concurrency and extra.request_rate
  request_rate DOUBLE PRECISION NOT NULL, -- a rate point's asked requests per second; 0 on a concurrency point
  input_tokens_key DOUBLE PRECISION NOT NULL, -- mean_input_tokens, else extra.isl, else -1: tells a prefill ISL sweep's rows apart
  model TEXT NOT NULL,
  hardware TEXT NOT NULL,
  quant TEXT NOT NULL,
  tensor_parallel BIGINT NOT NULL,
  parallel_strategy TEXT NOT NULL,
  mtp BOOLEAN NOT NULL,
  max_num_batched_tokens BIGINT NOT NULL,
  engine TEXT NOT NULL,
  engine_version TEXT,
  delivery TEXT NOT NULL,
  shape TEXT NOT NULL,
  cache_mode TEXT NOT NULL,
  arm TEXT,
  baseline BOOLEAN NOT NULL,
  backend TEXT NOT NULL,
  gpus BIGINT NOT NULL,
  cell_status TEXT NOT NULL,
  plot_ready BOOLEAN NOT NULL,
  num_prompts BIGINT NOT NULL,
  request_count BIGINT NOT NULL,
  error_count BIGINT NOT NULL,
  ttft_avg_ms DOUBLE PRECISION,
  ttft_p50_ms DOUBLE PRECISION,
  ttft_p90_ms DOUBLE PRECISION,
  ttft_p95_ms DOUBLE PRECISION,
  ttft_p99_ms DOUBLE PRECISION,
  ttfo_avg_ms DOUBLE PRECISION,
  ttfo_coverage DOUBLE PRECISION,
  itl_avg_ms DOUBLE PRECISION,
  itl_p50_ms DOUBLE PRECISION,
  itl_p99_ms DOUBLE PRECISION,
  request_latency_avg_ms DOUBLE PRECISION,
  request_latency_p50_ms DOUBLE PRECISION,
  request_latency_p99_ms DOUBLE PRECISION,
  request_throughput DOUBLE PRECISION,
  output_tok_s DOUBLE PRECISION,
  total_tok_s DOUBLE PRECISION,
  output_tok_s_per_gpu DOUBLE PRECISION,
  total_tok_s_per_gpu DOUBLE PRECISION,
  tok_s_per_user DOUBLE PRECISION,
  aa_output_speed DOUBLE PRECISION,
  mean_input_tokens DOUBLE PRECISION,
  mean_output_tokens DOUBLE PRECISION,
  reasoning_token_avg DOUBLE PRECISION,
  reasoning_field TEXT,
  token_basis TEXT, -- what the token metrics count: server (usage), o200k_base, tokenizer:<file> (the client's count with a tokenizer.json), or imported:<source> <what it counted> (an imported point: ISL and OSL are the source tool's counts, e.g. imported:vllm-bench server usage, else tokenizer <name>); NULL when the source did not say
  token_basis_fallbacks BIGINT, -- valid requests without their basis's counts (no usage, no tokenizer count) counted on o200k_base; NULL when none
  truncated_prompts BIGINT, -- requests whose prompt the server cut; NULL when none
  usage_prompt_unknown BIGINT, -- valid requests whose usage stated no prompt count (prompt_tokens absent or 0); NULL when none
  retries BIGINT, -- requests retried after a stale idle connection; NULL when none
  error_messages_json TEXT, -- distinct redacted server messages per error class, as JSON
  usage_prompt_diff_pct DOUBLE PRECISION,
  usage_completion_diff_pct DOUBLE PRECISION,
  usage_reasoning_diff_pct DOUBLE PRECISION,
  ttft_minus_server_prompt_p50_ms DOUBLE PRECISION,
  slo_attainment DOUBLE PRECISION, -- fraction of the point's requests (failed ones included) meeting every per-request target of the cell's slo (docs/measurement.md, Goodput); NULL when the cell declares none or an import stated no per-request times
  goodput_req_s DOUBLE PRECISION, -- requests per second of the window meeting every per-request target of the cell's slo (DistServe's goodput); NULL as slo_attainment
  goodput_json TEXT, -- what slo_attainment and goodput_req_s are made from: {slo targets, requests, good, failed, missed_ttft, missed_tpot, missed_latency, no_tpot, unknown, source_goodput_req_s}; NULL when the cell declares no slo
  acceptance_length DOUBLE PRECISION,
  spec_accept_rate DOUBLE PRECISION,
  prefix_cache_hit_rate DOUBLE PRECISION,
  dcgm_sm_active DOUBLE PRECISION,
  dcgm_sm_occupancy DOUBLE PRECISION,
  dcgm_tensor_active DOUBLE PRECISION,
  dcgm_dram_active DOUBLE PRECISION,
  dcgm_gr_engine_active DOUBLE PRECISION,
  dcgm_nvlink_bytes_s DOUBLE PRECISION,
  dcgm_pcie_bytes_s DOUBLE PRECISION,
  power_watts_per_gpu DOUBLE PRECISION,
  tokens_per_watt DOUBLE PRECISION,
  dcgm_grounded BOOLEAN NOT NULL,
  sol_rigor TEXT NOT NULL,
  flags TEXT, -- JSON array; NULL when empty
  extra_json TEXT, -- the row's extra map (roofline coordinates, point_status, ...) as JSON
  gates_json TEXT, -- quality-gate verdicts that did not pass on the point (warn or fail): published evidence, never dropped
  intervals_json TEXT, -- 95 % confidence intervals of the point's headline metrics by atlas field: {lo, hi, method, n} (docs/statistics.md); NULL when the point has none
  decision_json TEXT, -- the point's SLO decision when it measured until one was known (requests_per_point decide): {rule, verdict, clauses with their bounds and confidence, alpha, looks, max_looks, requests, method} (docs/statistics.md); NULL otherwise
  measurement_cost_json TEXT, -- what measuring the point took: {requests_sent, requests_valid, settle_s, run_s, endpoint_s, gpus, gpu_s} (gpu_s null when the campaign declares no GPU count; docs/campaign-directory.md); NULL on an imported point or one recorded before cost accounting
  row_json TEXT NOT NULL, -- the whole atlas_v1 record as JSON: nothing is lost
  PRIMARY KEY (campaign_id, cell_id, load, input_tokens_key)
);

-- campaign_v1: one published campaign (schema.CampaignRow): coverage, grounding, and every gate passed knowingly (gaps)
CREATE TABLE IF NOT EXISTS campaign_v1 (
  campaign_id TEXT NOT NULL, -- one run of a campaign: <UTC-ts>-<slug>, its default directory name; stable across re-publishes
  campaign TEXT NOT NULL,
  kind TEXT NOT NULL,
  created TEXT NOT NULL, -- campaign start, RFC 3339 UTC
  published_at TEXT NOT NULL, -- this publish, RFC 3339 UTC
  cells BIGINT NOT NULL,
  full_cells BIGINT NOT NULL,
  partial_cells BIGINT NOT NULL,
  failed_cells BIGINT NOT NULL,
  plot_ready_points BIGINT NOT NULL,
  dcgm_grounded BOOLEAN NOT NULL,
  sol_rigor TEXT NOT NULL, -- L1..L4: the weakest plot-ready point
  roofline_present BOOLEAN NOT NULL,
  strict BOOLEAN NOT NULL, -- false: published with --no-strict
  gaps TEXT, -- JSON array of "gate-id: message": gates passed knowingly
  engine TEXT,
  engine_version TEXT,
  source_commit TEXT,
  delivery TEXT,
  source_patch TEXT,
  source_url TEXT,
  champion TEXT, -- champion arm from champion.json, NULL when none
  row_json TEXT NOT NULL, -- the whole campaign_v1 record as JSON: nothing is lost
  PRIMARY KEY (campaign_id)
);

-- tpm_v1: one TPM operating point (peak or sla) of a deployment group (schema.TPMRow)
CREATE TABLE IF NOT EXISTS tpm_v1 (
  campaign_id TEXT NOT NULL, -- one run of a campaign: <UTC-ts>-<slug>, its default directory name; stable across re-publishes
  campaign TEXT NOT NULL,
  point TEXT NOT NULL,
  model TEXT NOT NULL,
  hardware TEXT NOT NULL,
  quant TEXT NOT NULL,
  tensor_parallel BIGINT NOT NULL,
  parallel_strategy TEXT NOT NULL,
  mtp BOOLEAN NOT NULL,
  shape TEXT NOT NULL,
  cell_id TEXT NOT NULL,
  concurrency BIGINT NOT NULL,
  load TEXT,
  cache_mode TEXT NOT NULL,
  engine TEXT,
  delivery TEXT,
  gpus_per_node BIGINT NOT NULL,
  mean_isl DOUBLE PRECISION,
  mean_osl DOUBLE PRECISION,
  ttft_avg_ms DOUBLE PRECISION,
  tpot_avg_ms DOUBLE PRECISION,
  ttft_sla_ms DOUBLE PRECISION NOT NULL,
  tpot_sla_ms DOUBLE PRECISION NOT NULL,
  output_tok_s_per_gpu DOUBLE PRECISION NOT NULL,
  total_tok_s_per_gpu DOUBLE PRECISION,
  output_tpm_per_gpu DOUBLE PRECISION NOT NULL,
  output_tpm_per_replica DOUBLE PRECISION NOT NULL,
  output_tpm_per_node DOUBLE PRECISION NOT NULL,
  total_tpm_per_gpu DOUBLE PRECISION,
  total_tpm_per_replica DOUBLE PRECISION,
  total_tpm_per_node DOUBLE PRECISION,
  flags TEXT, -- JSON array; NULL when empty
  row_json TEXT NOT NULL, -- the whole tpm_v1 record as JSON: nothing is lost
  PRIMARY KEY (campaign_id, point, model, hardware, quant, tensor_parallel, parallel_strategy, mtp, shape)
);

-- cost_v1: the economics of one TPM operating point (schema.CostRow): $/1M tokens and tokens per watt
CREATE TABLE IF NOT EXISTS cost_v1 (
  campaign_id TEXT NOT NULL, -- one run of a campaign: <UTC-ts>-<slug>, its default directory name; stable across re-publishes
  campaign TEXT NOT NULL,
  point TEXT NOT NULL,
  model TEXT NOT NULL,
  hardware TEXT NOT NULL,
  quant TEXT NOT NULL,
  tensor_parallel BIGINT NOT NULL,
  parallel_strategy TEXT NOT NULL,
  mtp BOOLEAN NOT NULL,
  shape TEXT NOT NULL,
  cell_id TEXT NOT NULL,
  concurrency BIGINT NOT NULL,
  load TEXT,
  usd_per_gpu_hour DOUBLE PRECISION,
  rate_estimate BOOLEAN NOT NULL,
  rate_source TEXT NOT NULL,
  usd_per_1m_output DOUBLE PRECISION,
  usd_per_1m_total DOUBLE PRECISION,
  power_watts_per_gpu DOUBLE PRECISION,
  tokens_per_watt DOUBLE PRECISION,
  row_json TEXT NOT NULL, -- the whole cost_v1 record as JSON: nothing is lost
  PRIMARY KEY (campaign_id, point, model, hardware, quant, tensor_parallel, parallel_strategy, mtp, shape)
);

-- roofline_v1: one point of an imported prefill/decode roofline sweep (schema.RooflineRow)
CREATE TABLE IF NOT EXISTS roofline_v1 (
  campaign_id TEXT NOT NULL, -- one run of a campaign: <UTC-ts>-<slug>, its default directory name; stable across re-publishes
  campaign TEXT NOT NULL,
  import_id TEXT NOT NULL,
  cell_id TEXT NOT NULL,
  phase TEXT NOT NULL,
  concurrency BIGINT NOT NULL,
  isl BIGINT NOT NULL,
  osl BIGINT NOT NULL,
  context_tokens BIGINT NOT NULL,
  num_prompts BIGINT NOT NULL,
  hardware TEXT NOT NULL,
  quant TEXT NOT NULL,
  tensor_parallel BIGINT NOT NULL,
  output_tok_s DOUBLE PRECISION,
  input_tok_s DOUBLE PRECISION,
  ttft_avg_ms DOUBLE PRECISION,
  itl_avg_ms DOUBLE PRECISION,
  flop_per_step DOUBLE PRECISION NOT NULL,
  bytes_per_step DOUBLE PRECISION NOT NULL,
  arithmetic_intensity DOUBLE PRECISION NOT NULL,
  ridge_flop_per_byte DOUBLE PRECISION NOT NULL,
  bound TEXT NOT NULL,
  achieved_tflops_per_gpu DOUBLE PRECISION,
  peak_tflops_per_gpu DOUBLE PRECISION NOT NULL,
  compute_pct DOUBLE PRECISION,
  peak_hbm_tb_s DOUBLE PRECISION NOT NULL,
  hbm_bw_delivered_pct DOUBLE PRECISION,
  dram_active_pct DOUBLE PRECISION,
  dcgm_sm_active DOUBLE PRECISION,
  dcgm_tensor_active DOUBLE PRECISION,
  dcgm_dram_active DOUBLE PRECISION,
  dcgm_nvlink_bytes_s DOUBLE PRECISION,
  flags TEXT, -- JSON array; NULL when empty
  row_json TEXT NOT NULL, -- the whole roofline_v1 record as JSON: nothing is lost
  PRIMARY KEY (campaign_id, import_id, phase, concurrency, isl)
);

-- history_v1: a scheduled run's verdict against its baseline and its searched cells' knees (schema.HistoryRow), from its verdict.json; what perfdag history reads beside atlas_v1 and campaign_v1
CREATE TABLE IF NOT EXISTS history_v1 (
  campaign_id TEXT NOT NULL, -- one run of a campaign: <UTC-ts>-<slug>, its default directory name; stable across re-publishes
  campaign TEXT NOT NULL,
  slot TEXT NOT NULL, -- the cron slot, RFC 3339 in the schedule's zone; a manual fire's is its fire time
  trigger TEXT NOT NULL, -- scheduled, catch-up, queued or manual (schedule --now)
  started TEXT NOT NULL,
  ended TEXT NOT NULL,
  outcome TEXT NOT NULL,
  verdict TEXT NOT NULL, -- GREEN, RED, FAILED, ERROR, INTERRUPTED, NO_BASELINE or NOT_COMPARED
  baseline TEXT, -- the baseline entry the run was diffed against
  baseline_sha256 TEXT,
  red_rows BIGINT NOT NULL,
  within_noise_rows BIGINT NOT NULL,
  drift_changes BIGINT NOT NULL, -- change points that made the run RED under schedule.tolerances.drift (0 when none)
  error TEXT,
  on_red TEXT,
  dir TEXT, -- the campaign directory it was published from
  perfdag_version TEXT, -- the perfdag that measured the run (its run.json)
  host TEXT, -- the machine the run ran on (its run.json)
  endpoints_json TEXT, -- each endpoint measured: [{name, model, server}], server being what it reported of itself (version, build)
  knees_json TEXT, -- each searched cell's knee: [{cell, slo, knee, knee_lo, knee_hi, knee_at_top, knee_unknown}]; NULL when no cell searched
  row_json TEXT NOT NULL, -- the whole history_v1 record as JSON: nothing is lost
  PRIMARY KEY (campaign_id)
);

-- lake_tables: the column signature each lake table was created with
CREATE TABLE IF NOT EXISTS lake_tables (
  table_name TEXT NOT NULL PRIMARY KEY,
  columns_sha256 TEXT NOT NULL, -- sha256 of the table's name, columns (name type null) and key
  created_at TEXT NOT NULL -- RFC 3339 UTC
);
