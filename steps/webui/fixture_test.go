package webui

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/perfdag/perfdag/engine/campaign"
	"github.com/perfdag/perfdag/steps"
)

// tinyCampaign is a campaign small enough for unit tests: one cell, two points against the
// built-in simulator, no settle pause.
const tinyCampaign = `version: 1
campaign: tiny
kind: latency
endpoints:
  sim:
    url: sim://
    model: perfdag/sim-1
    sim: {ttft_ms: 5, tpot_ms: 0.2, gpus: 1, seed: 7}
defaults: {hardware: H100, quant: FP8, tensor_parallel: 1, parallel_strategy: TP, engine: sim}
cells:
  - id: aa-1k
    workload: {shape: aa-1k}
    concurrencies: [1, 2]
    requests_per_point: 2x
settle: {burn_in: false, settle_s: 0}
gates:
  - id: no-errors
    on: run-shape
    rule: error_count == 0
    severity: warn
`

var (
	fixtureOnce sync.Once
	fixtureDir  string
	fixtureErr  error
)

// service is the campaign service with every step kind.
func service(t testing.TB) *campaign.Service {
	t.Helper()
	reg, err := steps.Registry()
	if err != nil {
		t.Fatal(err)
	}
	return &campaign.Service{Registry: reg, Version: "test"}
}

// runTiny runs tinyCampaign (yaml edited by edit, when not nil) into dir.
func runTiny(t testing.TB, dir string, edit func(string) string) {
	t.Helper()
	src := tinyCampaign
	if edit != nil {
		src = edit(src)
	}
	file := filepath.Join(t.TempDir(), "tiny.yaml")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := service(t).RunFile(context.Background(), file, campaign.RunOptions{Out: dir}); err != nil {
		t.Fatalf("run the tiny campaign: %v", err)
	}
}

// finished returns a copy of one finished tiny campaign, run once per test binary, under a
// fresh root as root/name.
func finished(t testing.TB, root, name string) string {
	t.Helper()
	fixtureOnce.Do(func() {
		base, err := os.MkdirTemp("", "webui-fixture-")
		if err != nil {
			fixtureErr = err
			return
		}
		fixtureDir = filepath.Join(base, "tiny")
		runTiny(t, fixtureDir, nil)
	})
	if fixtureErr != nil {
		t.Fatal(fixtureErr)
	}
	dst := filepath.Join(root, name)
	if err := os.CopyFS(dst, os.DirFS(fixtureDir)); err != nil {
		t.Fatal(err)
	}
	return dst
}

// serve starts a test server over roots.
func serve(t *testing.T, o Options) *httptest.Server {
	t.Helper()
	if o.Service == nil {
		o.Service = service(t)
	}
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(func() { ts.Close(); s.Close() })
	return ts
}

// get fetches path (raw: not cleaned by the client) and returns status and body.
func get(t *testing.T, ts *httptest.Server, path string, hdr ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, ts.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.URL.Opaque = path // sent as written: no client-side cleaning of .. or %2e
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" {
			req.Host = hdr[i+1]
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp.StatusCode, b.String()
}

var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
