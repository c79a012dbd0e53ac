package openai_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/loadgen"
	"github.com/perfdag/perfdag/steps/measure/openai"
	"github.com/perfdag/perfdag/steps/testkit"
)

// TestPoolHoldsEveryStreamOfAPoint: a point above a thousand streams keeps every connection
// its warm-up opened, so no request of its window dials (the idle pool held 1,024: the
// connections past it were closed as their responses ended and their next requests dialled
// inside their TTFT).
func TestPoolHoldsEveryStreamOfAPoint(t *testing.T) {
	const c = 1100
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil || l.Cur < 2*c+200 {
		testkit.Unavailable(t, "needs 2,400 open files (client and server of 1,100 connections in one process)")
	}
	var accepted atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			_, _ = w.Write([]byte(`{"data":[{"id":"m"}]}`))
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for _, p := range []string{roleChunk, contentChunk("hi"), finishChunk, usageChunk(3, 1), doneMsg} {
			_, _ = w.Write([]byte("data: " + p + "\n\n"))
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			accepted.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	cl := newClient(t, openai.Options{BaseURL: srv.URL, Timeout: time.Minute})
	ctx := context.Background()
	if w := cl.Warm(ctx, c); w.Opened != c {
		t.Fatalf("warm opened %d connections, want %d", w.Opened, c)
	}
	recs, err := loadgen.Run(ctx, loadgen.Config{Requests: 3 * c, Concurrency: c}, func(ctx context.Context, i int) schema.RequestRecord {
		return cl.Stream(ctx, openai.Request{Index: i, Body: body(1)}).Record
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	dialled := 0
	for _, r := range recs {
		if r.ErrorClass != "" {
			t.Fatalf("request %d: %s: %s", r.Index, r.ErrorClass, r.Error)
		}
		if !r.ConnReused {
			dialled++
		}
	}
	if dialled > 0 || accepted.Load() != c {
		t.Errorf("%d of %d requests dialled inside their window; the server accepted %d connections, want the %d the warm-up opened",
			dialled, len(recs), accepted.Load(), c)
	}
}
