package dcgm

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/sim"
	"github.com/perfdag/perfdag/steps/telemetry/promscrape"
)

// TestReadsSimulatorExporter reads the built-in simulator's /dcgm/metrics, which quickstart
// campaigns correlate against: an idle simulator must read back as sim.DCGMAt(0, gpus).
func TestReadsSimulatorExporter(t *testing.T) {
	done := make(chan struct{})
	defer close(done)
	h, err := sim.New(schema.SimConfig{GPUs: 2}, "m", done)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	sc, err := (&promscrape.Fetcher{}).Fetch(context.Background(), srv.URL+"/dcgm/metrics")
	if err != nil {
		t.Fatal(err)
	}
	got := FromScrape(sc, Filter{Host: sim.Hostname})
	if len(got) != 2 {
		t.Fatalf("got %d GPUs: %s", len(got), dump(got))
	}
	want := sim.DCGMAt(0, 2)
	src := &ExporterSource{Samples: got}
	p, err := src.Point(context.Background(), Window{Load: schema.Conc(1)})
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name string
		got  *float64
		want float64
	}{
		{"sm_active", p.SMActive, want.SMActive}, {"dram_active", p.DRAMActive, want.DRAMActive},
		{"nvlink", p.NVLinkBytesPerS, want.NVLinkTxBytes + want.NVLinkRxBytes},
		{"pcie", p.PCIeBytesPerS, want.PCIeTxBytes + want.PCIeRxBytes}, {"power", p.PowerWattsPerGPU, want.PowerW},
	}
	for _, c := range checks {
		if !near(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, show(c.got), c.want)
		}
	}
	if got[0].ModelName != sim.GPUModel || got[0].UUID == "" {
		t.Errorf("labels: %s", dump(got[0]))
	}
}
