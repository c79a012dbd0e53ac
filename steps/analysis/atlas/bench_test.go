package atlas_test

import (
	"fmt"
	"io"
	"runtime"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/analysis/atlas"
	"github.com/perfdag/perfdag/steps/analysis/tpm"
)

// countingWriter counts bytes and discards them, so the benchmark measures encoding, not disk.
type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }

var _ io.Writer = (*countingWriter)(nil)

// BenchmarkAggregate1M streams 1,000,000 atlas rows (50,000 cells × 20 concurrencies, already in
// atlas order, as AggregateDir feeds them) through the atlas writer, the coverage count and the
// TPM accumulator, and reports the time per million rows and the peak live heap seen while doing
// it (sampled with runtime.ReadMemStats every 16,384 rows). Memory must stay flat: the writer
// holds one key, the accumulator one best row per group (here 40 groups).
func BenchmarkAggregate1M(b *testing.B) {
	const cells, concs = 50_000, 20
	template := schema.AtlasRow{
		Schema: "atlas_v1", Campaign: "bench", Model: "zai-org/GLM-5.1", Quant: "FP8", TensorParallel: 8,
		ParallelStrategy: "EP", Engine: "vllm", Delivery: "release", Shape: "aa-1k", CacheMode: "warm",
		Backend: atlas.BackendFixture, GPUs: 8, CellStatus: schema.CellFull, PlotReady: true,
		NumPrompts: 64, RequestCount: 64,
		TTFTAvgMs: schema.F(412.5), TTFTP50Ms: schema.F(400), TTFTP90Ms: schema.F(520), TTFTP95Ms: schema.F(560),
		TTFTP99Ms: schema.F(610), ITLAvgMs: schema.F(31.2), ITLP50Ms: schema.F(30), ITLP99Ms: schema.F(45),
		RequestLatencyAvgMs: schema.F(31500), RequestThroughput: schema.F(2.1), OutputTokPerS: schema.F(2100),
		TotalTokPerS: schema.F(4200), TotalTokPerSPerGPU: schema.F(525), TokPerSPerUser: schema.F(32),
		MeanInputTokens: schema.F(1000), MeanOutputTokens: schema.F(1000), SMActive: schema.F(0.7),
		DRAMActive: schema.F(0.55), PowerWattsPerGPU: schema.F(820), TokensPerWatt: schema.F(0.32),
		DCGMGrounded: true, SolRigor: schema.RigorL3,
		Extra: map[string]any{"shape": "aa-1k", "mode": "synthetic", "point_status": "ok"},
	}
	hardware := []string{"H100", "B200", "GB300", "H200"}
	ids := make([]string, cells)
	for i := range ids {
		ids[i] = fmt.Sprintf("cell-%06d", i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	var peak uint64
	var written int64
	for b.Loop() {
		out := &countingWriter{}
		w := atlas.NewWriter(out)
		acc := tpm.NewAccumulator("bench", tpm.ConfigFor(nil))
		row := template
		var ms runtime.MemStats
		n := 0
		for i, id := range ids {
			row.CellID = id
			row.Hardware = hardware[i%len(hardware)]
			row.MaxNumBatchedTokens = 1024 << (i % 5)
			row.MTP = (i/len(hardware))%2 == 0
			for c := 1; c <= concs; c++ {
				row.Concurrency = c
				v := 50 * float64(c+i%7)
				row.OutputTokPerSPerGPU = &v
				if err := w.Write(&row); err != nil {
					b.Fatal(err)
				}
				if err := acc.Add(&row); err != nil {
					b.Fatal(err)
				}
				if n++; n%16384 == 0 {
					runtime.ReadMemStats(&ms)
					peak = max(peak, ms.HeapAlloc)
				}
			}
		}
		if err := w.Flush(); err != nil {
			b.Fatal(err)
		}
		if cov := w.Coverage(); cov.Rows != cells*concs || cov.Cells != cells || cov.PlotReady != cells*concs {
			b.Fatalf("coverage %+v", cov)
		}
		if s := acc.Summary(); len(s.Groups) != 8 {
			b.Fatalf("%d TPM groups, want 8 (4 hardware × MTP on/off)", len(s.Groups))
		}
		written = out.n
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(written)/(1<<20), "jsonl-MB")
	b.ReportMetric(float64(cells*concs)/(b.Elapsed().Seconds()/float64(b.N)), "rows/s")
}
