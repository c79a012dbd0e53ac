//go:build linux

package session

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/loadgen"
	"github.com/perfdag/perfdag/steps/measure/openai"
	"github.com/perfdag/perfdag/steps/measure/sse"
	"github.com/perfdag/perfdag/steps/measure/workload"
	"github.com/perfdag/perfdag/steps/testkit"
)

// exactTTFT is the exact-timing server's time to first token.
const exactTTFT = 150 * time.Millisecond

// sent is what the exact-timing server really did for one request, on sse.Now's clock.
type sent struct {
	Arrived int64 `json:"arrived"` // the request's headers reached the server (kernel receive time)
	First   int64 `json:"first"`   // the first content chunk was handed to the kernel
}

// TTFT is the server's own time to first token.
func (s sent) TTFT() int64 { return s.First - s.Arrived }

// truth is what the exact-timing server reports at /truth.
type truth struct {
	Sends map[int]sent `json:"sends"` // by request index
	Conns []int64      `json:"conns"` // when each connection (but the asking one) was accepted
	Posts []int64      `json:"posts"` // when each chat request arrived, in order
}

// exactServer answers every chat completion with a role chunk at once, the first content
// chunk exactTTFT after the request arrived (an absolute deadline, then the send time
// stamped just before the write), three more tokens, finish, usage and [DONE]. It records
// its sends by the index in the prompt ("exact <i>") and every connection it accepts.
type exactServer struct {
	mu    sync.Mutex
	sends map[int]sent
	conns map[string]int64 // accepted at, by remote address
	posts []int64
	// closing: like llama.cpp's llama-server, close each connection once a streamed response
	// is done, although the response said nothing of it (HTTP/1.1 keep-alive).
	closing  bool
	streamed map[string]bool // connections that carried a streamed response, by remote address
}

func (e *exactServer) connState(c net.Conn, s http.ConnState) {
	switch s {
	case http.StateNew:
		e.mu.Lock()
		e.conns[c.RemoteAddr().String()] = sse.Now()
		e.mu.Unlock()
	case http.StateIdle:
		e.mu.Lock()
		done := e.closing && e.streamed[c.RemoteAddr().String()]
		e.mu.Unlock()
		if done {
			_ = c.Close()
		}
	}
}

