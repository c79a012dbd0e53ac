package dcgmcorrelate_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/telemetry/dcgm"
)

// t0 starts the synthetic run: c1 measures 10:00:00–10:01:00, c2 10:02:00–10:03:00.
var t0 = time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)

func window(c int) (time.Time, time.Time) {
	start := t0.Add(time.Duration(c-1) * 2 * time.Minute)
	return start, start.Add(time.Minute)
}

// telemetry is the synthetic DCGM capture every source is fed: for each point and GPU, three
// samples 10 s apart inside the window, plus one sample 30 s after the window that a correct
// window must leave out. Per point c (1 or 2), with k = c − 1:
//
//	GPU 0: sm 0.3/0.4/0.5+0.1k, dram 0.2/0.3/0.4+0.1k, nvlink 5e8 TX + 5e8 RX, power 290/300/310+100k
//	GPU 1: sm 0.5/0.6/0.7+0.1k, dram 0.4/0.5/0.6+0.1k, nvlink 1.5e9 + 1.5e9,  power 490/500/510+100k
//
// Window means over GPUs: c1 sm 0.5, dram 0.4, NVLink (1e9 + 3e9)/2 = 2e9 B/s, power 400 W;
// c2 sm 0.6, dram 0.5, NVLink 2e9, power 500 W.
func telemetry() []dcgm.GPUSample {
	var out []dcgm.GPUSample
	for _, c := range []int{1, 2} {
		k := float64(c - 1)
		start, _ := window(c)
		for gpu, base := range []struct{ sm, dram, nv, power float64 }{{0.4, 0.3, 5e8, 300}, {0.6, 0.5, 1.5e9, 500}} {
			for i, d := range []float64{-1, 0, 1} {
				out = append(out, dcgm.GPUSample{At: start.Add(time.Duration(10*(i+2)) * time.Second), GPU: strconv.Itoa(gpu), Hostname: "node-7",
					DCGMFields: schema.DCGMFields{SMActive: schema.F(base.sm + 0.1*d + 0.1*k), DRAMActive: schema.F(base.dram + 0.1*d + 0.1*k),
						NVLinkTXBytesS: schema.F(base.nv), NVLinkRXBytesS: schema.F(base.nv), PowerWatts: schema.F(base.power + 10*d + 100*k)}})
			}
			// Outside the window: an idle reading that would drag the means down.
			out = append(out, dcgm.GPUSample{At: start.Add(90 * time.Second), GPU: strconv.Itoa(gpu), Hostname: "node-7",
				DCGMFields: schema.DCGMFields{SMActive: schema.F(0), DRAMActive: schema.F(0), NVLinkTXBytesS: schema.F(0), NVLinkRXBytesS: schema.F(0), PowerWatts: schema.F(90)}})
		}
	}
	return out
}

// samplesOf selects the samples of one point (inside its window or within 30 s after it, as a
// sampler stopped a little late would have kept).
func samplesOf(all []dcgm.GPUSample, c int) []dcgm.GPUSample {
	start, end := window(c)
	var out []dcgm.GPUSample
	for _, s := range all {
		if !s.At.Before(start) && s.At.Before(end.Add(31*time.Second)) {
			out = append(out, s)
		}
	}
	return out
}

// frozenYAML renders the same telemetry as a dcgm_frozen_v1 file of timestamped samples; the
// window comes from the run (no start/end in the file), so the late samples fall outside it.
func frozenYAML(all []dcgm.GPUSample, powerUnit string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "schema: dcgm_frozen_v1\nunits: {ratio: ratio, bandwidth: bytes/s, power: %s}\npoints:\n", powerUnit)
	for _, c := range []int{1, 2} {
		fmt.Fprintf(&b, "  - concurrency: %d\n    gpus:\n", c)
		for _, gpu := range []string{"0", "1"} {
			fmt.Fprintf(&b, "      - gpu: %s\n        samples:\n", gpu)
			for _, s := range samplesOf(all, c) {
				if s.GPU != gpu {
					continue
				}
				fmt.Fprintf(&b, "          - {t: %s, sm_active: %v, dram_active: %v, nvlink_tx_bytes_s: %v, nvlink_rx_bytes_s: %v, power_w: %v}\n",
					s.At.Format(time.RFC3339), *s.SMActive, *s.DRAMActive, *s.NVLinkTXBytesS, *s.NVLinkRXBytesS, *s.PowerWatts)
			}
		}
	}
	return b.String()
}

// fakePrometheus is a test double of the Prometheus HTTP API's query_range: it answers with
// the telemetry's samples inside [start, end] as a matrix, one series per GPU and DCGM metric,
// and refuses requests without the expected bearer token.
func fakePrometheus(t *testing.T, all []dcgm.GPUSample, token string, queries *atomic.Int32) *httptest.Server {
	metrics := []struct {
		name string
		get  func(*schema.DCGMFields) *float64
	}{
		{"DCGM_FI_PROF_SM_ACTIVE", func(f *schema.DCGMFields) *float64 { return f.SMActive }},
		{"DCGM_FI_PROF_DRAM_ACTIVE", func(f *schema.DCGMFields) *float64 { return f.DRAMActive }},
		{"DCGM_FI_PROF_NVLINK_TX_BYTES", func(f *schema.DCGMFields) *float64 { return f.NVLinkTXBytesS }},
		{"DCGM_FI_PROF_NVLINK_RX_BYTES", func(f *schema.DCGMFields) *float64 { return f.NVLinkRXBytesS }},
		{"DCGM_FI_DEV_POWER_USAGE", func(f *schema.DCGMFields) *float64 { return f.PowerWatts }},
	}
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		queries.Add(1)
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, `{"status": "error", "errorType": "unauthorized", "error": "bad token"}`, http.StatusUnauthorized)
			return
		}
		if r.URL.Path != "/api/v1/query_range" || !strings.Contains(r.FormValue("query"), `pod="vllm-0"`) {
			t.Errorf("unexpected request %s", r.URL)
		}
		start, _ := strconv.ParseFloat(r.FormValue("start"), 64)
		end, _ := strconv.ParseFloat(r.FormValue("end"), 64)
		type series struct {
			Metric map[string]string `json:"metric"`
			Values [][2]any          `json:"values"`
		}
		var result []series
		for _, m := range metrics {
			for _, gpu := range []string{"0", "1"} {
				s := series{Metric: map[string]string{"__name__": m.name, "gpu": gpu, "Hostname": "node-7", "pod": "vllm-0"}}
				for _, smp := range all {
					ts := float64(smp.At.UnixNano()) / 1e9
					if smp.GPU == gpu && ts >= start && ts <= end {
						s.Values = append(s.Values, [2]any{ts, strconv.FormatFloat(*m.get(&smp.DCGMFields), 'g', -1, 64)})
					}
				}
				if len(s.Values) > 0 {
					result = append(result, s)
				}
			}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": map[string]any{"resultType": "matrix", "result": result}})
	}))
}
