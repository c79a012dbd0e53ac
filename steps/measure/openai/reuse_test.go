package openai_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/openai"
)

// closeDelay is how long after each streamed response lateCloser closes the connection: a
// server finishing its bookkeeping first (llama-server takes up to a quarter of that). A
// client that sends its next request within it on the same connection (a closed loop does,
// in microseconds) has it dropped.
const closeDelay = time.Millisecond

// lateCloser answers every chat request with a short stream while saying keep-alive, then
// closes the connection closeDelay later; a request that arrives on a connection it already
// answered is dropped without a byte (as llama-server drops one that reaches a connection it
// is closing). GET /v1/models keeps the connection. It counts the requests it dropped.
type lateCloser struct {
	*httptest.Server
	dropped, accepted atomic.Int64
	mu                sync.Mutex
	streamed          map[net.Conn]bool
}

func newLateCloser(t *testing.T) *lateCloser {
	t.Helper()
	s := &lateCloser{streamed: map[net.Conn]bool{}}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			_, _ = w.Write([]byte(`{"data":[{"id":"m"}]}`))
			return
		}
		c := r.Context().Value(connKey{}).(net.Conn)
		s.mu.Lock()
		again := s.streamed[c]
		s.streamed[c] = true
		s.mu.Unlock()
		if again {
			s.dropped.Add(1)
			if hc, _, err := http.NewResponseController(w).Hijack(); err == nil {
				_ = hc.Close()
			}
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for _, p := range []string{roleChunk, contentChunk("hello there"), finishChunk, usageChunk(3, 2), doneMsg} {
			_, _ = w.Write([]byte("data: " + p + "\n\n"))
			if p == roleChunk {
				_ = http.NewResponseController(w).Flush()
				time.Sleep(answerTime)
			}
		}
	}))
	srv.Config.ConnContext = func(ctx context.Context, c net.Conn) context.Context { return context.WithValue(ctx, connKey{}, c) }
	srv.Config.ConnState = func(c net.Conn, st http.ConnState) {
		switch st {
		case http.StateNew:
			s.accepted.Add(1)
		case http.StateIdle:
			s.mu.Lock()
			done := s.streamed[c]
			s.mu.Unlock()
			if done {
				time.AfterFunc(closeDelay, func() { _ = c.Close() })
			}
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	s.Server = srv
	return s
}

// Issue 20: against a server that closes each connection shortly after its streamed response
// while saying keep-alive, the window sees it close its first response's connection before
// any further request starts, and from then on gives every request a pre-dialled connection
// of its own: no request is handed an idle connection the server is closing, none is
// retried, none dials inside its TTFT, and each connection carries one streamed request.
func TestWindowStopsReusingAServerThatCloses(t *testing.T) {
	const n, conc = 24, 3
	srv := newLateCloser(t)
	cl := newClient(t, openai.Options{BaseURL: srv.URL})
	cl.Warm(context.Background(), conc)
	stop := cl.Predial(context.Background(), conc)
	recs := streamAll(cl, n, conc)
	stop()
	retried, reusedLater, inside := 0, 0, 0
	for _, r := range recs {
		if r.ErrorClass != "" || r.UsageComplete == nil || *r.UsageComplete != 2 {
			t.Errorf("request %d: %s %s", r.Index, r.ErrorClass, r.Error)
		}
		if r.Retried {
			retried++
		}
		// The first conc requests take Warm's connections; any later one that reused a
		// connection took one a stream had left idle.
		if r.Index >= conc && r.ConnReused {
			reusedLater++
		}
		if !r.ConnReused && !r.ConnPredialed {
			inside++
		}
	}
	t.Logf("%d requests at c=%d: %d retried, %d later ones on a reused connection, %d dialled inside their TTFT; the server dropped %d, accepted %d connections",
		n, conc, retried, reusedLater, inside, srv.dropped.Load(), srv.accepted.Load())
	if d := srv.dropped.Load(); retried != 0 || d != 0 {
		t.Errorf("%d requests retried, %d handed a connection the server was closing: want 0", retried, d)
	}
	if reusedLater != 0 || inside != 0 {
		t.Errorf("after the first %d requests, %d reused an idle connection and %d dialled inside their TTFT: want each on a pre-dialled connection of its own", conc, reusedLater, inside)
	}
}

// Issue 20: a keep-alive server whose idle timeout closes the connections between points (and
// in an idle gap inside one) is no closing server: each window reuses its connections for
// every request that finds one idle, and the server is not made to open a connection per
// request (it sees the warm connections, the stock, and the stock's refill of what a window
// took after an idle gap had emptied the pool).
func TestWindowKeepsReusingAKeepAliveServer(t *testing.T) {
	const n, conc = 24, 3
	const idle = 400 * time.Millisecond // > closeWindow: the close of an idle connection, never of a response
	srv := newServer(t, false, func(s *http.Server) { s.IdleTimeout = idle })
	cl := newClient(t, openai.Options{BaseURL: srv.URL})
	idleClosed := func(what string) {
		t.Helper()
		eventually(t, what, srv.streamedClosed)
	}
	check := func(what string, recs []schema.RequestRecord, accepted int64) {
		t.Helper()
		reused, retried := 0, 0
		for _, r := range recs {
			if r.ErrorClass != "" {
				t.Errorf("%s: request %d: %s %s", what, r.Index, r.ErrorClass, r.Error)
			}
			if r.ConnReused {
				reused++
			}
			if r.Retried {
				retried++
			}
		}
		// A request may still race the idle timeout (handed a connection the server closed a
		// moment before the client saw it): that is a retry, never a reason to stop reusing.
		t.Logf("%s: %d requests at c=%d, %d on a reused connection, %d retried; the server accepted %d connections", what, n, conc, reused, retried, accepted)
		if reused < n-conc || accepted > 2*conc {
			t.Errorf("%s: %d of %d requests reused a connection (want ≥ %d), %d connections for them (want ≤ %d): a keep-alive server was treated as one that closes",
				what, reused, n, n-conc, accepted, 2*conc)
		}
	}
	window := func(what string, gap bool) {
		before := srv.accepted.Load()
		cl.Warm(context.Background(), conc)
		stop := cl.Predial(context.Background(), conc)
		defer stop()
		check(what, streamAll(cl, n, conc), srv.accepted.Load()-before)
		if gap {
			// An idle gap inside the window longer than the server's idle timeout (an open
			// loop's pause): the window's own connections close after its responses, but long
			// after.
			idleClosed("the idle timeout inside the window")
			before = srv.accepted.Load()
			check(what+" after an idle gap", streamAll(cl, n, conc), srv.accepted.Load()-before)
		}
	}
	window("first point", false)
	idleClosed("the idle timeout between points")
	window("second point", true)
}
