package dcgm

import (
	"github.com/perfdag/perfdag/schema"

	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/perfdag/perfdag/steps/testkit"
)

func near(p *float64, want float64) bool {
	return p != nil && math.Abs(*p-want) <= 1e-9*math.Max(1, math.Abs(want))
}

func show(p *float64) any {
	if p == nil {
		return "null"
	}
	return *p
}

// TestFrozenExample correlates testdata/dcgm_frozen_example.yaml; expected values by hand:
//
//	c1 (window means): sm (0.40+0.50)/2 = 0.45, occupancy 0.25, tensor 0.15, dram 0.35,
//	   gr 0.65, nvlink ((1e9+1e9) + 3e9)/2 = 2.5e9, pcie ((1e8+2e8) + 5e8)/2 = 4e8,
//	   power (300+320)/2 = 310 W; tokens/W = 62 / (310 × 2) = 0.1.
//	c8 (samples in 10:00:00–10:00:10): GPU0 sm (0.80+0.90)/2 = 0.85, dram 0.65,
//	   nvlink 2e10 + (1e10+3e10)/2 = 4e10; GPU1 sm 0.70, dram 0.50, nvlink 2e10;
//	   → sm 0.775, dram 0.575, nvlink 3e10, pcie null, power 650 (point-level),
//	   samples = fewest per GPU = 1; tokens/W = 1300 / (650 × 2) = 1.0.
func TestFrozenExample(t *testing.T) {
	src, err := LoadFrozen("testdata/dcgm_frozen_example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	runStart := time.Date(2026, 5, 1, 9, 59, 0, 0, time.UTC)
	windows := []Window{
		{Load: schema.Conc(1), Start: runStart.Add(-time.Hour), End: runStart.Add(-50 * time.Minute)},
		{Load: schema.Conc(8), Start: runStart, End: runStart.Add(2 * time.Minute)},
	}
	c, err := Correlate(context.Background(), src, windows, map[schema.Load]float64{schema.Conc(1): 62, schema.Conc(8): 1300}, 2)
	if err != nil {
		t.Fatal(err)
	}
	c.Cell = "aa-1k"
	p1, p8 := c.Points[0], c.Points[1]
	checks := []struct {
		name string
		got  *float64
		want float64
	}{
		{"c1 sm_active", p1.SMActive, 0.45}, {"c1 sm_occupancy", p1.SMOccupancy, 0.25},
		{"c1 tensor_active", p1.TensorActive, 0.15}, {"c1 dram_active", p1.DRAMActive, 0.35},
		{"c1 gr_engine_active", p1.GREngineActive, 0.65}, {"c1 nvlink", p1.NVLinkBytesPerS, 2.5e9},
		{"c1 pcie", p1.PCIeBytesPerS, 4e8}, {"c1 power", p1.PowerWattsPerGPU, 310},
		{"c1 tokens_per_watt", p1.TokensPerWatt, 0.1},
		{"c8 sm_active", p8.SMActive, 0.775}, {"c8 dram_active", p8.DRAMActive, 0.575},
		{"c8 nvlink", p8.NVLinkBytesPerS, 3e10}, {"c8 power", p8.PowerWattsPerGPU, 650},
		{"c8 tokens_per_watt", p8.TokensPerWatt, 1.0},
	}
	for _, ck := range checks {
		if !near(ck.got, ck.want) {
			t.Errorf("%s = %v, want %v", ck.name, show(ck.got), ck.want)
		}
	}
	if p8.PCIeBytesPerS != nil || p8.Samples != 1 || p1.Samples != 0 || p1.GPUs != 2 || p8.GPUs != 2 {
		t.Errorf("c8 pcie %v samples %d/%d gpus %d/%d", show(p8.PCIeBytesPerS), p1.Samples, p8.Samples, p1.GPUs, p8.GPUs)
	}
	if !c.DCGMGrounded || c.SolRigor != "L3" || c.Source != "frozen" || !strings.Contains(c.SourceDetail, "dcgmi dmon") {
		t.Errorf("grounded %v rigor %s source %s (%s)", c.DCGMGrounded, c.SolRigor, c.Source, c.SourceDetail)
	}
	goldenJSON(t, "correlation_example.json", c)
}

func TestFrozenPointCoverage(t *testing.T) {
	src, err := LoadFrozen("testdata/dcgm_frozen_example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// A point the file lacks is kept with null fields and the cell is not grounded.
	c, err := Correlate(context.Background(), src, []Window{{Load: schema.Conc(1)}, {Load: schema.Conc(64)}}, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if c.DCGMGrounded || c.SolRigor != "L1" || c.Points[1].DRAMActive != nil || c.Points[1].Concurrency != 64 {
		t.Fatalf("correlation = %+v", c)
	}
	if c.Points[0].TokensPerWatt != nil {
		t.Fatal("tokens per watt without a throughput must be null")
	}
	// Sampled point whose samples all miss the run window: an error, not a silent null.
	src.doc.Points[1].Start, src.doc.Points[1].End = nil, nil
	_, err = src.Point(context.Background(), Window{Load: schema.Conc(8), Start: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC), End: time.Date(2026, 5, 1, 12, 5, 0, 0, time.UTC)})
	if err == nil || errors.Is(err, ErrNoData) || !strings.Contains(err.Error(), "none of its 5 samples") {
		t.Fatalf("err = %v", err)
	}
}

func TestLoadFrozenMissingFile(t *testing.T) {
	_, err := LoadFrozen("testdata/nope.yaml")
	if err == nil || !strings.Contains(err.Error(), "testdata/nope.yaml") {
		t.Fatalf("err = %v", err)
	}
}

func goldenJSON(t *testing.T, name string, v any) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	testkit.Golden(t, "testdata/"+name, append(got, '\n'))
}
