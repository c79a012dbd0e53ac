package dcgm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/perfdag/perfdag/schema"
)

// fakeSource returns fixed points by concurrency, or an error.
type fakeSource struct {
	points map[int]schema.DCGMPoint
	err    error
}

func (f fakeSource) Name() string   { return "fake" }
func (f fakeSource) Detail() string { return "in memory" }
func (f fakeSource) Point(_ context.Context, w Window) (schema.DCGMPoint, error) {
	if f.err != nil {
		return schema.DCGMPoint{}, f.err
	}
	p, ok := f.points[w.Load.Concurrency]
	if !ok {
		return schema.DCGMPoint{}, fmt.Errorf("c%d: %w", w.Load.Concurrency, ErrNoData)
	}
	return p, nil
}

func TestTokensPerWatt(t *testing.T) {
	tests := []struct {
		name string
		p    schema.DCGMPoint
		tps  map[schema.Load]float64
		gpus int
		want *float64
	}{
		// 4,000 tok/s over 8 GPUs at 500 W each: 4000 / (500 × 8) = 1.0
		{"endpoint GPU count", schema.DCGMPoint{Concurrency: 16, GPUs: 2, PowerWattsPerGPU: fp(500)}, map[schema.Load]float64{schema.Conc(16): 4000}, 8, fp(1.0)},
		// gpus 0: the 2 GPUs the source saw: 4000 / (500 × 2) = 4.0
		{"source GPU count", schema.DCGMPoint{Concurrency: 16, GPUs: 2, PowerWattsPerGPU: fp(500)}, map[schema.Load]float64{schema.Conc(16): 4000}, 0, fp(4.0)},
		// 1,234 tok/s on 4 × 700 W: 1234 / 2800 = 0.44071428...
		{"fractional", schema.DCGMPoint{Concurrency: 1, PowerWattsPerGPU: fp(700)}, map[schema.Load]float64{schema.Conc(1): 1234}, 4, fp(1234.0 / 2800)},
		{"no power", schema.DCGMPoint{Concurrency: 16, GPUs: 2}, map[schema.Load]float64{schema.Conc(16): 4000}, 8, nil},
		{"zero power", schema.DCGMPoint{Concurrency: 16, PowerWattsPerGPU: fp(0)}, map[schema.Load]float64{schema.Conc(16): 4000}, 8, nil},
		{"no throughput for the point", schema.DCGMPoint{Concurrency: 32, PowerWattsPerGPU: fp(500)}, map[schema.Load]float64{schema.Conc(16): 4000}, 8, nil},
		{"no GPU count anywhere", schema.DCGMPoint{Concurrency: 16, PowerWattsPerGPU: fp(500)}, map[schema.Load]float64{schema.Conc(16): 4000}, 0, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tokensPerWatt(tc.p, tc.tps, tc.gpus)
			if (got == nil) != (tc.want == nil) || (got != nil && !near(got, *tc.want)) {
				t.Fatalf("tokens per watt = %v, want %v", show(got), show(tc.want))
			}
		})
	}
}

func TestCorrelateGrounding(t *testing.T) {
	full := schema.DCGMPoint{DRAMActive: fp(0.5), NVLinkBytesPerS: fp(1e9), PowerWattsPerGPU: fp(400), GPUs: 2}
	pcieOnly := schema.DCGMPoint{DRAMActive: fp(0.5), PCIeBytesPerS: fp(1e8)}
	noBytes := schema.DCGMPoint{DRAMActive: fp(0.5), SMActive: fp(0.9)}
	noDRAM := schema.DCGMPoint{NVLinkBytesPerS: fp(1e9)}
	tests := []struct {
		name     string
		points   map[int]schema.DCGMPoint
		windows  []int
		grounded bool
	}{
		{"every point byte-grounded", map[int]schema.DCGMPoint{1: full, 8: pcieOnly}, []int{1, 8}, true},
		{"a point without byte rates", map[int]schema.DCGMPoint{1: full, 8: noBytes}, []int{1, 8}, false},
		{"a point without DRAM", map[int]schema.DCGMPoint{1: full, 8: noDRAM}, []int{1, 8}, false},
		{"a point without data", map[int]schema.DCGMPoint{1: full}, []int{1, 8}, false},
		{"no points", nil, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var ws []Window
			start := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
			for i, c := range tc.windows {
				ws = append(ws, Window{Load: schema.Conc(c), Start: start.Add(time.Duration(i) * time.Minute), End: start.Add(time.Duration(i)*time.Minute + 30*time.Second)})
			}
			c, err := Correlate(context.Background(), fakeSource{points: tc.points}, ws, map[schema.Load]float64{schema.Conc(1): 800}, 0)
			if err != nil {
				t.Fatal(err)
			}
			rigor := map[bool]string{true: "L3", false: "L1"}[tc.grounded]
			if c.DCGMGrounded != tc.grounded || c.SolRigor != rigor || c.Schema != CorrelationSchema || len(c.Points) != len(ws) {
				t.Fatalf("grounded %v rigor %s points %d", c.DCGMGrounded, c.SolRigor, len(c.Points))
			}
			for i, p := range c.Points {
				if p.Concurrency != ws[i].Load.Concurrency || p.StartNs != ws[i].Start.UnixNano() || p.EndNs != ws[i].End.UnixNano() {
					t.Errorf("point %d identity %+v", i, p)
				}
			}
			// c1: 800 tok/s ÷ (400 W × 2 GPUs seen) = 1.0
			if len(c.Points) > 0 && !near(c.Points[0].TokensPerWatt, 1.0) {
				t.Errorf("c1 tokens per watt = %v", show(c.Points[0].TokensPerWatt))
			}
		})
	}
}

func TestCorrelateFailsWhole(t *testing.T) {
	_, err := Correlate(context.Background(), fakeSource{err: errors.New("connection refused")}, []Window{{Load: schema.Conc(4)}}, nil, 1)
	if err == nil || !strings.Contains(err.Error(), "point c4 from fake: connection refused") {
		t.Fatalf("err = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Correlate(ctx, fakeSource{}, []Window{{Load: schema.Conc(4)}}, nil, 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: err = %v", err)
	}
}
