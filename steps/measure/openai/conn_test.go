package openai_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/openai"
)

// oneShot answers one request per connection and advertises Keep-Alive, then drops the next
// request on that connection without a response byte, as llama-server does after a stream:
// the client's reused connection fails with EOF before any answer.
type oneShot struct {
	mu      sync.Mutex
	served  map[net.Conn]int
	dropped int
}

func (o *oneShot) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c := r.Context().Value(connKey{}).(net.Conn)
	o.mu.Lock()
	o.served[c]++
	n := o.served[c]
	if n > 1 {
		o.dropped++
	}
	o.mu.Unlock()
	if n > 1 {
		hc, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			_ = hc.Close()
		}
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for _, p := range []string{roleChunk, contentChunk("hello there"), finishChunk, usageChunk(3, 2), doneMsg} {
		_, _ = w.Write([]byte("data: " + p + "\n\n"))
	}
}

type connKey struct{}

func TestStaleIdleConnectionIsRetried(t *testing.T) {
	o := &oneShot{served: map[net.Conn]int{}}
	srv := httptest.NewUnstartedServer(o)
	srv.Config.ConnContext = func(ctx context.Context, c net.Conn) context.Context { return context.WithValue(ctx, connKey{}, c) }
	srv.Start()
	defer srv.Close()
	c, err := openai.New(openai.Options{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const n, conc = 32, 2
	recs := make([]schema.RequestRecord, n)
	var wg sync.WaitGroup
	next := make(chan int, n)
	for i := range n {
		next <- i
	}
	close(next)
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				recs[i] = c.Stream(context.Background(), openai.Request{Index: i, Body: []byte(`{"model":"m","messages":[],"max_tokens":2}`)}).Record
			}
		}()
	}
	wg.Wait()
	retried, fresh := 0, 0
	for _, r := range recs {
		if r.ErrorClass != "" {
			t.Errorf("request %d failed: %s: %s", r.Index, r.ErrorClass, r.Error)
		}
		if r.Retried {
			retried++
		}
		if !r.ConnReused {
			fresh++
			if r.ConnectNs <= 0 {
				t.Errorf("request %d opened a connection but recorded connect_ns %d", r.Index, r.ConnectNs)
			}
		}
	}
	o.mu.Lock()
	dropped := o.dropped
	o.mu.Unlock()
	if dropped == 0 || retried == 0 {
		t.Fatalf("the server dropped %d requests and %d records say retried: the test did not exercise a stale connection", dropped, retried)
	}
	if fresh < n/2 {
		t.Errorf("%d of %d requests recorded a fresh connection, want most (the server serves one per connection)", fresh, n)
	}
}

// A large request (a long prompt) on a connection the server closed is cut off while it is
// still being written: Go's transport does not retry once some bytes went out, so the client
// sends it again on a connection of its own. The server never saw the first attempt whole, so
// it answers each request exactly once.
func TestStaleConnectionDuringLargeWriteIsResent(t *testing.T) {
	o := &oneShot{served: map[net.Conn]int{}}
	var mu sync.Mutex
	answered := 0
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := r.Context().Value(connKey{}).(net.Conn)
		o.mu.Lock()
		first := o.served[c] == 0
		o.mu.Unlock()
		if first {
			// Read the whole body so the connection goes back to the client's idle pool;
			// the next request on it is then dropped unread (oneShot), as llama-server does.
			if _, err := io.Copy(io.Discard, r.Body); err != nil {
				return
			}
			mu.Lock()
			answered++
			mu.Unlock()
		}
		o.ServeHTTP(w, r)
	}))
	srv.Config.ConnContext = func(ctx context.Context, c net.Conn) context.Context { return context.WithValue(ctx, connKey{}, c) }
	srv.Start()
	defer srv.Close()
	c, err := openai.New(openai.Options{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Larger than loopback socket buffers take in one go, so the drop lands mid-write.
	body := []byte(`{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("word ", 1<<20) + `"}],"max_tokens":2}`)
	const n = 6
	retried := 0
	for i := range n {
		r := c.Stream(context.Background(), openai.Request{Index: i, Body: body}).Record
		if r.ErrorClass != "" {
			t.Errorf("request %d failed: %s: %s", i, r.ErrorClass, r.Error)
		}
		if r.Retried {
			retried++
			if r.ConnReused || r.ConnectNs <= 0 {
				t.Errorf("request %d was resent on a reused connection (reused %v, connect_ns %d)", i, r.ConnReused, r.ConnectNs)
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	o.mu.Lock()
	dropped := o.dropped
	o.mu.Unlock()
	if dropped == 0 || retried == 0 {
		t.Fatalf("the server dropped %d requests, %d records say retried: no stale connection was exercised", dropped, retried)
	}
	if answered != n {
		t.Errorf("the server answered %d whole requests for %d sent: a resend must add no load", answered, n)
	}
}
