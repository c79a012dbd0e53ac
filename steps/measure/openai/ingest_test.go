package openai_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/loadgen"
	"github.com/perfdag/perfdag/steps/measure/openai"
	"github.com/perfdag/perfdag/steps/measure/stats"
)

// ingestTokens is the answer length of every request of the ingest benchmark.
const ingestTokens = 256

// ingestBody is request i of the ingest benchmark: ingestTokens one-token chunks.
func ingestBody(i int) []byte {
	b, _ := json.Marshal(map[string]any{
		"model": "sim-model", "messages": []map[string]string{{"role": "user", "content": "prompt " + strconv.Itoa(i)}},
		"stream": true, "stream_options": map[string]any{"include_usage": true},
		"max_tokens": ingestTokens, "min_tokens": ingestTokens, "ignore_eos": true,
	})
	return b
}

// rawReader is the floor a streaming client cannot beat: net/http and line scanning, no
// stamps, no parsing, no token counting. It counts a response's data lines up to [DONE].
type rawReader struct {
	base string
	http *http.Client
}

func newRawReader(base string) *rawReader {
	tr := &http.Transport{MaxIdleConnsPerHost: openai.DefaultMaxConns, DisableCompression: true,
		ReadBufferSize: 64 << 10, WriteBufferSize: 64 << 10}
	return &rawReader{base: base, http: &http.Client{Transport: tr}}
}

// stream sends body and returns the data lines before [DONE], or an error.
func (r *rawReader) stream(ctx context.Context, body []byte) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.base+"/v1/chat/completions", bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := r.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	br := bufio.NewReaderSize(resp.Body, 64<<10)
	n := 0
	for {
		line, err := br.ReadSlice('\n')
		if bytes.HasPrefix(line, []byte("data: ")) {
			if bytes.HasPrefix(line[6:], []byte("[DONE]")) {
				_, _ = io.Copy(io.Discard, br)
				return n, nil
			}
			n++
		}
		if err != nil {
			return n, io.ErrUnexpectedEOF
		}
	}
}

// BenchmarkIngestRatio compares the tokens per second perfdag's whole client path (kernel
// stamps, SSE reader, chunk parsing, o200k_base counting, the record) ingests from a
// zero-delay simulator at c = 256 with a raw SSE reader's on the same server, in one run:
// each iteration runs one closed-loop point of 2 × C requests of 256 one-token chunks through
// each, alternating which goes first. ratio is client ÷ raw (goal ≥ 0.9); the CPU each
// spent per 1,000 tokens (user + system of this process: the server is a child) shows where
// a low ratio comes from on a machine whose load makes wall-clock rates noisy.
func BenchmarkIngestRatio(b *testing.B) {
	const c = 256
	cfg, _ := json.Marshal(schema.SimConfig{Seed: 1, ZeroDelay: true})
	base := startChild(b, "sim:"+string(cfg))
	cl := newClient(b, openai.Options{BaseURL: base, Timeout: time.Minute})
	raw := newRawReader(base)
	defer raw.http.CloseIdleConnections()
	client := func(ctx context.Context, i int) schema.RequestRecord {
		return cl.Stream(ctx, openai.Request{Index: i, Phase: stats.PhaseProfiling, Body: ingestBody(i)}).Record
	}
	rawSend := func(ctx context.Context, i int) schema.RequestRecord {
		n, err := raw.stream(ctx, ingestBody(i))
		rec := schema.RequestRecord{OutputTokens: n - 3} // role, finish and usage chunks carry no token
		if err != nil {
			rec.ErrorClass, rec.Error = schema.ErrorDropped, err.Error()
		}
		return rec
	}
	point := func(send loadgen.Send, n int) (int, time.Duration, time.Duration) {
		t0, cpu0 := time.Now(), cpuTime(b)
		recs, err := loadgen.Run(context.Background(), loadgen.Config{Requests: n, Concurrency: c}, send, nil)
		d, cpu := time.Since(t0), cpuTime(b)-cpu0
		if err != nil {
			b.Fatal(err)
		}
		tokens := 0
		for _, r := range recs {
			if r.ErrorClass != "" {
				b.Fatalf("request %d: %s: %s", r.Index, r.ErrorClass, r.Error)
			}
			if r.OutputTokens != ingestTokens {
				b.Fatalf("request %d: %d tokens, want %d", r.Index, r.OutputTokens, ingestTokens)
			}
			tokens += r.OutputTokens
		}
		return tokens, d, cpu
	}
	// Warm-up: open both clients' connections and the server's paths.
	point(client, c)
	point(rawSend, c)
	var clientTok, rawTok int
	var clientDur, rawDur, clientCPU, rawCPU time.Duration
	iter := 0
	for b.Loop() {
		order := []bool{true, false}
		if iter%2 == 1 {
			order = []bool{false, true}
		}
		iter++
		for _, isClient := range order {
			if isClient {
				n, d, cpu := point(client, 2*c)
				clientTok, clientDur, clientCPU = clientTok+n, clientDur+d, clientCPU+cpu
			} else {
				n, d, cpu := point(rawSend, 2*c)
				rawTok, rawDur, rawCPU = rawTok+n, rawDur+d, rawCPU+cpu
			}
		}
	}
	clientRate, rawRate := float64(clientTok)/clientDur.Seconds(), float64(rawTok)/rawDur.Seconds()
	b.ReportMetric(clientRate, "client-tokens/s")
	b.ReportMetric(rawRate, "raw-tokens/s")
	b.ReportMetric(clientRate/rawRate, "ratio")
	b.ReportMetric(float64(clientCPU.Microseconds())/(float64(clientTok)/1000), "client-cpu-µs/1k-tokens")
	b.ReportMetric(float64(rawCPU.Microseconds())/(float64(rawTok)/1000), "raw-cpu-µs/1k-tokens")
	b.ReportMetric(0, "ns/op")
}
