package openai_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfdag/perfdag/steps/measure/openai"
	"github.com/perfdag/perfdag/steps/measure/stats"
)

// tokenStream is an answer of n one-token chunks as vLLM streams it: role, the tokens,
// finish, usage, [DONE].
func tokenStream(n int) []byte {
	const head = `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":`
	var b strings.Builder
	b.WriteString("data: " + head + `{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}` + "\n\n")
	for range n {
		b.WriteString("data: " + head + `{"content":" a"},"logprobs":null,"finish_reason":null}]}` + "\n\n")
	}
	b.WriteString("data: " + head + `{},"logprobs":null,"finish_reason":"length"}]}` + "\n\n")
	b.WriteString("data: " + `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":9,"total_tokens":` +
		strconv.Itoa(9+n) + `,"completion_tokens":` + strconv.Itoa(n) + `}}` + "\n\n")
	b.WriteString("data: [DONE]\n\n")
	return []byte(b.String())
}

// BenchmarkRequestCost is one request after another through perfdag's client and through the
// raw reader, against an in-process server that answers a one-token stream at once: the
// per-request CPU and allocations each side's code adds (the server's are the same in both),
// where BenchmarkOverheadRatio's wall-clock ratios on a shared machine are noisy. cpu-µs/op is
// the process's (client and server) CPU per request: steadier than ns/op under load.
func BenchmarkRequestCost(b *testing.B) {
	for _, n := range []int{1, 64} {
		b.Run(fmt.Sprintf("%dtok", n), func(b *testing.B) { requestCost(b, n) })
	}
}

func requestCost(b *testing.B, tokens int) {
	stream := tokenStream(tokens)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(stream)
	}))
	defer srv.Close()
	body := overheadBody(1, tokens)
	b.Run("client", func(b *testing.B) {
		cl := newClient(b, openai.Options{BaseURL: srv.URL, Timeout: time.Minute, DeferCounts: true})
		b.ReportAllocs()
		defer reportCPU(b, cpuTime(b))
		for b.Loop() {
			res := cl.Stream(context.Background(), openai.Request{Phase: stats.PhaseProfiling, Body: body})
			if res.Record.ErrorClass != "" || len(res.Record.ChunkNs) != tokens {
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
			if n, err := raw.stream(context.Background(), body); err != nil || n != tokens+3 {
				b.Fatalf("%d messages, %v", n, err)
			}
		}
	})
}

// reportCPU reports the process's CPU per iteration since cpu0.
func reportCPU(b *testing.B, cpu0 time.Duration) {
	b.ReportMetric(float64((cpuTime(b)-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
}
