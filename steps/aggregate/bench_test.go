package aggregate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/analysis/atlas"
	"github.com/perfdag/perfdag/steps/analysis/tpm"
)

// benchRows is the atlas size of BenchmarkAggregateDir: 100,000 rows by default (about 130 MB
// of normalized.json); PERFDAG_BENCH_ROWS=1000000 runs the million-row case, as `make bench`
// does (target: the pass within 10 s).
func benchRows(b *testing.B) int {
	if s := os.Getenv("PERFDAG_BENCH_ROWS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 20 {
			b.Fatalf("PERFDAG_BENCH_ROWS=%q: want an integer ≥ 20", s)
		}
		return n
	}
	return 100_000
}

// BenchmarkAggregateDir measures the kind's streaming pass on disk: rows/20 cells of 20
// concurrencies, read from their normalized.json one cell at a time, written to atlas.jsonl,
// folded into the TPM accumulator and the grounding/undercount tally. It reports rows/s, the
// process CPU per pass and per row (cpu-s/op, cpu-us/row: the figures to read on a loaded
// machine), and the peak heap held by objects (live and not yet swept; sampled every 2 ms),
// which must stay flat as the atlas grows.
func BenchmarkAggregateDir(b *testing.B) {
	const concs = 20
	rows := benchRows(b)
	cells := rows / concs
	dir := b.TempDir()
	template := schema.AtlasRow{
		Schema: "atlas_v1", Campaign: "bench", Model: "zai-org/GLM-5.1", Quant: "FP8", TensorParallel: 8,
		ParallelStrategy: "EP", Engine: "vllm", Delivery: "release", Shape: "aa-1k", CacheMode: "warm",
		Backend: atlas.BackendFixture, GPUs: 8, CellStatus: schema.CellFull, PlotReady: true, NumPrompts: 64, RequestCount: 64,
		TTFTAvgMs: schema.F(412.5), TTFTP50Ms: schema.F(400), TTFTP99Ms: schema.F(610), ITLAvgMs: schema.F(31.2),
		RequestThroughput: schema.F(2.1), OutputTokPerS: schema.F(2100), TotalTokPerS: schema.F(4200),
		TotalTokPerSPerGPU: schema.F(525), MeanInputTokens: schema.F(1000), MeanOutputTokens: schema.F(1000),
		DRAMActive: schema.F(0.55), PowerWattsPerGPU: schema.F(820), DCGMGrounded: true, SolRigor: schema.RigorL3,
		Extra: map[string]any{"shape": "aa-1k", "mode": "synthetic", "point_status": "ok"},
	}
	hardware := []string{"H100", "B200", "GB300", "H200"}
	ids := make([]campaigndir.CellFiles, cells)
	batch := make([]schema.AtlasRow, concs)
	for i := range ids {
		id := fmt.Sprintf("cell-%06d", i)
		for c := range batch {
			r := template
			r.CellID, r.Concurrency, r.Hardware = id, 1<<c, hardware[i%len(hardware)]
			r.MTP = (i/len(hardware))%2 == 0
			r.OutputTokPerSPerGPU = schema.F(50 * float64(c+1+i%7))
			batch[c] = r
		}
		ids[i] = writeFixtureCell(b, dir, id, batch)
	}
	// The cells reach the disk before the pass, as WriteCell's fsync would have seen to: the
	// pass must not pay the fixture's writeback (a million rows leave 1.3 GB of dirty pages).
	syscall.Sync()
	runtime.GC()
	b.ReportAllocs()
	b.ResetTimer()
	var peak uint64
	cpu0 := cpuSeconds(b)
	for b.Loop() {
		stop := sampleHeap(&peak)
		res, sum, err := Aggregate(context.Background(), campaigndir.Unrecorded(dir), "bench", ids, tpm.ConfigFor(nil), nil)
		stop()
		if err != nil {
			b.Fatal(err)
		}
		if res.Rows != rows-rows%concs || res.DCGMGroundedCells != cells || len(sum.Groups) != 8 {
			b.Fatalf("result %+v, %d groups", res, len(sum.Groups))
		}
	}
	b.StopTimer()
	cpu := cpuSeconds(b) - cpu0
	st, err := os.Stat(campaigndir.Abs(dir, campaigndir.Atlas()))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(st.Size())/(1<<20), "atlas-MB")
	b.ReportMetric(cpu/float64(b.N), "cpu-s/op")
	b.ReportMetric(cpu/float64(b.N)/float64(rows)*1e6, "cpu-us/row")
	b.ReportMetric(float64(rows)/(b.Elapsed().Seconds()/float64(b.N)), "rows/s")
}

// writeFixtureCell writes one cell as WriteCell would, without its per-file fsync (a million
// rows would otherwise spend minutes syncing before the timer starts).
func writeFixtureCell(b *testing.B, dir, id string, rows []schema.AtlasRow) campaigndir.CellFiles {
	files, normalized, status, err := campaigndir.EncodeCell(id, rows, schema.CellFull)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(campaigndir.Abs(dir, files.Normalized)), 0o755); err != nil {
		b.Fatal(err)
	}
	for rel, data := range map[string][]byte{files.Normalized: normalized, files.Status: status} {
		if err := os.WriteFile(campaigndir.Abs(dir, rel), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return files
}

// cpuSeconds is the process's user+sys CPU time so far: on a loaded machine it moves less than
// wall time.
func cpuSeconds(b *testing.B) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// sampleHeap records the largest live heap seen until stop is called.
func sampleHeap(peak *uint64) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		// runtime/metrics reads without stopping the world, unlike runtime.ReadMemStats.
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			metrics.Read(sample)
			*peak = max(*peak, sample[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}
