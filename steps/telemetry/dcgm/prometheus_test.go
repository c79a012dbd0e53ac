package dcgm

import (
	"github.com/perfdag/perfdag/schema"

	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// matrixBody: GPU 0 exports power under both names (canonical wins) and a blank DRAM sample;
// GPU 1 only under the DCGM 4.6 name and only one NVLink direction.
const matrixBody = `{"status":"success","data":{"resultType":"matrix","result":[
{"metric":{"__name__":"DCGM_FI_DEV_POWER_USAGE","Hostname":"n1","UUID":"U0","gpu":"0","instance":"e:9400"},"values":[[1777629600,"400"],[1777629601,"420"]]},
{"metric":{"__name__":"DCGM_FI_DEV_BOARD_POWER_WATTS","Hostname":"n1","UUID":"U0","gpu":"0","instance":"e:9400"},"values":[[1777629600,"999"]]},
{"metric":{"__name__":"DCGM_FI_DEV_BOARD_POWER_WATTS","hostname":"n1","UUID":"U1","gpu":"1","instance":"e:9400"},"values":[[1777629600,"300"],[1777629601,"310"]]},
{"metric":{"__name__":"DCGM_FI_PROF_DRAM_ACTIVE","Hostname":"n1","UUID":"U0","gpu":"0"},"values":[[1777629600,"0.5"],[1777629601,"9223372036854775794"]]},
{"metric":{"__name__":"DCGM_FI_PROF_DRAM_ACTIVE","hostname":"n1","UUID":"U1","gpu":"1"},"values":[[1777629600,"0.3"],[1777629601,"0.5"]]},
{"metric":{"__name__":"DCGM_FI_PROF_NVLINK_TX_BYTES","Hostname":"n1","UUID":"U0","gpu":"0"},"values":[[1777629600,"1e9"]]},
{"metric":{"__name__":"DCGM_FI_PROF_NVLINK_RX_BYTES","Hostname":"n1","UUID":"U0","gpu":"0"},"values":[[1777629600,"2e9"]]},
{"metric":{"__name__":"DCGM_FI_PROF_NVLINK_TX_BYTES","hostname":"n1","UUID":"U1","gpu":"1"},"values":[[1777629600,"5e9"]]},
{"metric":{"__name__":"DCGM_FI_DEV_GPU_TEMP","Hostname":"n1","UUID":"U1","gpu":"1"},"values":[[1777629600,"50"]]}
]}}`

func TestPrometheusSourceQueryAndReduce(t *testing.T) {
	start := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	var got map[string]string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		got = map[string]string{"path": r.URL.Path, "query": q.Get("query"), "start": q.Get("start"), "end": q.Get("end"), "step": q.Get("step"), "auth": r.Header.Get("Authorization")}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(matrixBody))
	}))
	defer srv.Close()
	src := &PrometheusSource{URL: srv.URL + "/", Host: "n1", Matcher: `pod=~"vllm-.*"`, BearerToken: "tok"}
	p, err := src.Point(context.Background(), Window{Load: schema.Conc(8), Start: start, End: start.Add(20 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	// 20 s / 300 rounds to 0 s: the step floor of 1 s applies.
	want := map[string]string{"path": "/api/v1/query_range", "start": "1777629600.000", "end": "1777629620.000", "step": "1", "auth": "Bearer tok"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	for _, frag := range []string{`{Hostname="n1",__name__=~"DCGM_FI_PROF_SM_ACTIVE|`, `{hostname="n1",__name__=~"`, `pod=~"vllm-.*"} or {`, "DCGM_FI_DEV_BOARD_POWER_WATTS"} {
		if !strings.Contains(got["query"], frag) {
			t.Errorf("query lacks %q: %s", frag, got["query"])
		}
	}
	// power: GPU0 canonical (400+420)/2 = 410, GPU1 alias (300+310)/2 = 305 → 357.5
	// dram: GPU0 0.5 (blank dropped), GPU1 (0.3+0.5)/2 = 0.4 → 0.45
	// nvlink: GPU0 1e9 + 2e9 = 3e9; GPU1 has TX only → not reported → 3e9
	if !near(p.PowerWattsPerGPU, 357.5) || !near(p.DRAMActive, 0.45) || !near(p.NVLinkBytesPerS, 3e9) || p.SMActive != nil {
		t.Errorf("power %v dram %v nvlink %v sm %v", show(p.PowerWattsPerGPU), show(p.DRAMActive), show(p.NVLinkBytesPerS), show(p.SMActive))
	}
	if p.GPUs != 2 || p.Samples != 2 {
		t.Errorf("gpus %d samples %d", p.GPUs, p.Samples)
	}
	if d := src.Detail(); !strings.HasPrefix(d, srv.URL) || strings.Contains(d, "tok") {
		t.Errorf("detail = %q", d)
	}
}

func TestPrometheusSourceErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.Contains(r.URL.Query().Get("query"), "bad"):
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"status":"error","errorType":"bad_data","error":"1:2: parse error: unexpected"}`))
		case strings.Contains(r.URL.Query().Get("query"), "empty"):
			_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"matrix","result":[]}}`))
		default:
			_, _ = w.Write([]byte(`<html>proxy login</html>`))
		}
	}))
	defer srv.Close()
	creds := strings.Replace(srv.URL, "http://", "http://admin:s3cret@", 1)
	start := time.Unix(1_777_629_600, 0)
	win := Window{Load: schema.Conc(2), Start: start, End: start.Add(time.Minute)}
	tests := []struct {
		name   string
		src    *PrometheusSource
		w      Window
		want   string
		noData bool
	}{
		{"API error names type, message and query", &PrometheusSource{URL: creds, Matcher: `bad=""`}, win, `bad_data: 1:2: parse error: unexpected (query {__name__=~`, false},
		{"no series is no data", &PrometheusSource{URL: creds, Matcher: `empty="1"`}, win, "returned no DCGM series for c2", true},
		{"not an API response", &PrometheusSource{URL: creds}, win, "not an API response", false},
		{"empty window", &PrometheusSource{URL: creds}, Window{Load: schema.Conc(2)}, "window", false},
		{"unreachable", &PrometheusSource{URL: "http://admin:s3cret@127.0.0.1:1"}, win, "query_range", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.src.Point(context.Background(), tc.w)
			if err == nil || !strings.Contains(err.Error(), tc.want) || errors.Is(err, ErrNoData) != tc.noData {
				t.Fatalf("err = %v", err)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Fatalf("error leaks the password: %v", err)
			}
		})
	}
}
