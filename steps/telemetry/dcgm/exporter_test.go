package dcgm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/telemetry/promscrape"
	"github.com/perfdag/perfdag/steps/testkit"
)

func parseFile(t *testing.T, name string) *promscrape.Scrape {
	t.Helper()
	raw, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	s, err := promscrape.Parse(raw, time.Unix(1_700_000_000, 0))
	if err != nil {
		t.Fatalf("parse %s: %v", name, err)
	}
	return s
}

func fp(v float64) *float64 { return &v }

// TestFromScrapeRealL40S reads the full default-counters scrape of one L40S (typed gauges,
// capitalised Hostname label). SM_ACTIVE/OCCUPANCY and NVLink are not in the default CSV.
func TestFromScrapeRealL40S(t *testing.T) {
	got := FromScrape(parseFile(t, "dcgm-exporter-metrics.txt"), Filter{Host: "gpu1-wl8sg"})
	want := []GPUSample{{
		At: time.Unix(1_700_000_000, 0), GPU: "0", UUID: "GPU-5b4e07f6-3a86-4340-039d-25f2a83cdc43",
		Hostname: "gpu1-wl8sg", ModelName: "NVIDIA L40S",
		DCGMFields: schema.DCGMFields{
			TensorActive: fp(0), DRAMActive: fp(0.000131), GREngineActive: fp(0),
			PCIeTXBytesS: fp(175084), PCIeRXBytesS: fp(19831), PowerWatts: fp(35.686),
		},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %s\nwant %s", dump(got), dump(want))
	}
}

// TestFromScrapeRealH100Untyped reads 8×H100 lines without HELP/TYPE (untyped families).
func TestFromScrapeRealH100Untyped(t *testing.T) {
	s := parseFile(t, "dcgm-exporter-metrics-h100x8.txt")
	tests := []struct {
		name   string
		filter Filter
		power  []float64
	}{
		{"all GPUs", Filter{}, []float64{67.351, 67.746}},
		{"host matches", Filter{Host: "ip-100-64-171-120.ec2.internal"}, []float64{67.351, 67.746}},
		{"other host", Filter{Host: "ip-10-0-0-1"}, nil},
		{"by index", Filter{GPUs: []string{"1"}}, []float64{67.746}},
		{"by UUID", Filter{GPUs: []string{"GPU-22dbdd79-f55a-92a8-aa39-322198e72ed6"}}, []float64{67.351}},
		{"by label", Filter{Labels: map[string]string{"modelName": "NVIDIA H100 80GB HBM3", "device": "nvidia0"}}, []float64{67.351}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := FromScrape(s, tc.filter)
			var power []float64
			for _, g := range got {
				power = append(power, *g.PowerWatts)
				if g.Hostname != "ip-100-64-171-120.ec2.internal" || g.ModelName != "NVIDIA H100 80GB HBM3" {
					t.Errorf("labels %+v", g)
				}
			}
			if !reflect.DeepEqual(power, tc.power) {
				t.Fatalf("power = %v, want %v", power, tc.power)
			}
		})
	}
}

func TestFromScrapeBlanksAliasesAndHostnameSpelling(t *testing.T) {
	text := `DCGM_FI_PROF_DRAM_ACTIVE{gpu="0",UUID="U0",hostname="n1"} 9223372036854775794
DCGM_FI_PROF_DRAM_ACTIVE{gpu="1",UUID="U1",hostname="n1"} 0.5
DCGM_FI_PROF_SM_UTIL_RATIO{gpu="0",UUID="U0",hostname="n1"} 0.7
DCGM_FI_DEV_BOARD_POWER_WATTS{gpu="0",UUID="U0",hostname="n1"} 500
DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="U0",hostname="n1"} 400
DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{gpu="1",UUID="U1",hostname="n1"} NaN
`
	s, err := promscrape.Parse([]byte(text), time.Unix(5, 0))
	if err != nil {
		t.Fatal(err)
	}
	got := FromScrape(s, Filter{Host: "n1"})
	if len(got) != 2 {
		t.Fatalf("got %s", dump(got))
	}
	g0, g1 := got[0], got[1]
	// GPU 0: the blank DRAM value is missing; SM from the DCGM 4.6 name; power from the
	// canonical DEV_POWER_USAGE (400), not the alias (500).
	if g0.DRAMActive != nil || !near(g0.SMActive, 0.7) || !near(g0.PowerWatts, 400) || g0.Hostname != "n1" {
		t.Errorf("gpu0 %s", dump(got[:1]))
	}
	if !near(g1.DRAMActive, 0.5) || g1.TensorActive != nil {
		t.Errorf("gpu1 %s", dump(got[1:]))
	}
}

