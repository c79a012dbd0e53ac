package workload

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/perfdag/perfdag/schema"
)

// Body returns the JSON of one streaming chat-completions request with the AA parameters:
// temperature 0, top_p 1, max_tokens = max_completion_tokens = min_tokens = the answer budget,
// ignore_eos, and usage in the stream. workload.extra_body is merged last, recursively into
// objects, so it can override any of these; a null value there removes the key (for servers
// that reject min_tokens, say).
func Body(model string, p Prompt, w schema.Workload) ([]byte, error) {
	if model == "" {
		return nil, errors.New("request body: the endpoint's model is empty")
	}
	if p.OutputTokens <= 0 {
		return nil, fmt.Errorf("request body: output token budget %d: want a positive answer length", p.OutputTokens)
	}
	body := map[string]any{
		"model":                 model,
		"messages":              []any{map[string]any{"role": "user", "content": p.Text}},
		"stream":                true,
		"stream_options":        map[string]any{"include_usage": true},
		"temperature":           0,
		"top_p":                 1,
		"max_tokens":            p.OutputTokens,
		"max_completion_tokens": p.OutputTokens,
		"min_tokens":            p.OutputTokens,
		"ignore_eos":            true,
	}
	if err := merge(body, w.ExtraBody, "workload.extra_body"); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.Grow(len(p.Text) + 512)
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(body); err != nil {
		return nil, fmt.Errorf("request body: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// merge applies extra onto dst: objects merge key by key, null deletes, anything else
// replaces. Keys are visited in order so an error always names the same field.
func merge(dst map[string]any, extra map[string]any, path string) error {
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v, err := plain(extra[k], path+"."+k)
		if err != nil {
			return err
		}
		if v == nil {
			delete(dst, k)
			continue
		}
		sub, ok := v.(map[string]any)
		if !ok {
			dst[k] = v
			continue
		}
		// An object merges into the object it meets (into an empty one otherwise, which
		// drops its nulls): {stream_options: {continuous_usage_stats: true}} keeps
		// include_usage.
		cur, _ := dst[k].(map[string]any)
		next := make(map[string]any, len(cur)+len(sub))
		for ck, cv := range cur {
			next[ck] = cv
		}
		if err := merge(next, sub, path+"."+k); err != nil {
			return err
		}
		dst[k] = next
	}
	return nil
}

// plain converts a decoded YAML value into JSON-encodable form (maps keyed by any become
// maps keyed by string) and rejects what JSON cannot carry.
func plain(v any, path string) (any, error) {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			p, err := plain(x, path+"."+k)
			if err != nil {
				return nil, err
			}
			out[k] = p
		}
		return out, nil
	case map[any]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			ks := fmt.Sprint(k)
			p, err := plain(x, path+"."+ks)
			if err != nil {
				return nil, err
			}
			out[ks] = p
		}
		return out, nil
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			p, err := plain(x, fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return nil, err
			}
			out[i] = p
		}
		return out, nil
	case nil, bool, string, float64, float32, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, json.Number:
		return t, nil
	}
	return nil, fmt.Errorf("%s: a %T cannot be sent in a JSON request body", path, v)
}
