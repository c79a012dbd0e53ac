package openai_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/loadgen"
	"github.com/perfdag/perfdag/steps/measure/openai"
	"github.com/perfdag/perfdag/steps/measure/stats"
)

// cpuTime is this process's user + system CPU time: the client alone, since the simulator
// runs in a child process.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(syscall.TimevalToNsec(ru.Utime) + syscall.TimevalToNsec(ru.Stime))
}

// BenchmarkStreamZeroDelaySim measures how many streamed tokens per second the client
// ingests from a zero-delay simulator (one token per chunk, 256 tokens per request, o200k
// counting included) and the client's CPU per 1,000 tokens. One iteration is one closed-loop
// point of 2 × C requests.
func BenchmarkStreamZeroDelaySim(b *testing.B) {
	const outTokens = 256
	cfg, _ := json.Marshal(schema.SimConfig{Seed: 1, ZeroDelay: true})
	base := startChild(b, "sim:"+string(cfg))
	for _, c := range []int{1, 64, 512} {
		b.Run(fmt.Sprintf("c%d", c), func(b *testing.B) {
			cl := newClient(b, openai.Options{BaseURL: base, Timeout: time.Minute})
			send := func(ctx context.Context, i int) schema.RequestRecord {
				body, _ := json.Marshal(map[string]any{
					"model": "sim-model", "messages": []map[string]string{{"role": "user", "content": "prompt " + strconv.Itoa(i)}},
					"max_tokens": outTokens, "min_tokens": outTokens, "ignore_eos": true,
				})
				return cl.Stream(ctx, openai.Request{Index: i, Phase: stats.PhaseProfiling, Body: body}).Record
			}
			n := max(2*c, 16)
			if _, err := loadgen.Run(context.Background(), loadgen.Config{Requests: c, Concurrency: c}, send, nil); err != nil {
				b.Fatal(err) // warm-up: open the connections
			}
			var tokens int
			cpu0 := cpuTime(b)
			b.ResetTimer()
			for b.Loop() {
				recs, err := loadgen.Run(context.Background(), loadgen.Config{Requests: n, Concurrency: c}, send, nil)
				if err != nil {
					b.Fatal(err)
				}
				for _, r := range recs {
					if r.ErrorClass != "" {
						b.Fatalf("request %d: %s: %s", r.Index, r.ErrorClass, r.Error)
					}
					tokens += r.OutputTokens
				}
			}
			b.StopTimer()
			cpu := cpuTime(b) - cpu0
			b.ReportMetric(float64(tokens)/b.Elapsed().Seconds(), "tokens/s")
			b.ReportMetric(float64(cpu.Microseconds())/(float64(tokens)/1000), "cpu-µs/1k-tokens")
			b.ReportMetric(0, "ns/op")
		})
	}
}
