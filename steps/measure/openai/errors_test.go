package openai_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/openai"
	"github.com/perfdag/perfdag/steps/measure/stats"
)

// TestServerErrorsAreReadable: each way a server states a failure becomes the record's error
// class plus its own message, redacted, and the point lists the message under the class.
func TestServerErrorsAreReadable(t *testing.T) {
	const key = "sk-secret-key-123"
	llamaCtx := `{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}`
	cases := []struct {
		name      string
		status    int
		ctype     string
		body      string
		wantClass string
		wantMsg   string
	}{
		{"llama.cpp error: line then [DONE]", 200, "text/event-stream",
			"error: " + llamaCtx + "\n\ndata: [DONE]\n\n",
			schema.ErrorContext, "the request exceeds the available context size, try increasing it"},
		{"SSE error event", 200, "text/event-stream",
			"event: error\ndata: {\"error\":{\"message\":\"engine overloaded\"}}\n\n",
			schema.ErrorSSE, "engine overloaded"},
		{"in-band error chunk", 200, "text/event-stream",
			"data: {\"error\":{\"message\":\"backend died\",\"code\":500}}\n\ndata: [DONE]\n\n",
			schema.ErrorInBand, "backend died"},
		{"in-band error string", 200, "text/event-stream",
			"data: {\"error\":\"worker gone\"}\n\n",
			schema.ErrorInBand, "worker gone"},
		{"vLLM 400 context length", 400, "application/json",
			`{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.","type":"BadRequestError","code":400}`,
			schema.ErrorContext, "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens."},
		{"OpenAI error body", 503, "application/json",
			`{"error":{"message":"model is loading","type":"server_error"}}`,
			schema.ErrorHTTP, "model is loading"},
		{"FastAPI detail", 422, "application/json", `{"detail":"messages: field required"}`,
			schema.ErrorHTTP, "messages: field required"},
		{"empty body: status text", 502, "text/plain", "", schema.ErrorHTTP, "Bad Gateway"},
		{"rate limit", 429, "application/json", `{"error":{"message":"slow down"}}`, schema.ErrorRateLimit, "slow down"},
		{"plain text body", 500, "text/plain", "internal failure", schema.ErrorHTTP, "internal failure"},
		{"key echoed back is masked", 401, "application/json", `{"error":{"message":"bad key ` + key + `"}}`,
			schema.ErrorHTTP, "bad key [redacted]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", c.ctype)
				w.WriteHeader(c.status)
				_, _ = w.Write([]byte(c.body))
			}))
			defer srv.Close()
			cl := newClient(t, openai.Options{BaseURL: srv.URL, APIKey: key})
			rec := cl.Stream(context.Background(), openai.Request{Body: body(4), Phase: stats.PhaseProfiling}).Record
			if rec.ErrorClass != c.wantClass {
				t.Errorf("class %q, want %q (error %q)", rec.ErrorClass, c.wantClass, rec.Error)
			}
			if rec.ServerMessage != c.wantMsg {
				t.Errorf("server_message %q, want %q", rec.ServerMessage, c.wantMsg)
			}
			if strings.Contains(rec.Error+rec.ServerMessage, key) {
				t.Errorf("the key leaked: %q / %q", rec.Error, rec.ServerMessage)
			}
			p := stats.Compute([]schema.RequestRecord{rec}, stats.Options{})
			if got := p.ErrorMessages[c.wantClass]; len(got) != 1 || got[0] != c.wantMsg {
				t.Errorf("point error_messages[%s] = %q, want [%q]", c.wantClass, got, c.wantMsg)
			}
		})
	}
}
