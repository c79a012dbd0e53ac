package openai_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/openai"
)

// closingServer streams a short answer to every chat request (over answerTime, as a model
// takes a while; the stock refills meanwhile) and then closes the connection although the
// response said keep-alive, as llama-server does; GET /v1/models keeps it. It counts the
// connections it accepted and closed and the chat requests it answered.
// answerTime is how long closingServer takes over an answer.
const answerTime = 50 * time.Millisecond

type closingServer struct {
	*httptest.Server
	accepted, closed, answered atomic.Int64
	mu                         sync.Mutex
	streamed                   map[net.Conn]bool
	closedStreamed             int // connections that carried a stream and are closed
}

// streamedClosed reports whether every connection that carried a stream is closed.
func (s *closingServer) streamedClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closedStreamed == len(s.streamed)
}

func newClosingServer(t *testing.T, configure func(*http.Server)) *closingServer {
	t.Helper()
	return newServer(t, true, configure)
}

// newServer is closingServer, or with closing false one that keeps its connections.
func newServer(t *testing.T, closing bool, configure func(*http.Server)) *closingServer {
	t.Helper()
	s := &closingServer{streamed: map[net.Conn]bool{}}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			_, _ = w.Write([]byte(`{"data":[{"id":"m"}]}`))
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
		s.mu.Lock()
		s.streamed[r.Context().Value(connKey{}).(net.Conn)] = true
		s.mu.Unlock()
		s.answered.Add(1)
	}))
	srv.Config.ConnContext = func(ctx context.Context, c net.Conn) context.Context { return context.WithValue(ctx, connKey{}, c) }
	srv.Config.ConnState = func(c net.Conn, st http.ConnState) {
		switch st {
		case http.StateNew:
			s.accepted.Add(1)
		case http.StateClosed, http.StateHijacked:
			s.closed.Add(1)
			s.mu.Lock()
			if s.streamed[c] {
				s.closedStreamed++
			}
			s.mu.Unlock()
		case http.StateIdle:
			s.mu.Lock()
			done := s.streamed[c] && closing
			s.mu.Unlock()
			if done {
				_ = c.Close()
			}
		}
	}
	if configure != nil {
		configure(srv.Config)
	}
	srv.Start()
	t.Cleanup(srv.Close)
	s.Server = srv
	return s
}

// eventually polls cond until it holds or 10 s pass (a bound on a hang, not a timing claim).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %s", what)
		}
	}
}

// streamAll sends n requests, conc at a time, and returns their records by index.
func streamAll(cl *openai.Client, n, conc int) []schema.RequestRecord {
	recs := make([]schema.RequestRecord, n)
	next := make(chan int, n)
	for i := range n {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	for range conc {
		wg.Go(func() {
			for i := range next {
				recs[i] = cl.Stream(context.Background(), openai.Request{Index: i, Body: body(2)}).Record
			}
		})
	}
	wg.Wait()
	return recs
}

// Against a server that closes every connection after its stream, each request after Warm's
// is served by a pre-dialled connection: none dials inside its TTFT, each records the set-up
// of its connection as done before it was sent, and the server answers each request once.
func TestPredialServesAServerThatClosesAfterEachResponse(t *testing.T) {
	const n, conc = 24, 3
	for _, predial := range []bool{false, true} {
		t.Run("predial="+strconv.FormatBool(predial), func(t *testing.T) {
			srv := newClosingServer(t, nil)
			cl := newClient(t, openai.Options{BaseURL: srv.URL})
			cl.Warm(context.Background(), conc)
			if predial {
				stop := cl.Predial(context.Background(), conc)
				defer stop()
			}
			recs := streamAll(cl, n, conc)
			inside, stocked, reused := 0, 0, 0 // reused: Warm's connections, or (Go's transport calls it so) one that waited idle
			for _, r := range recs {
				if r.ErrorClass != "" || r.Status != http.StatusOK || r.UsageComplete == nil || *r.UsageComplete != 2 {
					t.Errorf("request %d: %s %s, status %d", r.Index, r.ErrorClass, r.Error, r.Status)
				}
				switch {
				case r.ConnPredialed:
					stocked++
					if r.ConnReused || r.ConnectNs <= 0 || r.ConnectDoneNs <= 0 || r.ConnectDoneNs >= r.SentNs {
						t.Errorf("request %d on a pre-dialled connection: reused %v, connect_ns %d done at %d, sent at %d", r.Index, r.ConnReused, r.ConnectNs, r.ConnectDoneNs, r.SentNs)
					}
				case !r.ConnReused:
					inside++
				default:
					reused++
				}
			}
			t.Logf("%d requests at c=%d: %d dialled inside their TTFT, %d on pre-dialled connections, %d reused; server accepted %d connections",
				n, conc, inside, stocked, reused, srv.accepted.Load())
			if got := srv.answered.Load(); got != n {
				t.Errorf("the server answered %d chat requests for %d sent", got, n)
			}
			switch {
			case predial && (inside != 0 || stocked < n/2):
				t.Errorf("with a stock: %d requests dialled inside their TTFT (want 0), %d on pre-dialled connections (want ≥ %d)", inside, stocked, n/2)
			case !predial && (inside < n/2 || stocked != 0):
				t.Errorf("without a stock: %d requests dialled inside their TTFT, want ≥ %d (the server closes every connection)", inside, n/2)
			}
		})
	}
}

// A stocked connection the server closes while it waits (here: no request within the
// server's header timeout) is dropped, not handed to a request that would then fail.
func TestPredialDropsConnectionsTheServerClosed(t *testing.T) {
	const n = 4
	srv := newServer(t, false, func(s *http.Server) { s.ReadHeaderTimeout = 50 * time.Millisecond })
	cl := newClient(t, openai.Options{BaseURL: srv.URL})
	stop := cl.Predial(context.Background(), n)
	defer stop()
	eventually(t, "the server closing the idle stocked connections", func() bool { return srv.closed.Load() == n })
	recs := streamAll(cl, 2*n, n)
	for _, r := range recs {
		if r.ErrorClass != "" || r.Retried {
			t.Errorf("request %d: error %q retried %v: a connection the server had closed was handed out", r.Index, r.Error, r.Retried)
		}
	}
	if got := srv.answered.Load(); got != 2*n {
		t.Errorf("the server answered %d chat requests for %d sent", got, 2*n)
	}
}

// Stopping the stock closes every connection it still holds.
func TestPredialStopClosesTheStock(t *testing.T) {
	const n = 5
	srv := newClosingServer(t, nil)
	cl := newClient(t, openai.Options{BaseURL: srv.URL})
	stop := cl.Predial(context.Background(), n)
	eventually(t, "the server accepting the stock", func() bool { return srv.accepted.Load() == n })
	stop()
	eventually(t, "the server seeing the stock closed", func() bool { return srv.closed.Load() == n })
}

// rawServer accepts connections and hands each one, with its accept order, to serve.
func rawServer(t *testing.T, serve func(k int, c net.Conn, rd *bufio.Reader)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { _ = ln.Close(); wg.Wait() })
	wg.Go(func() {
		for k := 0; ; k++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				serve(k, c, bufio.NewReader(c))
			})
		}
	})
	return "http://" + ln.Addr().String()
}

