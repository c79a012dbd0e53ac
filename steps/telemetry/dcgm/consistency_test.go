package dcgm

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/telemetry/promscrape"
	"github.com/perfdag/perfdag/steps/testkit"
)

// dataset is synthetic telemetry: per point (phase), per GPU, constant DCGM values.
type dataset [][]GPUSample

// synthDataset generates two phases of two GPUs with distinct values in every field; GPU 1's
// SM occupancy is a DCGM blank in phase 0 (every source must treat it as missing).
func synthDataset() dataset {
	var d dataset
	for ph := 0; ph < 2; ph++ {
		var gpus []GPUSample
		for g := 0; g < 2; g++ {
			x := float64(ph*2+g) + 1 // 1..4
			occ := 0.05 * x
			if ph == 0 && g == 1 {
				occ = 9223372036854775794
			}
			gpus = append(gpus, GPUSample{
				GPU: fmt.Sprint(g), UUID: fmt.Sprintf("GPU-%d", g), Hostname: "synth-node", ModelName: "NVIDIA H100 80GB HBM3",
				DCGMFields: schema.DCGMFields{
					SMActive: fp(0.1 * x), SMOccupancy: fp(occ), TensorActive: fp(0.07 * x), DRAMActive: fp(0.11 * x),
					GREngineActive: fp(0.2 * x), NVLinkTXBytesS: fp(1.5e9 * x), NVLinkRXBytesS: fp(1.25e9 * x),
					PCIeTXBytesS: fp(2e7 * x), PCIeRXBytesS: fp(3e7 * x), PowerWatts: fp(150 + 75*x),
				},
			})
		}
		d = append(d, gpus)
	}
	return d
}

// frozenYAML writes the dataset's window means as a dcgm_frozen_v1 file (blanks left out).
func (d dataset) frozenYAML() []byte {
	var b strings.Builder
	b.WriteString("schema: dcgm_frozen_v1\nunits: {ratio: ratio, bandwidth: bytes/s, power: W}\npoints:\n")
	for ph, gpus := range d {
		fmt.Fprintf(&b, "  - concurrency: %d\n    gpus:\n", concOf(ph))
		for _, g := range gpus {
			fmt.Fprintf(&b, "      - gpu: %s\n        means:\n", g.GPU)
			for s, p := range fieldPtrs(&g.DCGMFields) {
				if *p != nil && usable(**p) {
					fmt.Fprintf(&b, "          %s: %v\n", slotKeys[s], **p)
				}
			}
		}
	}
	return []byte(b.String())
}

func concOf(phase int) int { return []int{1, 8}[phase] }