func (e *exactServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	arrived := received(r.Context())
	switch r.URL.Path {
	case "/v1/models":
		_, _ = w.Write([]byte(`{"object":"list","data":[{"id":"exact"}]}`))
		return
	case "/truth":
		e.mu.Lock()
		defer e.mu.Unlock()
		tr := truth{Sends: e.sends, Posts: e.posts}
		for addr, at := range e.conns {
			if addr != r.RemoteAddr {
				tr.Conns = append(tr.Conns, at)
			}
		}
		slices.Sort(tr.Conns)
		_ = json.NewEncoder(w).Encode(tr)
		return
	}
	var req struct {
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 {
		http.Error(w, "want a chat request", http.StatusBadRequest)
		return
	}
	i, err := strconv.Atoi(strings.TrimPrefix(req.Messages[0].Content, "exact "))
	if err != nil {
		http.Error(w, "want the prompt exact <i>", http.StatusBadRequest)
		return
	}
	e.mu.Lock()
	e.posts = append(e.posts, arrived)
	e.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	rc := http.NewResponseController(w)
	write := func(payload string) {
		_, _ = w.Write([]byte("data: " + payload + "\n\n"))
		_ = rc.Flush()
	}
	const head = `{"id":"x","object":"chat.completion.chunk","model":"exact","choices":[{"index":0,"delta":`
	write(head + `{"role":"assistant","content":""},"finish_reason":null}]}`)
	time.Sleep(time.Duration(arrived + int64(exactTTFT) - sse.Now()))
	first := sse.Now()
	write(head + `{"content":" the"},"finish_reason":null}]}`)
	for range 3 {
		write(head + `{"content":" the"},"finish_reason":null}]}`)
	}
	write(head + `{},"finish_reason":"length"}]}`)
	write(`{"id":"x","object":"chat.completion.chunk","model":"exact","choices":[],"usage":{"prompt_tokens":2,"completion_tokens":4,"total_tokens":6}}`)
	write("[DONE]")
	e.mu.Lock()
	e.sends[i] = sent{Arrived: arrived, First: first}
	e.streamed[r.RemoteAddr] = true
	e.mu.Unlock()
}

// childEnv makes the test binary serve the exact-timing server instead of running tests:
// the server runs in a process of its own, as a real one never shares the client's.
const childEnv = "PERFDAG_SESSION_TEST_SERVER"

// childClosing is childEnv's value for a server that closes connections after each stream.
const childClosing = "closing"

func TestMain(m *testing.M) {
	testkit.ChildMain(m, childEnv, func(role string) error { return serveExact(role == childClosing) })
}

// serveExact serves the exact-timing server in a child process, until the parent stops it;
// closing: it closes each connection after a streamed response.
func serveExact(closing bool) error {
	e := &exactServer{sends: map[int]sent{}, conns: map[string]int64{}, closing: closing, streamed: map[string]bool{}}
	srv := &http.Server{Handler: e, ConnState: e.connState, ConnContext: withRx}
	return testkit.ServeChild(srv, func(ln net.Listener) net.Listener { return rxListener{ln} })
}

// startExact starts the exact-timing server in a child process and returns its base URL.
func startExact(t testing.TB) string {
	t.Helper()
	return startServer(t, "1")
}

// startServer starts the exact-timing server in a child process in a role (childEnv's value:
// "1", or childClosing) and returns its base URL.
func startServer(t testing.TB, role string) string {
	t.Helper()
	return testkit.StartChild(t, childEnv, role)
}

// readTruth fetches the server's record of what it did.
func readTruth(t testing.TB, base string) truth {
	t.Helper()
	resp, err := http.Get(base + "/truth")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tr truth
	if err := json.NewDecoder(resp.Body).Decode(&tr); err != nil {
		t.Fatalf("decode /truth: %v", err)
	}
	return tr
}

// exactSource prompts request i with "exact <i>", 4 answer tokens.
type exactSource struct{}

func (exactSource) Prompt(i int) (workload.Prompt, error) {
	return workload.Prompt{Text: "exact " + strconv.Itoa(i), InputTokens: 2, OutputTokens: 4}, nil
}
func (exactSource) Len() int { return 0 }

// exactSession is a session on the exact-timing server, as session.Open builds one (token
// counts deferred to after the window).
func exactSession(t testing.TB, base string) *Session {
	t.Helper()
	cl, err := openai.New(openai.Options{BaseURL: base, Timeout: 30 * time.Second, DeferCounts: true})
	if err != nil {
		t.Fatal(err)
	}
	s := &Session{Client: cl, Source: exactSource{}, Model: "exact"}
	t.Cleanup(s.Close)
	return s
}

// ttftDelta is, per record, the client's TTFT minus the server's own TTFT of the same
// request, in ms: what the client adds (sending the request, the first chunk's way back).
// Each client TTFT must enclose the server's.
func ttftDelta(t testing.TB, tr truth, recs []schema.RequestRecord) []float64 {
	t.Helper()
	d := make([]float64, len(recs))
	for k, r := range recs {
		if r.ErrorClass != "" {
			t.Fatalf("request %d: %s: %s", r.Index, r.ErrorClass, r.Error)
		}
		s, ok := tr.Sends[r.Index]
		if !ok {
			t.Fatalf("request %d: the server has no record of it", r.Index)
		}
		if r.StartNs > s.Arrived || r.FirstTokenNs < s.First {
			t.Fatalf("request %d: client stamps [%d, %d] do not enclose the server's [%d, %d]", r.Index, r.StartNs, r.FirstTokenNs, s.Arrived, s.First)
		}
		d[k] = float64((r.FirstTokenNs-r.StartNs)-s.TTFT()) / 1e6
	}
	return d
}

func meanOf(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// exactPoint runs one profiling point through Session.Load, the path a run-shape point
// takes (warm the connections, then the window), and returns the session, its records and
// the server's truth.
func exactPoint(t testing.TB, base string, cfg loadgen.Config) (*Session, []schema.RequestRecord, truth) {
	t.Helper()
	s := exactSession(t, base)
	recs, err := s.Load(context.Background(), PhaseProfiling, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != cfg.Requests {
		t.Fatalf("%d records, want %d", len(recs), cfg.Requests)
	}
	return s, recs, readTruth(t, base)
}

// TestExactTimingNoConnectInsideTTFT: a c = 16 point against a server that stamps what it
// really sent. Every connection is opened, and its connect time recorded, before the window,
// so no request of the window, the first 16 included, waits for a connect; and each client
// TTFT encloses the server's TTFT of the same request. How close the two are is a
// performance figure on a shared machine: BenchmarkExactTiming reports it.
func TestExactTimingNoConnectInsideTTFT(t *testing.T) {
	const c = 16
	base := startExact(t)
	s, recs, tr := exactPoint(t, base, loadgen.Config{Requests: 4 * c, Concurrency: c})
	w := s.Warmed()
	if w.Opened != c || len(w.ConnectNs) != c {
		t.Fatalf("warmed %d connections with %d connect times, want %d of each", w.Opened, len(w.ConnectNs), c)
	}
	for i, ns := range w.ConnectNs {
		if ns <= 0 {
			t.Errorf("warm connection %d: connect time %d", i, ns)
		}
	}
	windowStart := recs[0].StartNs
	for _, r := range recs {
		windowStart = min(windowStart, r.StartNs)
		if !r.ConnReused || r.ConnectNs != 0 || r.Retried {
			t.Errorf("request %d: reused %v connect_ns %d retried %v: it paid a connect inside the window", r.Index, r.ConnReused, r.ConnectNs, r.Retried)
		}
		if r.OutputTokens != 4 || r.UsageMismatch { // counted after the window
			t.Errorf("request %d: %d output tokens (mismatch %v), want the 4 the server sent", r.Index, r.OutputTokens, r.UsageMismatch)
		}
	}
	// c warm connections, and c pre-dialled ones that this keep-alive server never made
	// necessary (the stock refills only what requests take).
	if len(tr.Conns) != 2*c {
		t.Errorf("the server accepted %d connections, want %d warm and %d in stock", len(tr.Conns), c, c)
	} else if warm := tr.Conns[c-1]; warm >= tr.Posts[0] {
		t.Errorf("a warm connection was accepted %v after the window's first request arrived", time.Duration(warm-tr.Posts[0]))
	}
	delta := ttftDelta(t, tr, recs)
	t.Logf("client − server TTFT: mean %.3f ms (first %d %.3f ms, rest %.3f ms); warm connects %v",
		meanOf(delta), c, meanOf(delta[:c]), meanOf(delta[c:]), w.ConnectNs)
}

// TestOpenLoopPointWarmsItsCap: an open-loop point opens its in-flight cap worth of
// connections before its first request, as a closed-loop point opens C.
func TestOpenLoopPointWarmsItsCap(t *testing.T) {
	const limit = 4
	base := startExact(t)
	s, recs, tr := exactPoint(t, base, loadgen.Config{Requests: 6, Concurrency: limit, Rate: 200, Arrival: loadgen.ArrivalConstant})
	if w := s.Warmed(); w.Opened != limit {
		t.Fatalf("warmed %d connections, want the in-flight cap %d", w.Opened, limit)
	}
	if len(tr.Conns) != 2*limit || tr.Conns[limit-1] >= tr.Posts[0] {
		t.Fatalf("connections accepted at %v, first request at %v: want %d warm connections before it and %d in stock", tr.Conns, tr.Posts, limit, limit)
	}
	for _, r := range recs {
		if !r.ConnReused || r.ConnectNs != 0 {
			t.Errorf("request %d opened a connection though %d were warm", r.Index, limit)
		}
	}
}

// BenchmarkExactTiming runs c = 16 points of 64 requests through Session.Load against the
// exact-timing server (in its own process) and reports the mean of client TTFT − server
// TTFT over every request (goal ≤ 0.5 ms), over each window's first 16 requests (those that
// paid a TCP connect before connections were warmed) and over the rest, with the client's
// mean time from its start stamp to the request written (sent_ns − start_ns) and the mean
// connect time of the warmed connections.
func BenchmarkExactTiming(b *testing.B) {
	const c = 16
	base := startExact(b)
	var all, first, rest, write, connect []float64
	for b.Loop() {
		s := exactSession(b, base)
		cfg := loadgen.Config{Requests: 4 * c, Concurrency: c}
		recs, err := s.Load(context.Background(), PhaseProfiling, cfg, nil)
		if err != nil {
			b.Fatal(err)
		}
		s.Close()
		tr := readTruth(b, base)
		// Each iteration sends the same indexes, so the server's record of them is this one's.
		delta := ttftDelta(b, tr, recs)
		all = append(all, delta...)
		first = append(first, delta[:c]...)
		rest = append(rest, delta[c:]...)
		for _, r := range recs {
			write = append(write, float64(r.SentNs-r.StartNs)/1e6)
		}
		for _, ns := range s.Warmed().ConnectNs {
			connect = append(connect, float64(ns)/1e6)
		}
	}
	b.ReportMetric(meanOf(all), "ttft-delta-mean-ms")
	b.ReportMetric(meanOf(first), "first16-delta-mean-ms")
	b.ReportMetric(meanOf(rest), "rest-delta-mean-ms")
	b.ReportMetric(meanOf(write), "client-write-mean-ms")
	b.ReportMetric(meanOf(connect), "warm-connect-mean-ms")
	b.ReportMetric(0, "ns/op")
}
