package roofline

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/perfdag/perfdag/engine/bounded"
	"github.com/perfdag/perfdag/schema"
)

// configFields reads a config.json's values with errors naming the file and the field.
type configFields struct {
	path string
	m    map[string]json.RawMessage
}

// number decodes field (the first of names present and not null) into an int; ok=false when absent.
func (c configFields) number(names ...string) (int, string, bool, error) {
	for _, n := range names {
		raw, present := c.m[n]
		if !present || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			continue
		}
		var f float64
		if err := json.Unmarshal(raw, &f); err != nil {
			return 0, n, true, fmt.Errorf("%s: field %s: want a number, got %s", c.path, n, raw)
		}
		if f < 0 || f != float64(int(f)) {
			return 0, n, true, fmt.Errorf("%s: field %s: want a non-negative integer, got %s", c.path, n, raw)
		}
		return int(f), n, true, nil
	}
	return 0, names[0], false, nil
}

// required is int that must be present and positive.
func (c configFields) required(names ...string) (int, error) {
	v, name, ok, err := c.number(names...)
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, fmt.Errorf("%s: field %s: missing (required for the roofline model)", c.path, name)
	}
	if v <= 0 {
		return 0, fmt.Errorf("%s: field %s: must be positive, got %d", c.path, name, v)
	}
	return v, nil
}

// optional is int with a default when absent.
func (c configFields) optional(def int, names ...string) (int, error) {
	v, _, ok, err := c.number(names...)
	if err != nil || !ok {
		return def, err
	}
	return v, nil
}

// LoadShape reads a Hugging Face config.json (text_config nesting included) into a ModelShape
// with its derived per-token figures. A missing required field is an error naming the file
// and the field.
func LoadShape(path string) (schema.ModelShape, error) {
	b, err := bounded.ReadFile("model config", path, MaxBundleFileBytes)
	if err != nil {
		return schema.ModelShape{}, fmt.Errorf("read model config: %w", err)
	}
	return ParseShape(path, b)
}

// ParseShape is LoadShape over bytes already read; path names the source in errors.
func ParseShape(path string, data []byte) (schema.ModelShape, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return schema.ModelShape{}, fmt.Errorf("%s: %w", path, err)
	}
	c := configFields{path: path, m: top}
	if raw, ok := top["text_config"]; ok && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		var inner map[string]json.RawMessage
		if err := json.Unmarshal(raw, &inner); err != nil {
			return schema.ModelShape{}, fmt.Errorf("%s: field text_config: %w", path, err)
		}
		c = configFields{path: path + " text_config", m: inner}
	}
	s := schema.ModelShape{Schema: schema.SchemaModelShape, Source: path, Attention: "gqa"}
	var err error
	if raw, ok := c.m["model_type"]; ok {
		_ = json.Unmarshal(raw, &s.ModelType)
	}
	steps := []struct {
		dst   *int
		names []string
	}{
		{&s.HiddenSize, []string{"hidden_size"}},
		{&s.Layers, []string{"num_hidden_layers"}},
		{&s.Heads, []string{"num_attention_heads"}},
		{&s.Vocab, []string{"vocab_size"}},
	}
	for _, st := range steps {
		if *st.dst, err = c.required(st.names...); err != nil {
			return schema.ModelShape{}, err
		}
	}
	if s.KVHeads, err = c.optional(s.Heads, "num_key_value_heads"); err != nil {
		return schema.ModelShape{}, err
	}
	if s.HeadDim, err = c.optional(0, "head_dim"); err != nil {
		return schema.ModelShape{}, err
	}
	if s.HeadDim == 0 {
		if s.HiddenSize%s.Heads != 0 {
			return schema.ModelShape{}, fmt.Errorf("%s: field head_dim: missing, and hidden_size %d is not divisible by num_attention_heads %d", c.path, s.HiddenSize, s.Heads)
		}
		s.HeadDim = s.HiddenSize / s.Heads
	}
	if err := readMoE(c, &s); err != nil {
		return schema.ModelShape{}, err
	}
	if err := readMLA(c, &s); err != nil {
		return schema.ModelShape{}, err
	}
	if s.DenseLayers > 0 {
		if s.Inter, err = c.required("intermediate_size"); err != nil {
			return schema.ModelShape{}, err
		}
	} else if s.Inter, err = c.optional(0, "intermediate_size"); err != nil {
		return schema.ModelShape{}, err
	}
	tied := false
	if raw, ok := c.m["tie_word_embeddings"]; ok {
		_ = json.Unmarshal(raw, &tied)
	} else if raw, ok := top["tie_word_embeddings"]; ok {
		_ = json.Unmarshal(raw, &tied)
	}
	derive(&s, tied)
	return s, nil
}

