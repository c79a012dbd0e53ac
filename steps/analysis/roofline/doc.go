// Package roofline places measured prefill and decode points on a per-GPU roofline: it derives
// an analytical model shape from a Hugging Face config.json (dense GQA, MoE, MLA, text_config
// nesting), computes FLOP and HBM bytes per step and the arithmetic intensity (AI) they imply,
// compares AI with the hardware ridge point from steps/analysis/catalog, and imports an operator-captured
// roofline bundle into atlas cells and a roofline_sweep.json (report page 7).
//
// # Model (telemetry.md §3)
//
// FLOP per token = 2 × matmul parameters touched per token (attention projections, dense MLP or
// router + k routed + S shared experts, LM head), plus attention scores at context c:
// 4·L·q·d·c for GQA, 2·L·q·(2·r_kv + d_rope)·c for MLA in absorbed form. Bytes per decode step
// for B requests at context c = b_w × (dense params + MoE layers × E·(1−(1−k/E)^B) × expert
// params) + B·c·KV bytes/token + B·KV bytes/token written. KV bytes/token = 2·L·kv·d·b_kv (GQA),
// L·(r_kv + d_rope)·b_kv (MLA). AI = FLOP ÷ bytes; ridge = peak FLOP/s ÷ HBM B/s for the
// hardware and quant; AI below the ridge is memory-bound. Norms, biases, activations and TP
// all-reduce traffic are left out: they are small beside weights and KV at inference.
//
// # Bundle layout
//
// A bundle is one directory, one configuration (engine, hardware, TP, quant), captured against
// one deployment. All files are JSON and decoded strictly (unknown fields are errors):
//
//	provenance.json  experiment_provenance_v1: engine, engine_version, commit, delivery,
//	                 patch, source_url, model, hardware, tensor_parallel, quant,
//	                 kv_cache_dtype (bf16 | fp8 | nvfp4; default bf16), capture_date.
//	                 engine, engine_version, delivery and capture_date are required;
//	                 hardware, tensor_parallel and quant may come from Options instead.
//	config.json      the model's Hugging Face config.json (Options.ModelConfig replaces it).
//	decode.json      {"points": [{concurrency, output_tok_s, num_prompts, isl, osl,
//	                 ttft_avg_ms?, itl_avg_ms?, request_throughput?}]} — the decode
//	                 concurrency sweep; output_tok_s is the whole replica's.
//	prefill.json     {"points": [{isl, ttft_avg_ms, input_tok_s, num_prompts, concurrency?}]}
//	                 — the prefill ISL sweep (concurrency defaults to 1).
//	dcgm.json        {"points": [{phase (decode | prefill), concurrency, isl, sm_active,
//	                 tensor_active, dram_active, nvlink_bytes_s?, power_watts_per_gpu?}]} —
//	                 DCGM means (ratios 0–1, averaged over the replica's GPUs) for each
//	                 (phase, concurrency, ISL) window, captured in-pod during that window.
//
// testdata/bundle is a complete example (Llama-3.1-70B, H100 TP4; illustrative numbers).
//
// # Import
//
// Import writes cells/<id>-decode and cells/<id>-prefill (backend roofline-import; rows with
// DCGM means are dcgm_grounded at sol_rigor L3) and cells/<id>-decode/roofline_sweep.json with
// roofline_v1 rows and the embedded model shape. For decode points it reports, side by side and
// labelled as such, the byte-grounded delivered HBM bandwidth % (analytical bytes per step ×
// measured steps/s ÷ peak, where steps/s = output tok/s ÷ concurrency) and the DCGM DRAM_ACTIVE
// duty-cycle proxy %, which is not a byte count. A point with num_prompts < 2 × concurrency is
// flagged steady_window_undercount and returned as a warning. Several configurations import
// into one campaign under distinct ids.
package roofline
