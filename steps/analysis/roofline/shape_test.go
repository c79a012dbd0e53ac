package roofline

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
)

const (
	llamaConfig    = "testdata/llama-3.1-70b.config.json"
	deepseekConfig = "testdata/deepseek-v3.config.json"
)

func mustShape(t *testing.T, path string) schema.ModelShape {
	t.Helper()
	s, err := LoadShape(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestShapeLlama70B(t *testing.T) {
	// meta-llama/Llama-3.1-70B-Instruct config.json: D 8192, L 80, q 64, kv 8, d = 8192/64 = 128,
	// I 28672, V 128256 (checked against telemetry.md §3.2: 69.5 B matmul params, ≈139 GFLOP/token).
	//   attention/layer = D·(q+2kv)·d + q·d·D = 8192·80·128 + 64·128·8192
	//                   = 83,886,080 + 67,108,864 = 150,994,944
	//   MLP/layer       = 3·D·I = 3·8192·28672 = 704,643,072
	//   80 layers       = 80 · 855,638,016 = 68,451,041,280
	//   LM head         = D·V = 8192·128256 = 1,050,673,152
	//   active params   = 69,501,714,432          FLOP/token = 2× = 139,003,428,864
	//   total params    = active + embeddings 1,050,673,152 = 70,552,387,584
	//   attention FLOP per context token = 4·L·q·d = 4·80·64·128 = 2,621,440
	//   KV elements/token = 2·L·kv·d = 2·80·8·128 = 163,840 → ×2 B (BF16) = 327,680 B
	s := mustShape(t, llamaConfig)
	ints := []struct {
		name      string
		got, want int64
	}{
		{"attention params/layer", AttentionParamsPerLayer(s), 150_994_944},
		{"active params", s.ActiveParams, 69_501_714_432},
		{"total params", s.TotalParams, 70_552_387_584},
		{"kv elems/token", s.KVElemsPerToken, 163_840},
		{"kv bytes/token bf16", s.KVElemsPerToken * 2, 327_680},
		{"head_dim", int64(s.HeadDim), 128},
		{"moe layers", int64(s.MoELayers), 0},
	}
	for _, c := range ints {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
	if s.FLOPPerToken != 139_003_428_864 || s.AttnFLOPPerCtxTok != 2_621_440 || s.Attention != "gqa" {
		t.Errorf("flop/token %v attn/ctx %v attention %q", s.FLOPPerToken, s.AttnFLOPPerCtxTok, s.Attention)
	}
}

func TestShapeDeepSeekV3(t *testing.T) {
	// deepseek-ai/DeepSeek-V3 config.json: D 7168, L 61 (3 dense, 58 MoE), q 128, V 129280,
	// MLA r_q 1536 r_kv 512 nope 128 rope 64 v 128; E 256, k 8, S 1, Im 2048, I 18432.
	// Checked against telemetry.md §3.2 (187,105,280/layer; 671.0 B total; 36.6 B active;
	// ≈73 GFLOP/token) and the DeepSeek-V3 report (671 B total, 37 B activated).
	//   MLA/layer = r_q·D + q·(nope+rope)·r_q + D·(r_kv+rope) + q·(nope+v)·r_kv + q·v·D
	//             = 11,010,048 + 37,748,736 + 4,128,768 + 16,777,216 + 117,440,512 = 187,105,280
	//   expert    = 3·D·Im = 3·7168·2048 = 44,040,192;   router = D·E = 7168·256 = 1,835,008
	//   dense MLP = 3·D·I = 3·7168·18432 = 396,361,728;  LM head = embeddings = D·V = 926,679,040
	//   dense params = 61·187,105,280 + 3·396,361,728 + 58·(1,835,008 + 44,040,192) + 926,679,040
	//                = 11,413,422,080 + 1,189,085,184 + 2,660,761,600 + 926,679,040 = 16,189,947,904
	//   active = dense + 58·8·44,040,192 = 16,189,947,904 + 20,434,649,088 = 36,624,596,992
	//   FLOP/token = 2 × 36,624,596,992 = 73,249,193,984
	//   total  = dense + 58·256·44,040,192 + embeddings
	//          = 16,189,947,904 + 653,908,770,816 + 926,679,040 = 671,025,397,760
	//   absorbed attention FLOP per context token = 2·L·q·(r_kv+rope+r_kv) = 2·61·128·1088 = 16,990,208
	//   KV elements/token = L·(r_kv+rope) = 61·576 = 35,136 → ×2 B (BF16) = 70,272 B
	s := mustShape(t, deepseekConfig)
	ints := []struct {
		name      string
		got, want int64
	}{
		{"attention params/layer", AttentionParamsPerLayer(s), 187_105_280},
		{"expert params", s.ExpertParams, 44_040_192},
		{"dense params", s.DenseParams, 16_189_947_904},
		{"active params", s.ActiveParams, 36_624_596_992},
		{"total params", s.TotalParams, 671_025_397_760},
		{"kv bytes/token bf16", s.KVElemsPerToken * 2, 70_272},
		{"moe layers", int64(s.MoELayers), 58},
		{"dense layers", int64(s.DenseLayers), 3},
	}
	for _, c := range ints {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
	if s.FLOPPerToken != 73_249_193_984 || s.AttnFLOPPerCtxTok != 16_990_208 || s.Attention != "mla" {
		t.Errorf("flop/token %v attn/ctx %v attention %q", s.FLOPPerToken, s.AttnFLOPPerCtxTok, s.Attention)
	}
}

// rewrite loads a testdata config, edits it and writes it to a temp file.
func rewrite(t *testing.T, src string, edit func(m map[string]any)) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	out, _ := json.Marshal(m)
	path := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestShapeTextConfigNesting(t *testing.T) {
	path := rewrite(t, llamaConfig, func(m map[string]any) {
		inner := map[string]any{}
		for k, v := range m {
			inner[k] = v
			delete(m, k)
		}
		m["model_type"] = "llava"
		m["text_config"] = inner
	})
	s := mustShape(t, path)
	if s.ActiveParams != 69_501_714_432 || s.KVElemsPerToken != 163_840 {
		t.Errorf("nested config: active %d kv %d", s.ActiveParams, s.KVElemsPerToken)
	}
}

func TestShapeMixtralStyle(t *testing.T) {
	// Mixtral-8x7B: D 4096, L 32, q 32, kv 8, d 128, E 8 (num_local_experts), k 2, expert width
	// from intermediate_size 14336, V 32000, every layer MoE.
	//   attention/layer = 4096·48·128 + 32·128·4096 = 25,165,824 + 16,777,216 = 41,943,040
	//   expert = 3·4096·14336 = 176,160,768; router = 4096·8 = 32,768; LM head = 4096·32000 = 131,072,000
	//   active = 32·(41,943,040 + 32,768 + 2·176,160,768) + 131,072,000
	//          = 32·394,297,344 + 131,072,000 = 12,617,515,008 + 131,072,000 = 12,748,587,008
	path := rewrite(t, llamaConfig, func(m map[string]any) {
		m["hidden_size"], m["num_hidden_layers"], m["num_attention_heads"], m["num_key_value_heads"] = 4096, 32, 32, 8
		m["intermediate_size"], m["vocab_size"], m["num_local_experts"], m["num_experts_per_tok"] = 14336, 32000, 8, 2
	})
	s := mustShape(t, path)
	if s.MoELayers != 32 || s.ActiveParams != 12_748_587_008 {
		t.Errorf("mixtral: moe layers %d active %d", s.MoELayers, s.ActiveParams)
	}
}

func TestShapeMissingFieldNamesFileAndField(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		edit  func(m map[string]any)
		field string
	}{
		{"hidden_size", llamaConfig, func(m map[string]any) { delete(m, "hidden_size") }, "hidden_size"},
		{"layers", llamaConfig, func(m map[string]any) { delete(m, "num_hidden_layers") }, "num_hidden_layers"},
		{"vocab", llamaConfig, func(m map[string]any) { m["vocab_size"] = nil }, "vocab_size"},
		{"dense intermediate", llamaConfig, func(m map[string]any) { delete(m, "intermediate_size") }, "intermediate_size"},
		{"experts per token", deepseekConfig, func(m map[string]any) { delete(m, "num_experts_per_tok") }, "num_experts_per_tok"},
		{"mla rope dim", deepseekConfig, func(m map[string]any) { delete(m, "qk_rope_head_dim") }, "qk_rope_head_dim"},
		{"not a number", llamaConfig, func(m map[string]any) { m["num_attention_heads"] = "sixty-four" }, "num_attention_heads"},
		{"fractional", llamaConfig, func(m map[string]any) { m["num_key_value_heads"] = 7.5 }, "num_key_value_heads"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := rewrite(t, tt.src, tt.edit)
			_, err := LoadShape(path)
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "field "+tt.field) {
				t.Errorf("err = %v, want it to name %s and field %s", err, path, tt.field)
			}
		})
	}
}

func approx(a, b, rel float64) bool { return math.Abs(a-b) <= rel*math.Max(math.Abs(a), math.Abs(b)) }