// readRequest reads one HTTP request and returns its body's request index, or -1.
func readRequest(rd *bufio.Reader) (int, bool) {
	req, err := http.ReadRequest(rd)
	if err != nil {
		return 0, false
	}
	b, _ := io.ReadAll(req.Body)
	s := string(b)
	i := strings.Index(s, `"content":"req `)
	if i < 0 {
		return -1, true
	}
	n, _ := strconv.Atoi(strings.SplitN(s[i+len(`"content":"req `):], `"`, 2)[0])
	return n, true
}

// A pre-dialled connection that the server closes without a byte of answer is the request's
// stale-connection case: it is sent once more, on a connection of its own. One the server began
// answering (part of a status line) is never sent again: that request fails.
func TestPredialResendsOnlyUnanswered(t *testing.T) {
	for _, tc := range []struct {
		name    string
		partial string // what the server writes before it closes the first try of each request
		resent  bool
	}{
		{name: "closed without a byte", resent: true},
		{name: "began answering", partial: "HTTP/1.1 200 OK\r\nContent-Ty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			seen := map[int]int{}
			base := rawServer(t, func(_ int, c net.Conn, rd *bufio.Reader) {
				i, ok := readRequest(rd)
				if !ok {
					return
				}
				mu.Lock()
				seen[i]++
				first := seen[i] == 1
				mu.Unlock()
				if first {
					_, _ = io.WriteString(c, tc.partial)
					return // closes
				}
				_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n")
				for _, p := range []string{roleChunk, contentChunk("hi"), finishChunk, usageChunk(3, 1), doneMsg} {
					_, _ = io.WriteString(c, "data: "+p+"\n\n")
				}
			})
			cl := newClient(t, openai.Options{BaseURL: base})
			stop := cl.Predial(context.Background(), 2)
			defer stop()
			const n = 3
			for i := range n {
				b := []byte(`{"model":"m","messages":[{"role":"user","content":"req ` + strconv.Itoa(i) + `"}],"max_tokens":1}`)
				r := cl.Stream(context.Background(), openai.Request{Index: i, Body: b}).Record
				if !r.ConnPredialed {
					t.Errorf("request %d: not on a pre-dialled connection", i)
				}
				mu.Lock()
				got := seen[i]
				mu.Unlock()
				if tc.resent {
					if r.ErrorClass != "" || !r.Retried || got != 2 {
						t.Errorf("request %d: error %q, retried %v, the server saw it %d times: want one resend that succeeds", i, r.Error, r.Retried, got)
					}
				} else if r.ErrorClass == "" || r.Retried || got != 1 {
					t.Errorf("request %d: error class %q, retried %v, the server saw it %d times: a request the server began answering must fail, never be resent", i, r.ErrorClass, r.Retried, got)
				}
			}
		})
	}
}
