package openai_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/perfdag/perfdag/engine/events"
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

func newRawReader(base string) *rawReader { return newRawReaderConns(base, openai.DefaultMaxConns) }

// newRawReaderConns is a rawReader that keeps up to conns idle connections.
func newRawReaderConns(base string, conns int) *rawReader {
	tr := &http.Transport{MaxIdleConnsPerHost: conns, DisableCompression: true,
		ReadBufferSize: 64 << 10, WriteBufferSize: 64 << 10}
	return &rawReader{base: base, http: &http.Client{Transport: tr}}
}

// rawBufs are the raw reader's line buffers, one per stream in flight and reused as a lean
// client would (a fresh 64 KiB buffer per request cost more than a one-token answer; a line
// is a chunk of a few hundred bytes).
var rawBufs = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 4<<10) }}

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
	br := rawBufs.Get().(*bufio.Reader)
	defer rawBufs.Put(br)
	br.Reset(resp.Body)
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

// BenchmarkIngestRatio compares the tokens per second perfdag's client path ingests from a
// zero-delay simulator at c = 256 with a raw SSE reader's (net/http and line scanning) on the
// same server, in one run: each iteration runs one closed-loop point of 2 × C requests of 256
// one-token chunks through each, alternating which goes first. The client path is a run's:
// kernel stamps, SSE reader, chunk parsing and the record in the window, o200k_base counts
// after it (as session.Load does, openai.Options.DeferCounts). ratio is client ÷ raw over
// the window (goal ≥ 0.9); ratio-with-counts charges the client the counting too. The CPU
// each spent per 1,000 tokens (user + system of this process, counting included; the server
// is a child) shows where a low ratio comes from on a machine whose load makes wall-clock
// rates noisy (client-window-cpu: the client's in the window alone).
//
// A third arm runs the client's point while `perfdag serve` watches: the point writes a
// campaign's events.jsonl as a run does (node start and end, progress events batched as the
// engine batches them, but after every request instead of every 250 ms) plus a node event
// every 8 requests (each one a write the watcher is woken for): far chattier than a run. A
// webui server streams them over SSE to a reader, the browser's part (watcher-updates: the
// node updates it received). The server runs in this process, so its CPU competes with the
// client's more than a separate `perfdag serve` would: ratio-watched bounds the effect, and
// comes beside ratio from the same run.
func BenchmarkIngestRatio(b *testing.B) {
	const c = 256
	cfg, _ := json.Marshal(schema.SimConfig{Seed: 1, ZeroDelay: true})
	base := startChild(b, "sim:"+string(cfg))
	cl := newClient(b, openai.Options{BaseURL: base, Timeout: time.Minute, DeferCounts: true})
	raw := newRawReader(base)
	defer raw.http.CloseIdleConnections()
	var results []openai.Result // the client's point, by index, until counted
	client := func(ctx context.Context, i int) schema.RequestRecord {
		res := cl.Stream(ctx, openai.Request{Index: i, Phase: stats.PhaseProfiling, Body: ingestBody(i)})
		results[i] = res
		return res.Record
	}
	count := func(recs []schema.RequestRecord) {
		for k := range recs {
			openai.CountTokens(&recs[k], results[recs[k].Index].Content, results[recs[k].Index].Reasoning)
		}
	}
	rawSend := func(ctx context.Context, i int) schema.RequestRecord {
		n, err := raw.stream(ctx, ingestBody(i))
		rec := schema.RequestRecord{OutputTokens: n - 3} // role, finish and usage chunks carry no token
		if err != nil {
			rec.ErrorClass, rec.Error = schema.ErrorDropped, err.Error()
		}
		return rec
	}
	type run struct {
		tokens                      int
		window, all, windowCPU, cpu time.Duration
	}
	var progress func(loadgen.Progress) // set for the watched arm
	// watchEvery is the watched arm's progress cadence: a run's (250 ms) by default;
	// PERFDAG_WATCH_EVERY=1ns makes it an update per request, a stress far past any run.
	watchEvery := 250 * time.Millisecond
	if v, err := time.ParseDuration(os.Getenv("PERFDAG_WATCH_EVERY")); err == nil && v > 0 {
		watchEvery = v
	}
	point := func(send loadgen.Send, n int, after func([]schema.RequestRecord)) run {
		results = make([]openai.Result, n)
		t0, cpu0 := time.Now(), cpuTime(b)
		cfg := loadgen.Config{Requests: n, Concurrency: c}
		if progress != nil {
			cfg.Every = watchEvery
		}
		recs, err := loadgen.Run(context.Background(), cfg, send, progress)
		window, windowCPU := time.Since(t0), cpuTime(b)-cpu0
		if err != nil {
			b.Fatal(err)
		}
		if after != nil {
			after(recs)
		}
		r := run{window: window, all: time.Since(t0), windowCPU: windowCPU, cpu: cpuTime(b) - cpu0}
		for _, rec := range recs {
			if rec.ErrorClass != "" {
				b.Fatalf("request %d: %s: %s", rec.Index, rec.ErrorClass, rec.Error)
			}
			if rec.OutputTokens != ingestTokens {
				b.Fatalf("request %d: %d tokens, want %d", rec.Index, rec.OutputTokens, ingestTokens)
			}
			r.tokens += rec.OutputTokens
		}
		return r
	}
	add := func(sum *run, r run) {
		sum.tokens, sum.window, sum.all = sum.tokens+r.tokens, sum.window+r.window, sum.all+r.all
		sum.windowCPU, sum.cpu = sum.windowCPU+r.windowCPU, sum.cpu+r.cpu
	}
	w := startWatcher(b)
	watched := func() run {
		w.log(events.Event{Type: events.NodeStart, Node: "run-shape[bench/c256]", Kind: "run-shape"})
		progress = w.progress
		r := point(client, 2*c, count)
		progress = nil
		w.log(events.Event{Type: events.NodeEnd, Node: "run-shape[bench/c256]", Kind: "run-shape", Status: "ran"})
		return r
	}
	// Warm-up: open both clients' connections and the server's paths.
	point(client, c, count)
	point(rawSend, c, nil)
	var cs, rs, ws run
	iter := 0
	for b.Loop() {
		arms := []int{0, 1, 2}
		if iter%2 == 1 {
			arms = []int{2, 1, 0}
		}
		iter++
		for _, arm := range arms {
			switch arm {
			case 0:
				add(&cs, point(client, 2*c, count))
			case 1:
				add(&rs, point(rawSend, 2*c, nil))
			case 2:
				add(&ws, watched())
			}
		}
	}
	clientRate, rawRate := float64(cs.tokens)/cs.window.Seconds(), float64(rs.tokens)/rs.window.Seconds()
	b.ReportMetric(clientRate, "client-tokens/s")
	b.ReportMetric(rawRate, "raw-tokens/s")
	b.ReportMetric(clientRate/rawRate, "ratio")
	b.ReportMetric(float64(ws.tokens)/ws.window.Seconds()/rawRate, "ratio-watched")
	msgs, updates := w.received()
	b.ReportMetric(float64(msgs), "watcher-messages")
	b.ReportMetric(float64(updates), "watcher-updates")
	bm := w.browserMessages()
	if bm == 0 {
		b.Fatal("the Chromium page applied no live message: it watched nothing")
	}
	b.ReportMetric(bm, "browser-messages") // -1: no Chromium attached
	b.ReportMetric(float64(cs.tokens)/cs.all.Seconds()/rawRate, "ratio-with-counts")
	b.ReportMetric(float64(cs.cpu.Microseconds())/(float64(cs.tokens)/1000), "client-cpu-µs/1k-tokens")
	b.ReportMetric(float64(cs.windowCPU.Microseconds())/(float64(cs.tokens)/1000), "client-window-cpu-µs/1k-tokens")
	b.ReportMetric(float64(rs.cpu.Microseconds())/(float64(rs.tokens)/1000), "raw-cpu-µs/1k-tokens")
	b.ReportMetric(0, "ns/op")
}
