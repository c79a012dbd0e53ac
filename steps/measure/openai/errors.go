package openai

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/perfdag/perfdag/engine/redact"
	"github.com/perfdag/perfdag/schema"
)

// contextMarkers are phrases servers use when a prompt does not fit the context
// (llama.cpp "exceeds the available context size", vLLM/OpenAI "maximum context length",
// "context_length_exceeded", SGLang/TGI "longer than the model's context length").
var contextMarkers = []string{
	"context size", "context length", "context window", "context_length", "maximum context",
	"prompt is too long", "input is too long", "too many input tokens",
}

// contextExceeded reports whether a server message says the prompt did not fit.
func contextExceeded(msg string) bool {
	l := strings.ToLower(msg)
	for _, m := range contextMarkers {
		if strings.Contains(l, m) {
			return true
		}
	}
	return false
}

// serverMessage extracts the human-readable text of an error payload: the message of
// `{"error":{"message":…}}`, `{"error":"…"}`, `{"message":…}` or `{"detail":…}`, else the raw
// text. It is shortened and has every secret masked (the API key and engine/redact's forms).
func (c *Client) serverMessage(raw []byte) string {
	msg := strings.TrimSpace(string(raw))
	var obj struct {
		Error   json.RawMessage `json:"error"`
		Message json.RawMessage `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if s := text(raw); s != "" {
		msg = s
	} else if json.Unmarshal(raw, &obj) == nil {
		switch {
		case len(obj.Error) > 0 && string(obj.Error) != "null":
			var inner struct {
				Message string `json:"message"`
			}
			var s string
			if json.Unmarshal(obj.Error, &inner) == nil && inner.Message != "" {
				msg = inner.Message
			} else if json.Unmarshal(obj.Error, &s) == nil && s != "" {
				msg = s
			}
		case text(obj.Message) != "":
			msg = text(obj.Message)
		case text(obj.Detail) != "":
			msg = text(obj.Detail)
		}
	}
	return redact.String(c.redact(snippet([]byte(msg))))
}

// text is a JSON string's value, or "" when raw is not a non-empty string.
func text(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// httpFailure classes a non-2xx answer and names the server's message: the error body's
// message, or the status text when the body says nothing.
func (c *Client) httpFailure(status int, body []byte) (class, msg string) {
	msg = c.serverMessage(body)
	if msg == "" {
		msg = http.StatusText(status)
	}
	switch {
	case status == http.StatusTooManyRequests:
		class = schema.ErrorRateLimit
	case contextExceeded(msg):
		class = schema.ErrorContext
	default:
		class = schema.ErrorHTTP
	}
	return class, msg
}

// streamFailure classes an error the server sent inside a 200 stream (an SSE error event or
// an in-band `{"error": …}` chunk): context_exceeded when it says the prompt did not fit.
func (c *Client) streamFailure(class string, raw string) (string, string) {
	msg := c.serverMessage([]byte(raw))
	if msg == "" {
		msg = "(no data)"
	}
	if contextExceeded(msg) {
		class = schema.ErrorContext
	}
	return class, msg
}