// TestSameMeansFromAllSources feeds one generated dataset to all three sources: the frozen
// YAML written from it, a real Prometheus server scraping a test exporter that serves it phase by
// phase, and a Sampler polling that exporter. All three must give the same window means. The
// exporter changes phase on events (scrapes served, samples taken), not on the clock, so the
// outcome does not depend on how the machine schedules the test, Prometheus or the Sampler.
func TestSameMeansFromAllSources(t *testing.T) {
	promBin := testkit.NeedTool(t, "prometheus")
	data := synthDataset()

	exp := newPhasedExporter(data)
	exporter := httptest.NewServer(exp)
	defer exporter.Close()

	promURL := startPrometheus(t, promBin, strings.TrimPrefix(exporter.URL, "http://"))

	// The deadline bounds a hang (a consumer that stopped scraping), nothing else.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sampler := StartSampler(ctx, &promscrape.Fetcher{}, exporter.URL, 250*time.Millisecond, Filter{Host: "synth-node"})
	windows := exp.runPhases(ctx, t, sampler)
	samples, st := sampler.Stop()
	if st.Scrapes == 0 {
		t.Fatalf("exporter sampler got nothing: %+v", st)
	}

	frozen, err := ParseFrozen("synth.yaml", data.frozenYAML())
	if err != nil {
		t.Fatal(err)
	}
	tps := map[schema.Load]float64{schema.Conc(1): 500, schema.Conc(8): 3000}
	sources := []Source{
		frozen,
		&PrometheusSource{URL: promURL, Host: "synth-node"},
		&ExporterSource{URL: exporter.URL, Samples: samples},
	}
	var results []schema.DCGMCorrelation
	for _, src := range sources {
		c, err := Correlate(ctx, src, windows, tps, 2)
		if err != nil {
			t.Fatalf("%s: %v", src.Name(), err)
		}
		results = append(results, c)
	}

	// Expected by hand from synthDataset (x = 1, 2 in phase 0; 3, 4 in phase 1):
	// phase 0: sm 0.1·1.5 = 0.15, occupancy GPU0 only 0.05, power 150 + 75·1.5 = 262.5 W,
	//          nvlink (1.5e9+1.25e9)·1.5 = 4.125e9, tokens/W 500 / (262.5·2) = 0.952381
	// phase 1: sm 0.35, occupancy 0.05·3.5 = 0.175, power 412.5 W, nvlink 9.625e9,
	//          tokens/W 3000 / (412.5·2) = 3.636364
	want := []schema.DCGMPoint{
		{SMActive: fp(0.15), SMOccupancy: fp(0.05), PowerWattsPerGPU: fp(262.5), NVLinkBytesPerS: fp(4.125e9), TokensPerWatt: fp(500 / 525.0)},
		{SMActive: fp(0.35), SMOccupancy: fp(0.175), PowerWattsPerGPU: fp(412.5), NVLinkBytesPerS: fp(9.625e9), TokensPerWatt: fp(3000 / 825.0)},
	}
	for i, c := range results {
		if !c.DCGMGrounded || c.SolRigor != "L3" || len(c.Points) != 2 {
			t.Fatalf("%s: grounded %v points %d", c.Source, c.DCGMGrounded, len(c.Points))
		}
		for j, p := range c.Points {
			if p.GPUs != 2 {
				t.Errorf("%s c%d: gpus %d", c.Source, p.Concurrency, p.GPUs)
			}
			for _, f := range []struct {
				name      string
				got, want *float64
			}{{"sm_active", p.SMActive, want[j].SMActive}, {"sm_occupancy", p.SMOccupancy, want[j].SMOccupancy},
				{"power", p.PowerWattsPerGPU, want[j].PowerWattsPerGPU}, {"nvlink", p.NVLinkBytesPerS, want[j].NVLinkBytesPerS},
				{"tokens_per_watt", p.TokensPerWatt, want[j].TokensPerWatt}} {
				if !near(f.got, *f.want) {
					t.Errorf("%s c%d %s = %v, want %v", c.Source, p.Concurrency, f.name, show(f.got), *f.want)
				}
			}
			// Every field agrees with the frozen source's.
			ref := results[0].Points[j]
			if !samePoint(p, ref) {
				t.Errorf("%s c%d differs from frozen:\n%s\n%s", c.Source, p.Concurrency, dump(p), dump(ref))
			}
			if i > 0 && p.Samples < 1 {
				t.Errorf("%s c%d rests on no samples", c.Source, p.Concurrency)
			}
		}
	}
}

func samePoint(a, b schema.DCGMPoint) bool {
	pa := []*float64{a.SMActive, a.SMOccupancy, a.TensorActive, a.DRAMActive, a.GREngineActive, a.NVLinkBytesPerS, a.PCIeBytesPerS, a.PowerWattsPerGPU, a.TokensPerWatt}
	pb := []*float64{b.SMActive, b.SMOccupancy, b.TensorActive, b.DRAMActive, b.GREngineActive, b.NVLinkBytesPerS, b.PCIeBytesPerS, b.PowerWattsPerGPU, b.TokensPerWatt}
	for i := range pa {
		if (pa[i] == nil) != (pb[i] == nil) || (pa[i] != nil && !near(pa[i], *pb[i])) {
			return false
		}
	}
	return true
}

// startPrometheus runs a real Prometheus on a free loopback port, scraping target every second
// into a temporary TSDB, and returns its URL once it is ready and has scraped the target.
func startPrometheus(t *testing.T, bin, target string) string {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	conf := fmt.Sprintf("global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\nscrape_configs:\n  - job_name: dcgm\n    static_configs:\n      - targets: ['%s']\n", target)
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(bin, "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "tsdb"),
		"--web.listen-address="+addr, "--log.level=warn")
	logf, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatalf("start prometheus: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		logf.Close()
	})
	url := "http://" + addr
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, err := http.Get(url + "/api/v1/query?query=up")
		if err == nil {
			body := make([]byte, 4096)
			n, _ := resp.Body.Read(body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && strings.Contains(string(body[:n]), `"value"`) {
				return url
			}
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "prometheus.log"))
			t.Fatalf("prometheus at %s not ready with a scrape after 15 s: %v\n%s", url, err, log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
