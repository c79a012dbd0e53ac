package webui

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/perfdag/perfdag/engine/campaign"
	"github.com/perfdag/perfdag/engine/enginetest"
	"github.com/perfdag/perfdag/steps/testkit/browser"
)

// BenchmarkCampaignPage10k serves the page of a finished 10,007-node campaign (435 cells × 5
// points through the default pipeline, the engine's own test kinds): ns/op is the server's
// time to answer it (status read against the frozen file, every node's row rendered);
// browser-ms-to-usable is headless Chromium's time from navigation start until the page's
// script has attached the live table (median of 3 loads), when Chromium is installed.
// Target: both under 1 s.
func BenchmarkCampaignPage10k(b *testing.B) {
	rec := enginetest.NewRecorder()
	svc := &campaign.Service{Registry: enginetest.Registry(b, rec), Version: "bench"}
	root := b.TempDir()
	file := filepath.Join(b.TempDir(), "big.yaml")
	if err := os.WriteFile(file, []byte(enginetest.Campaign(435, 5, "")), 0o644); err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	out, err := svc.RunFile(context.Background(), file, campaign.RunOptions{Out: filepath.Join(root, "big"), Parallel: 8})
	if err != nil {
		b.Fatal(err)
	}
	nodes := len(out.Summary.Nodes)
	b.Logf("setup: ran %d nodes in %s", nodes, time.Since(t0).Round(time.Millisecond))
	srv, err := New(Options{Roots: []string{root}, Service: svc})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer func() {
		srv.Close() // ends the browser's live stream first
		ts.Close()
	}()
	var size int
	for b.Loop() {
		resp, err := http.Get(ts.URL + "/c/big/")
		if err != nil {
			b.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("%d: %.300s", resp.StatusCode, body)
		}
		size = len(body)
	}
	b.ReportMetric(float64(size)/1e6, "page-MB")
	if os.Getenv("PERFDAG_BENCH_BROWSER") == "0" {
		return
	}
	br := browser.Start(b)
	var ms []float64
	for range 3 {
		br.Navigate(ts.URL + "/c/big/")
		ms = append(ms, browser.Eval[float64](br, `window.perfdagUsable || -1`))
		listed := browser.Eval[int](br, `document.querySelectorAll("tr[data-node]").length +
			[...document.querySelectorAll("details.group:not([open])")].reduce((n, d) => n + d.dataset.states.split("\n").length - 1, 0)`)
		if listed != nodes {
			b.Fatalf("the page accounts for %d nodes, want %d", listed, nodes)
		}
	}
	// opening the largest step lists its nodes
	want := browser.Eval[int](br, `(() => { const d = [...document.querySelectorAll("details.group")].sort((a, b) => b.dataset.states.length - a.dataset.states.length)[0];
		d.open = true; window.__opened = d; return d.dataset.states.split("\n").length - 1; })()`)
	waitRows(b, br, want)
	br.Clean()
	slices.Sort(ms)
	b.ReportMetric(ms[1], "browser-ms-to-usable")
}

// waitRows waits until the opened group lists want rows (bounded against a hang only).
func waitRows(b *testing.B, br *browser.Browser, want int) {
	b.Helper()
	for deadline := time.Now().Add(time.Minute); ; {
		if n := browser.Eval[int](br, `window.__opened.querySelectorAll("tr[data-node]").length`); n == want {
			return
		} else if time.Now().After(deadline) {
			b.Fatalf("the opened step lists %d rows, want %d", n, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
