package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// prepareBody returns the caller's JSON request object with the streaming switches set: for
// a stream, `stream: true` and `stream_options.include_usage: true` (other stream_options
// kept); for a plain call, `stream: false` and no stream_options (vLLM rejects them then).
// It also returns the output budget the body asks for (max_completion_tokens, else
// max_tokens; 0 when neither).
//
// A streaming body that already says both (workload.Body's do) goes out as it is, read once
// by the JSON tokenizer (streamReady); any other is decoded and encoded again.
func prepareBody(body []byte, stream bool) ([]byte, int, error) {
	if stream {
		if budget, ok := streamReady(body); ok {
			return body, budget, nil
		}
	}
	return rewriteBody(body, stream)
}

// rewriteBody is prepareBody through encoding/json: the body decoded into a map, the switches
// set, and the map encoded (its keys sorted).
func rewriteBody(body []byte, stream bool) ([]byte, int, error) {
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

// bodyDecoder is streamReady's reusable tokenizer.
type bodyDecoder struct {
	in  bytes.Buffer
	dec *jsontext.Decoder
}

var bodyDecoders = sync.Pool{New: func() any {
	f := &bodyDecoder{}
	f.dec = jsontext.NewDecoder(&f.in)
	return f
}}

// streamReady reports whether body is one JSON object with `"stream": true` and a
// stream_options object holding `"include_usage": true`, and returns its output budget as
// rewriteBody would. It says no (and rewriteBody decides, errors included) to anything it does
// not read exactly as encoding/json does: a repeated name, invalid UTF-8, a budget that is
// not a plain integer (or is null), anything after the object.
func streamReady(body []byte) (budget int, ok bool) {
	f := bodyDecoders.Get().(*bodyDecoder)
	defer bodyDecoders.Put(f)
	f.in = *bytes.NewBuffer(body)
	f.dec.Reset(&f.in) // default options: a repeated name is an error
	defer f.in.Reset() // the pool keeps no body
	if f.dec.PeekKind() != '{' {
		return 0, false
	}
	if _, err := f.dec.ReadToken(); err != nil {
		return 0, false
	}
	var streamOn, usageOn, sawMax, sawCompletion bool
	var maxTokens, maxCompletion int
	for f.dec.PeekKind() != '}' {
		tok, err := f.dec.ReadToken()
		if err != nil {
			return 0, false
		}
		switch name := tok.String(); name {
		case "stream":
			if f.dec.PeekKind() != 't' {
				return 0, false
			}
			if _, err := f.dec.ReadToken(); err != nil {
				return 0, false
			}
			streamOn = true
		case "stream_options":
			if usageOn, ok = f.includeUsage(); !ok {
				return 0, false
			}
		case "max_tokens", "max_completion_tokens":
			if f.dec.PeekKind() != '0' {
				return 0, false
			}
			v, err := f.dec.ReadValue()
			if err != nil {
				return 0, false
			}
			n, err := strconv.Atoi(string(v))
			if err != nil {
				return 0, false // 5.0 or 1e3: encoding/json refuses them into an int
			}
			if name == "max_tokens" {
				maxTokens, sawMax = n, true
			} else {
				maxCompletion, sawCompletion = n, true
			}
		default:
			if err := f.dec.SkipValue(); err != nil {
				return 0, false
			}
		}
	}
	if _, err := f.dec.ReadToken(); err != nil {
		return 0, false
	}
	if _, err := f.dec.ReadToken(); err != io.EOF { // only whitespace may follow
		return 0, false
	}
	switch {
	case sawCompletion:
		budget = maxCompletion
	case sawMax:
		budget = maxTokens
	}
	return budget, streamOn && usageOn
}

// includeUsage reads a stream_options value: whether it is an object with include_usage true.
func (f *bodyDecoder) includeUsage() (on, ok bool) {
	if f.dec.PeekKind() != '{' {
		return false, false
	}
	if _, err := f.dec.ReadToken(); err != nil {
		return false, false
	}
	for f.dec.PeekKind() != '}' {
		tok, err := f.dec.ReadToken()
		if err != nil {
			return false, false
		}
		if tok.String() == "include_usage" {
			if f.dec.PeekKind() != 't' {
				return false, false
			}
			on = true
		}
		if err := f.dec.SkipValue(); err != nil {
			return false, false
		}
	}
	_, err := f.dec.ReadToken()
	return on, err == nil
}
