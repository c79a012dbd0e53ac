package openai_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/perfdag/perfdag/steps/measure/openai"
)

// TestWarmOpensConnectionsBeforeTheWindow: after Warm(c), c concurrent requests all reuse a
// connection (no connect inside their TTFT) and the server saw exactly c connections.
func TestWarmOpensConnectionsBeforeTheWindow(t *testing.T) {
	const conc = 4
	var conns atomic.Int64
	stream := scripted(t, http.StatusOK, sseData(roleChunk), sseData(contentChunk(" hi")), sseData(finishChunk), sseData(doneMsg))
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			_, _ = w.Write([]byte(`{"data":[{"id":"m"}]}`))
			return
		}
		stream.Config.Handler.ServeHTTP(w, r)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	cl := newClient(t, openai.Options{BaseURL: srv.URL})
	if w := cl.Warm(context.Background(), conc); w.Opened != conc || len(w.ConnectNs) != conc {
		t.Fatalf("Warm opened %d connections with connect times %v, want %d", w.Opened, w.ConnectNs, conc)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var fresh []int
	for i := range conc {
		wg.Go(func() {
			rec := cl.Stream(context.Background(), openai.Request{Index: i, Body: body(1)}).Record
			if rec.ErrorClass != "" {
				t.Errorf("request %d: %s: %s", i, rec.ErrorClass, rec.Error)
			}
			if !rec.ConnReused || rec.ConnectNs != 0 {
				mu.Lock()
				fresh = append(fresh, i)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(fresh) != 0 {
		t.Errorf("requests %v opened a connection after Warm", fresh)
	}
	if got := conns.Load(); got != conc {
		t.Errorf("server saw %d connections, want %d", got, conc)
	}
}
