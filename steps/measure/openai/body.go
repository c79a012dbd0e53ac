package openai

import (
	"encoding/json"
	"fmt"
)

// prepareBody returns the caller's JSON request object with the streaming switches set: for
// a stream, `stream: true` and `stream_options.include_usage: true` (other stream_options
// kept); for a plain call, `stream: false` and no stream_options (vLLM rejects them then).
// It also returns the output budget the body asks for (max_completion_tokens, else
// max_tokens; 0 when neither).
func prepareBody(body []byte, stream bool) ([]byte, int, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, 0, fmt.Errorf("request body: want a JSON object: %w", err)
	}
	if m == nil {
		return nil, 0, fmt.Errorf("request body: want a JSON object, got null")
	}
	budget := 0
	for _, k := range []string{"max_tokens", "max_completion_tokens"} {
		if raw, ok := m[k]; ok {
			var n int
			if err := json.Unmarshal(raw, &n); err != nil {
				return nil, 0, fmt.Errorf("request body: field %s: want an integer: %w", k, err)
			}
			budget = n
		}
	}
	if stream {
		m["stream"] = json.RawMessage("true")
		opts := map[string]json.RawMessage{}
		if raw, ok := m["stream_options"]; ok && string(raw) != "null" {
			if err := json.Unmarshal(raw, &opts); err != nil {
				return nil, 0, fmt.Errorf("request body: field stream_options: want an object: %w", err)
			}
		}
		opts["include_usage"] = json.RawMessage("true")
		raw, err := json.Marshal(opts)
		if err != nil {
			return nil, 0, fmt.Errorf("request body: encode stream_options: %w", err)
		}
		m["stream_options"] = raw
	} else {
		m["stream"] = json.RawMessage("false")
		delete(m, "stream_options")
	}
	out, err := json.Marshal(m)
	if err != nil {
		return nil, 0, fmt.Errorf("request body: encode: %w", err)
	}
	return out, budget, nil
}
