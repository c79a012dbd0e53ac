package openai_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
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

// BenchmarkFidelity reports how far the client's stamps are from the server's real send
// times (p50 and p99 of |measured − sent| in ms, over every request of every iteration, for
// TTFT, TTFO, ITL and end-to-end latency), how late the first token came after the time the
// server planned for it, and the machine's own wake-up lateness meanwhile (p99, from a probe
// process: errors well above it are the client's). On a quiet machine the target is p99 ≤ 1
// ms. One iteration is one closed-loop point of max(2 × C, 8) requests.
func BenchmarkFidelity(b *testing.B) {
	servers := []struct {
		name  string
		start func(testing.TB) (string, func(testing.TB) map[string]truth)
	}{{"minimal", minimalChild}, {"sim", simChild}}
	for _, s := range servers {
		for _, c := range []int{1, 16, 128} {
			b.Run(fmt.Sprintf("%s/c%d", s.name, c), func(b *testing.B) {
				base, truths := s.start(b)
				probeURL := startChild(b, "probe")
				errs := map[string][]float64{}
				var wake []float64
				iter := 0
				for b.Loop() {
					prefix := fmt.Sprintf("b%d-", iter)
					iter++
					probeP99(b, probeURL) // reset
					recs := runPoint(b, base, c, max(2*c, 8), 6, "sim-model", prefix)
					wake = append(wake, probeP99(b, probeURL))
					for name, v := range fidelityErrors(b, recs, truths(b), prefix) {
						errs[name] = append(errs[name], v...)
					}
				}
				for _, name := range []string{"ttft", "ttfo", "itl", "latency", "injected"} {
					if v := errs[name]; len(v) > 0 {
						b.ReportMetric(pAbs(v, 50), name+"-p50-ms")
						b.ReportMetric(pAbs(v, 99), name+"-p99-ms")
					}
				}
				slices.Sort(wake)
				b.ReportMetric(stats.Percentile(wake, 50), "wake-p99-ms")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}
