package webui

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfdag/perfdag/engine/campaign"
	"github.com/perfdag/perfdag/engine/enginetest"
	"github.com/perfdag/perfdag/engine/events"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/testkit/browser"
)

// A campaign too large to list whole, in a real browser: the steps are collapsed groups, a node
// that starts in a collapsed step shows up at the top with its state and its step's counts
// follow, and opening a step lists its nodes with the state that arrived live.
func TestGroupedPageLiveInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a 1,000-node campaign under a headless Chromium")
	}
	b := browser.Start(t)
	rec := enginetest.NewRecorder()
	svc := &campaign.Service{Registry: enginetest.Registry(t, rec), Version: "test"}
	root := t.TempDir()
	dir := filepath.Join(root, "big")
	file := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(file, []byte(enginetest.Campaign(60, 4, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := svc.RunFile(context.Background(), file, campaign.RunOptions{Out: dir, Parallel: 8})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(out.Summary.Nodes); n <= groupAbove {
		t.Fatalf("%d nodes: not enough to group", n)
	}
	srv, err := New(Options{Roots: []string{root}, Service: svc})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(func() { srv.Close(); ts.Close() })

	b.Navigate(ts.URL + "/c/big/")
	if n := browser.Eval[int](b, `document.querySelectorAll("details.group").length`); n < 3 {
		t.Fatalf("%d step groups", n)
	}
	node := "run-shape[cell-007/c2]"
	succeeded := func() string {
		return browser.Eval[string](b, `document.querySelector('details.group[data-step="run-shape"] .gcounts').textContent`)
	}
	before := succeeded()
	line, _ := json.Marshal(events.Event{Time: time.Now().UTC(), Run: "r", Type: events.NodeStart, Node: node, Kind: "run-shape"})
	f, err := os.OpenFile(campaigndir.Events(dir), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.Write(append(line, '\n'))
	_ = f.Close()
	waitFor(t, b, `#nodes tr[data-node="`+node+`"] td.state[data-state="running"]`)
	after := succeeded()
	if before == after || !strings.Contains(after, "1 running") {
		t.Errorf("run-shape's counts went from %q to %q, want one running", before, after)
	}
	browser.Eval[bool](b, `(() => { document.querySelector('details.group[data-step="run-shape"]').open = true; return true; })()`)
	waitFor(t, b, `details.group[data-step="run-shape"] tr[data-node="`+node+`"] td.state[data-state="running"]`)
	b.Screenshot("grouped")
	b.Clean()
}

// waitFor waits until the page has an element matching sel (bounded against a hang only).
func waitFor(t *testing.T, b *browser.Browser, sel string) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if browser.Eval[bool](b, `document.querySelector(`+jsString(sel)+`) !== null`) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s", sel)
		}
	}
}

func jsString(s string) string { b, _ := json.Marshal(s); return string(b) }

// The point page in a real browser: every figure a user reads has four significant digits at
// most, and the value shown on hover (the cell's title) is point.json's exact one.
func TestPointPageInBrowser(t *testing.T) {
	b := browser.Start(t)
	root := t.TempDir()
	dir := finished(t, root, "tiny-1")
	ts := serve(t, Options{Roots: []string{root}})
	var p schema.Point
	if _, err := campaigndir.ReadJSON(dir, campaigndir.Point("aa-1k", schema.Conc(2)), &p); err != nil {
		t.Fatal(err)
	}
	b.Navigate(ts.URL + "/c/tiny-1/point/aa-1k/2")
	long := browser.Eval[[]string](b, `[...document.querySelectorAll("td.num")].map(td => td.textContent.trim())
		.filter(s => !/^-?\d+$/.test(s) && s.replace(/^-?[0.]*/, "").replace(/e.*$/, "").replace(".", "").length > 4)`)
	if len(long) > 0 {
		t.Errorf("figures with more than four significant digits on screen: %q", long)
	}
	shown := browser.Eval[[]string](b, `(() => { const td = document.querySelector('td[data-key="output_token_throughput"]'); return [td.textContent, td.title]; })()`)
	if shown[0] != fig(p.OutputTokenThroughput) || shown[1] != exact(p.OutputTokenThroughput) {
		t.Errorf("output token throughput shows %q, %q on hover; want %q, %q", shown[0], shown[1], fig(p.OutputTokenThroughput), exact(p.OutputTokenThroughput))
	}
	p50 := browser.Eval[[]string](b, `(() => { const td = document.querySelectorAll('tr[data-metric="ttft_ms"] td.num')[3]; return [td.textContent, td.title]; })()`)
	if p50[0] != fig(p.TTFT.P50) || p50[1] != exact(p.TTFT.P50) {
		t.Errorf("TTFT p50 shows %q, %q on hover; want %q, %q", p50[0], p50[1], fig(p.TTFT.P50), exact(p.TTFT.P50))
	}
	b.ScreenshotFull("point")
	b.Clean()
}
