package report

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const atlasRow = `{"schema":"atlas_v1","campaign":"c","cell_id":"a","concurrency":1,"model":"m","hardware":"B200","quant":"FP8","tensor_parallel":8,"parallel_strategy":"EP","mtp":false,"max_num_batched_tokens":2048,"engine":"vllm","delivery":"release","shape":"aa-1k","cache_mode":"warm","backend":"perfdag","gpus":8,"cell_status":"full","plot_ready":true,"num_prompts":10,"request_count":10,"error_count":0,"ttft_avg_ms":120.5,"ttft_p50_ms":null,"ttft_p90_ms":null,"ttft_p95_ms":null,"ttft_p99_ms":null,"ttfo_avg_ms":null,"ttfo_coverage":null,"itl_avg_ms":null,"itl_p50_ms":null,"itl_p99_ms":null,"request_latency_avg_ms":null,"request_latency_p50_ms":null,"request_latency_p99_ms":null,"request_throughput":2,"output_tok_s":null,"total_tok_s":null,"output_tok_s_per_gpu":50,"total_tok_s_per_gpu":null,"tok_s_per_user":null,"aa_output_speed":null,"mean_input_tokens":null,"mean_output_tokens":null,"reasoning_token_avg":null,"acceptance_length":null,"spec_accept_rate":null,"prefix_cache_hit_rate":null,"dcgm_sm_active":null,"dcgm_sm_occupancy":null,"dcgm_tensor_active":null,"dcgm_dram_active":null,"dcgm_gr_engine_active":null,"dcgm_nvlink_bytes_s":null,"dcgm_pcie_bytes_s":null,"power_watts_per_gpu":null,"tokens_per_watt":null,"dcgm_grounded":false,"sol_rigor":"L1"}`

// everything names every file of TestReadReadsEveryPart as the steps would.
var everything = campaigndir.Evidence{
	Atlas: campaigndir.Atlas(), TPM: campaigndir.TPMJSON(), Champion: campaigndir.Champion(),
	DCGM:  []campaigndir.DCGMFiles{{Cell: "a", Correlation: campaigndir.DCGMCorrelation("a")}},
	Spec:  []campaigndir.SpecFiles{{Cell: "a", Concurrency: 1, Window: campaigndir.SpecWindow("a", schema.Conc(1))}},
	Cells: []campaigndir.CellFiles{{Cell: "r-decode", Sweep: campaigndir.RooflineSweep("r-decode")}},
}

func everyFile() map[string]string {
	return map[string]string{
		campaigndir.Atlas():                         atlasRow + "\n\n",
		campaigndir.TPMJSON():                       `{"schema":"tpm_summary_v1","campaign":"c","caveat":"warm","ttft_sla_ms":2000,"tpot_sla_ms":50,"gpus_per_node":8,"groups":[]}`,
		campaigndir.Champion():                      `{"schema":"champion_v1","campaign":"c","focus_metric":"output_tok_s_per_gpu","tpot_slo_ms":50,"top_x":3,"baseline":"","champion":"x","delivery":"release","arms":[],"arms_considered":1,"recommendation":"ship x"}`,
		campaigndir.DCGMCorrelation("a"):            `{"schema":"dcgm_correlation_v1","cell":"a","source":"frozen","points":[{"concurrency":1,"start_ns":0,"end_ns":0,"gpus":8,"samples":0,"sm_active":0.5,"sm_occupancy":null,"tensor_active":null,"dram_active":null,"gr_engine_active":null,"nvlink_bytes_s":null,"pcie_bytes_s":null,"power_watts_per_gpu":700,"tokens_per_watt":null}],"dcgm_grounded":true,"sol_rigor":"L3"}`,
		campaigndir.DCGMCorrelation("b"):            `{"schema":"dcgm_correlation_v1","cell":"b","source":"stale, named by no step","points":[],"dcgm_grounded":false,"sol_rigor":"L1"}`,
		campaigndir.SpecWindow("a", schema.Conc(1)): `{"schema":"spec_window_v1","cell":"a","concurrency":1,"source":"vllm","drafts":10,"draft_tokens":30,"accepted_tokens":15,"acceptance_length":2.5,"spec_accept_rate":0.5,"prefix_cache_hit_rate_pre":null,"prefix_cache_hit_rate_post":null,"prefix_cache_hit_rate":null,"kv_cache_usage_peak":null,"num_requests_running_peak":null,"generation_tokens":null,"avg_generation_throughput_toks_per_s":null,"window_s":3}`,
		campaigndir.RooflineSweep("r-decode"):       `{"schema":"roofline_sweep_v1","campaign":"c","import_id":"r","decode_cell":"r-decode","prefill_cell":"r-prefill","hardware":"GB300","quant":"NVFP4","tensor_parallel":4,"cache_mode":"cold","weight_bytes_per_param":0.5625,"kv_bytes_per_elem":1,"provenance":{"schema":"experiment_provenance_v1","engine":"vllm","engine_version":"v1","delivery":"release","model":"m","hardware":"GB300","tensor_parallel":4,"quant":"NVFP4","capture_date":"2026-01-01"},"model":{"schema":"model_shape_v1","source":"x","attention":"gqa","hidden_size":1,"num_hidden_layers":1,"num_attention_heads":1,"num_key_value_heads":1,"head_dim":1,"intermediate_size":1,"vocab_size":1,"moe_layers":0,"dense_layers":1,"total_params":1,"active_params":1,"dense_params":1,"expert_params":0,"flop_per_token":2,"attn_flop_per_ctx_token":0,"kv_elems_per_token":2},"hbm_label":"h","dram_label":"d","rows":[]}`,
	}
}

