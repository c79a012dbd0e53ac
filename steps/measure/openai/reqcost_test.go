package openai_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/perfdag/perfdag/steps/measure/openai"
	"github.com/perfdag/perfdag/steps/measure/stats"
)

// oneTokenStream is a short answer as vLLM streams it: role, one token, finish, usage, [DONE].
var oneTokenStream = []byte("data: " + `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}` + "\n\n" +
	"data: " + `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":" a"},"logprobs":null,"finish_reason":null}]}` + "\n\n" +
	"data: " + `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"length"}]}` + "\n\n" +
	"data: " + `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":9,"total_tokens":10,"completion_tokens":1}}` + "\n\n" +
	"data: [DONE]\n\n")

// BenchmarkRequestCost is one request after another through perfdag's client and through the
// raw reader, against an in-process server that answers a one-token stream at once: the
// per-request CPU and allocations each side's code adds (the server's are the same in both),
// where BenchmarkOverheadRatio's wall-clock ratios on a shared machine are noisy. cpu-µs/op is
// the process's (client and server) CPU per request: steadier than ns/op under load.
func BenchmarkRequestCost(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(oneTokenStream)
	}))
	defer srv.Close()
	body := overheadBody(1, 1)
	b.Run("client", func(b *testing.B) {
		cl := newClient(b, openai.Options{BaseURL: srv.URL, Timeout: time.Minute, DeferCounts: true})
		b.ReportAllocs()
		defer reportCPU(b, cpuTime(b))
		for b.Loop() {
			res := cl.Stream(context.Background(), openai.Request{Phase: stats.PhaseProfiling, Body: body})
			if res.Record.ErrorClass != "" || len(res.Record.ChunkNs) != 1 {
				b.Fatalf("%s: %s (%d chunks)", res.Record.ErrorClass, res.Record.Error, len(res.Record.ChunkNs))
			}
		}
	})
	b.Run("raw", func(b *testing.B) {
		raw := newRawReaderConns(srv.URL, 1)
		defer raw.http.CloseIdleConnections()
		b.ReportAllocs()
		defer reportCPU(b, cpuTime(b))
		for b.Loop() {
			if n, err := raw.stream(context.Background(), body); err != nil || n != 4 {
				b.Fatalf("%d messages, %v", n, err)
			}
		}
	})
}

// reportCPU reports the process's CPU per iteration since cpu0.
func reportCPU(b *testing.B, cpu0 time.Duration) {
	b.ReportMetric(float64((cpuTime(b)-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
}