// readMoE reads the routed-expert fields and decides which layers are MoE.
func readMoE(c configFields, s *schema.ModelShape) error {
	var err error
	if s.RoutedExperts, err = c.optional(0, "n_routed_experts", "num_experts", "num_local_experts"); err != nil {
		return err
	}
	if s.RoutedExperts == 0 {
		s.DenseLayers = s.Layers
		return nil
	}
	if s.ExpertsPerToken, err = c.required("num_experts_per_tok", "moe_topk"); err != nil {
		return err
	}
	if s.ExpertsPerToken > s.RoutedExperts {
		return fmt.Errorf("%s: field num_experts_per_tok: %d exceeds the %d routed experts", c.path, s.ExpertsPerToken, s.RoutedExperts)
	}
	if s.SharedExperts, err = c.optional(0, "n_shared_experts", "num_shared_experts"); err != nil {
		return err
	}
	// Mixtral-style configs give the expert width as intermediate_size.
	if s.MoEInter, err = c.required("moe_intermediate_size", "intermediate_size"); err != nil {
		return err
	}
	if s.FirstKDense, err = c.optional(0, "first_k_dense_replace"); err != nil {
		return err
	}
	if s.MoELayerFreq, err = c.optional(1, "moe_layer_freq", "interleave_moe_layer_step", "decoder_sparse_step"); err != nil {
		return err
	}
	if s.MoELayerFreq <= 0 {
		return fmt.Errorf("%s: field moe_layer_freq: must be positive", c.path)
	}
	_, step, _, _ := c.number("moe_layer_freq", "interleave_moe_layer_step", "decoder_sparse_step")
	for i := 0; i < s.Layers; i++ {
		moe := false
		switch step {
		case "moe_layer_freq": // DeepSeek: layer i ≥ first_k_dense_replace with i % freq == 0
			moe = i >= s.FirstKDense && i%s.MoELayerFreq == 0
		default: // Llama 4 / Qwen MoE: every step-th layer, counting from 1
			moe = i >= s.FirstKDense && (i+1)%s.MoELayerFreq == 0
		}
		if moe {
			s.MoELayers++
		}
	}
	s.DenseLayers = s.Layers - s.MoELayers
	return nil
}

// readMLA reads multi-head latent attention fields when kv_lora_rank is set.
func readMLA(c configFields, s *schema.ModelShape) error {
	var err error
	if s.KVLoRARank, err = c.optional(0, "kv_lora_rank"); err != nil || s.KVLoRARank == 0 {
		return err
	}
	s.Attention = "mla"
	if s.QLoRARank, err = c.optional(0, "q_lora_rank"); err != nil { // null in DeepSeek-V2-Lite: direct q projection
		return err
	}
	for _, f := range []struct {
		dst  *int
		name string
	}{{&s.QKNopeHeadDim, "qk_nope_head_dim"}, {&s.QKRopeHeadDim, "qk_rope_head_dim"}, {&s.VHeadDim, "v_head_dim"}} {
		if *f.dst, err = c.required(f.name); err != nil {
			return err
		}
	}
	return nil
}

// derive fills the parameter counts and per-token figures (telemetry.md §3.2–3.4).
func derive(s *schema.ModelShape, tied bool) {
	D, q, kv, d := int64(s.HiddenSize), int64(s.Heads), int64(s.KVHeads), int64(s.HeadDim)
	L := int64(s.Layers)
	attn := AttentionParamsPerLayer(*s)
	denseMLP := 3 * D * int64(s.Inter)
	expert := 3 * D * int64(s.MoEInter)
	router := D * int64(s.RoutedExperts)
	shared := int64(s.SharedExperts) * expert
	lmHead := D * int64(s.Vocab)
	moeL, denseL := int64(s.MoELayers), int64(s.DenseLayers)

	s.ExpertParams = expert
	s.DenseParams = L*attn + denseL*denseMLP + moeL*(router+shared) + lmHead
	s.ActiveParams = s.DenseParams + moeL*int64(s.ExpertsPerToken)*expert
	s.TotalParams = s.DenseParams + moeL*int64(s.RoutedExperts)*expert
	if !tied {
		s.TotalParams += lmHead // embeddings are a separate matrix from the LM head
	}
	s.FLOPPerToken = 2 * float64(s.ActiveParams)
	if s.Attention == "mla" {
		rkv, rope := int64(s.KVLoRARank), int64(s.QKRopeHeadDim)
		// Absorbed MLA decode: scores over the r_kv+d_r latent, values over r_kv.
		s.AttnFLOPPerCtxTok = float64(2 * L * q * (rkv + rope + rkv))
		s.KVElemsPerToken = L * (rkv + rope)
	} else {
		s.AttnFLOPPerCtxTok = float64(4 * L * q * d) // QKᵀ 2·q·d + AV 2·q·d per layer
		s.KVElemsPerToken = 2 * L * kv * d
	}
}

// AttentionParamsPerLayer is the attention matmul parameters of one layer: GQA
// D·(q+2kv)·d + q·d·D; MLA r_q·D + q·(nope+rope)·r_q + D·(r_kv+rope) + q·(nope+v)·r_kv + q·v·D.
func AttentionParamsPerLayer(s schema.ModelShape) int64 {
	D, q := int64(s.HiddenSize), int64(s.Heads)
	if s.Attention != "mla" {
		kv, d := int64(s.KVHeads), int64(s.HeadDim)
		return D*(q+2*kv)*d + q*d*D
	}
	rq, rkv := int64(s.QLoRARank), int64(s.KVLoRARank)
	nope, rope, v := int64(s.QKNopeHeadDim), int64(s.QKRopeHeadDim), int64(s.VHeadDim)
	qProj := D * q * (nope + rope)
	if rq > 0 {
		qProj = rq*D + q*(nope+rope)*rq
	}
	return qProj + D*(rkv+rope) + q*(nope+v)*rkv + q*v*D
}