func TestReadNothingNamedReadsNothing(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, everyFile())
	in, err := Read(context.Background(), campaigndir.Unrecorded(dir), campaigndir.Evidence{})
	if err != nil {
		t.Fatalf("no evidence: %v", err)
	}
	if in.Atlas != nil || in.TPM != nil || in.Champion != nil || in.DCGM != nil || in.Roofline != nil || in.Spec != nil {
		t.Errorf("files no step named were read: %+v", in)
	}
}

func TestReadReadsEveryPart(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, everyFile())
	in, err := Read(context.Background(), campaigndir.Unrecorded(dir), everything)
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case len(in.Atlas) != 1 || *in.Atlas[0].TTFTAvgMs != 120.5:
		t.Errorf("atlas: %+v", in.Atlas)
	case in.TPM == nil || in.TPM.Caveat != "warm":
		t.Errorf("tpm: %+v", in.TPM)
	case in.Champion == nil || in.Champion.Champion != "x":
		t.Errorf("champion: %+v", in.Champion)
	case len(in.DCGM) != 1 || *in.DCGM[0].Points[0].PowerWattsPerGPU != 700:
		t.Errorf("dcgm (the correlation no step named must not be read): %+v", in.DCGM)
	case len(in.Spec) != 1 || *in.Spec[0].AcceptanceLength != 2.5:
		t.Errorf("spec windows: %+v", in.Spec)
	case len(in.Roofline) != 1 || in.Roofline[0].ImportID != "r":
		t.Errorf("roofline: %+v", in.Roofline)
	}
}

func TestReadNamesTheBadFile(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  []string // substrings of the error
	}{
		{"bad atlas line", map[string]string{campaigndir.Atlas(): atlasRow + "\n{not json\n"}, []string{campaigndir.Atlas() + ":2"}},
		{"unknown atlas field", map[string]string{campaigndir.Atlas(): `{"schema":"atlas_v1","bogus":1}` + "\n"}, []string{campaigndir.Atlas() + ":1", "bogus"}},
		{"truncated tpm summary", map[string]string{campaigndir.TPMJSON(): "{\n\"schema\": \"tpm_summary_v1\",\n"}, []string{campaigndir.TPMJSON()}},
		{"unknown champion field", map[string]string{campaigndir.Champion(): `{"schema":"champion_v1","winner":"x"}`}, []string{campaigndir.Champion(), "winner"}},
		{"bad dcgm file", map[string]string{campaigndir.DCGMCorrelation("a"): "[]"}, []string{campaigndir.DCGMCorrelation("a")}},
		// a file its step named but that is gone (renamed, deleted) is an error, never "no data"
		{"named file missing", map[string]string{campaigndir.SpecWindow("a", schema.Conc(1)): ""}, []string{campaigndir.SpecWindow("a", schema.Conc(1)), "no such file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			files := everyFile()
			for k, v := range tt.files {
				files[k] = v
			}
			writeFiles(t, dir, files)
			for k, v := range tt.files {
				if v == "" {
					_ = os.Remove(campaigndir.Abs(dir, k))
				}
			}
			_, err := Read(context.Background(), campaigndir.Unrecorded(dir), everything)
			if err == nil {
				t.Fatal("Read accepted a malformed file")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %q", err, w)
				}
			}
		})
	}
}

func TestSafeURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"http://vllm.svc:8000", "http://vllm.svc:8000"},
		{"https://user:hunter2@api.example.com/v1?api_key=sk-123#frag", "https://user@api.example.com/v1"},
		{"sim://smoke", "sim://smoke"},
		{"not a url?token=abc", "not a url"},
	}
	for _, tt := range tests {
		if got := safeURL(tt.in); got != tt.want {
			t.Errorf("safeURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestRedactor(t *testing.T) {
	t.Setenv("PERFDAG_TEST_KEY", "sk-live-abcdef")
	t.Setenv("PERFDAG_TEST_SHORT", "ab")
	in := Input{Campaign: &schema.Campaign{Endpoints: map[string]schema.Endpoint{
		"a": {APIKeyEnv: "PERFDAG_TEST_KEY"}, "b": {APIKeyEnv: "PERFDAG_TEST_SHORT"}, "c": {},
	}}}
	r := redactor(in)
	if got := r("token sk-live-abcdef in text"); got != "token [redacted] in text" {
		t.Errorf("redact = %q", got)
	}
	// A two-character value is too short to redact safely: it would mangle ordinary words.
	if got := r("about"); got != "about" {
		t.Errorf("short secret redacted ordinary text: %q", got)
	}
}
