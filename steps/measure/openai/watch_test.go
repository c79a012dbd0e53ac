package openai_test

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfdag/perfdag/engine/campaign"
	"github.com/perfdag/perfdag/engine/events"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps"
	"github.com/perfdag/perfdag/steps/measure/loadgen"
	"github.com/perfdag/perfdag/steps/measure/session"
	"github.com/perfdag/perfdag/steps/testkit/browser"
	"github.com/perfdag/perfdag/steps/webui"
)

// watcher is `perfdag serve` following a campaign directory a benchmark writes events into,
// with an SSE reader attached (counting what a browser receives) and, where Chromium is
// installed, a real headless Chromium showing the campaign's live page on the same cores.
type watcher struct {
	mu    sync.Mutex
	ev    *events.Log
	n     int
	msgs  atomic.Int64
	ups   atomic.Int64
	br    *browser.Browser // nil without Chromium
	close func()
}

// watchedCampaign is the campaign the watched directory holds: one point at c256, as measured.
const watchedCampaign = `version: 1
campaign: bench
endpoints:
  main: {url: "sim://", model: bench}
cells:
  - {id: bench, workload: {shape: custom, input_tokens: 64, output_tokens: 256}, concurrencies: [256]}
`

// chromium reports whether a Chromium the browser kit can start is installed; the benchmark
// then attaches one, and runs without it (saying so in its metrics) elsewhere.
func chromium() bool {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if _, err := exec.LookPath(name); err == nil {
			return true
		}
	}
	return false
}

// startWatcher makes a campaign directory, serves it and attaches a live reader.
func startWatcher(b *testing.B) *watcher {
	b.Helper()
	dir := filepath.Join(b.TempDir(), "watched")
	if err := campaigndir.WriteInfo(dir, campaigndir.Info{Campaign: "bench", Created: time.Now().UTC()}); err != nil {
		b.Fatal(err)
	}
	// the frozen campaign the page draws its node table from (the events name its point)
	if err := campaigndir.WriteFile(campaigndir.Config(dir), []byte(watchedCampaign)); err != nil {
		b.Fatal(err)
	}
	log, err := events.Open(campaigndir.Events(dir))
	if err != nil {
		b.Fatal(err)
	}
	reg, err := steps.Registry()
	if err != nil {
		b.Fatal(err)
	}
	srv, err := webui.New(webui.Options{Roots: []string{dir}, Service: &campaign.Service{Registry: reg, Version: "bench"}})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	ctx, cancel := context.WithCancel(context.Background())
	w := &watcher{ev: log}
	if chromium() {
		w.br = browser.Start(b)
		w.br.Navigate(ts.URL + "/c/watched/")
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/c/watched/live?from=0", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("attach the live reader: %v %v", err, resp)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		br := bufio.NewReader(resp.Body)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			if strings.HasPrefix(line, "data: ") {
				w.msgs.Add(1)
				w.ups.Add(int64(strings.Count(line, `"type":`)))
			}
		}
	}()
	w.close = func() {
		cancel()
		resp.Body.Close()
		<-done
		if w.br != nil {
			w.br.Navigate("about:blank") // the page's live stream ends with it
		}
		ts.CloseClientConnections() // a stream still open would hold Close forever
		ts.Close()
		srv.Close()
		log.Close()
	}
	b.Cleanup(w.close)
	return w
}

func (w *watcher) log(e events.Event) {
	if err := w.ev.Emit(e); err != nil {
		panic(err)
	}
}

// progress is the point's progress callback: a progress event per request, as a run's, and
// a node event every 8 requests (written at once, waking the watcher).
func (w *watcher) progress(p loadgen.Progress) {
	w.mu.Lock()
	w.n++
	n := w.n
	w.mu.Unlock()
	w.log(events.Event{Type: events.Progress, Node: "run-shape[bench/c256]", Message: session.ProgressLine(p)})
	if n%8 == 0 {
		w.log(events.Event{Type: events.NodeSkipped, Node: "marker", Reason: session.ProgressLine(p)})
	}
}

// received is how many SSE messages the reader got, and how many node updates they held.
func (w *watcher) received() (msgs, updates int64) { return w.msgs.Load(), w.ups.Load() }

// browserMessages is how many live messages the Chromium page applied (-1 without Chromium).
func (w *watcher) browserMessages() float64 {
	if w.br == nil {
		return -1
	}
	return browser.Eval[float64](w.br, "window.perfdagLiveMessages || 0")
}