func TestExporterTextRoundTrip(t *testing.T) {
	in := []GPUSample{
		{GPU: "0", UUID: "GPU-a", Hostname: "node-1", ModelName: "NVIDIA B200", DCGMFields: schema.DCGMFields{
			SMActive: fp(0.81), SMOccupancy: fp(0.33), TensorActive: fp(0.4), DRAMActive: fp(0.62), GREngineActive: fp(0.97),
			NVLinkTXBytesS: fp(2.5e10), NVLinkRXBytesS: fp(2.4e10), PCIeTXBytesS: fp(3e8), PCIeRXBytesS: fp(2e8), PowerWatts: fp(812.5),
		}},
		{GPU: "1", UUID: "GPU-b", Hostname: "node-1", ModelName: "NVIDIA B200", DCGMFields: schema.DCGMFields{
			DRAMActive: fp(0.6), PowerWatts: fp(790),
		}},
	}
	text, err := ExporterText(in)
	if err != nil {
		t.Fatal(err)
	}
	testkit.Golden(t, "testdata/exporter_text.golden", text)
	at := time.Unix(42, 0)
	s, err := promscrape.Parse(text, at)
	if err != nil {
		t.Fatal(err)
	}
	if s.Families["DCGM_FI_PROF_DRAM_ACTIVE"].GetType().String() != "GAUGE" {
		t.Fatal("families must be typed gauges")
	}
	got := FromScrape(s, Filter{})
	for i := range in {
		in[i].At = at
	}
	if !reflect.DeepEqual(got, in) {
		t.Fatalf("round trip:\n got %s\nwant %s", dump(got), dump(in))
	}
}

func TestSamplesEncodeDecode(t *testing.T) {
	in := []GPUSample{{At: time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC), GPU: "3", Hostname: "h", DCGMFields: schema.DCGMFields{DRAMActive: fp(0.25)}}}
	var buf bytes.Buffer
	if err := EncodeSamples(&buf, in); err != nil {
		t.Fatal(err)
	}
	out, err := DecodeSamples(&buf)
	if err != nil || !reflect.DeepEqual(out, in) {
		t.Fatalf("decode = %s, %v", dump(out), err)
	}
	_, err = DecodeSamples(strings.NewReader("{\"t\":\"2026-05-01T10:00:00Z\",\"gpu\":\"0\"}\n{\"t\":\"2026-05-01T10:00:00Z\",\"gpu\":\"0\",\"dram\":1}\n"))
	if err == nil || !strings.Contains(err.Error(), "line 2") || !strings.Contains(err.Error(), "dram") {
		t.Fatalf("err = %v", err)
	}
}

// TestSamplerAndExporterSource polls a test exporter whose DRAM gauge steps 0.2 → 0.6 at the
// second request, and checks the source averages only the samples inside each window.
func TestSamplerAndExporterSource(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := 0.2
		if n.Add(1) > 1 {
			v = 0.6
		}
		fmt.Fprintf(w, "DCGM_FI_PROF_DRAM_ACTIVE{gpu=\"0\",UUID=\"U0\",Hostname=\"h\"} %g\nDCGM_FI_PROF_DRAM_ACTIVE{gpu=\"0\",UUID=\"X\",Hostname=\"other\"} 0.9\n", v)
	}))
	defer srv.Close()
	s := StartSampler(context.Background(), &promscrape.Fetcher{}, srv.URL, 2*time.Millisecond, Filter{Host: "h"})
	for n.Load() < 5 { // the last request may be cut short by Stop
		time.Sleep(time.Millisecond)
	}
	samples, st := s.Stop()
	if st.Failures != 0 || len(samples) != st.Scrapes || len(samples) < 3 {
		t.Fatalf("stats %+v, %d samples", st, len(samples))
	}
	src := &ExporterSource{URL: srv.URL, Samples: samples}
	first := Window{Load: schema.Conc(1), Start: samples[0].At, End: samples[0].At}
	rest := Window{Load: schema.Conc(2), Start: samples[1].At, End: samples[len(samples)-1].At}
	p1, err1 := src.Point(context.Background(), first)
	p2, err2 := src.Point(context.Background(), rest)
	if err1 != nil || err2 != nil || !near(p1.DRAMActive, 0.2) || !near(p2.DRAMActive, 0.6) || p2.Samples != len(samples)-1 || p2.GPUs != 1 {
		t.Fatalf("p1 %v %v p2 %v samples %d gpus %d %v", show(p1.DRAMActive), err1, show(p2.DRAMActive), p2.Samples, p2.GPUs, err2)
	}
	_, err := src.Point(context.Background(), Window{Load: schema.Conc(3), Start: time.Unix(1, 0), End: time.Unix(2, 0)})
	if err == nil || !strings.Contains(err.Error(), "none in c3's window") {
		t.Fatalf("err = %v", err)
	}
}

func dump(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%+v", v)
	}
	return string(b)
}
