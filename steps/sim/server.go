// Package sim is perfdag's built-in OpenAI-compatible inference server: a test double of a
// vLLM deployment with a latency model (TTFT grows with prompt length and queueing, time per
// token grows with the batch), reasoning streams, vLLM-format /metrics, DCGM-exporter GPU
// gauges and switchable faults. It records the truth of every request it served so tests can
// check a client's measurements against what was really sent.
package sim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/sse"
)

// Served is the truth of one request: what the simulator decided and when it really sent
// each piece (clock: sse.Now, the same one the client stamps with). Go tests read it with
// Sim.Served; a simulator in another process serves it as JSON at GET /sim/served.
type Served struct {
	Seq          int    `json:"seq"`        // arrival order, from 0
	RequestID    string `json:"request_id"` // X-Request-ID header
	Model        string `json:"model"`
	Stream       bool   `json:"stream"`
	Fault        string `json:"fault"` // "" or one of the Fault* names
	Status       int    `json:"status"`
	PromptTokens int    `json:"prompt_tokens"`
	Budget       int    `json:"budget"`     // max_completion_tokens / max_tokens (or the default)
	Unanswered   bool   `json:"unanswered"` // spent its whole budget reasoning
	// Planned tokens (what a complete stream carries) and those actually sent.
	ReasoningTokens int     `json:"reasoning_tokens"`
	AnswerTokens    int     `json:"answer_tokens"`
	SentTokens      int     `json:"sent_tokens"`
	FinishReason    string  `json:"finish_reason"`
	ArrivedNs       int64   `json:"arrived_ns"`       // handler entry
	AdmittedNs      int64   `json:"admitted_ns"`      // batch slot taken
	InjectedTTFTNs  int64   `json:"injected_ttft_ns"` // planned first-token time − arrival (queue + ttft + prefill)
	TokenDelayNs    []int64 `json:"token_delay_ns"`   // planned delay before each chunk after the first
	DeadlineNs      []int64 `json:"deadline_ns"`      // planned send time of each content/reasoning chunk
	SentNs          []int64 `json:"sent_ns"`          // real send time of each content/reasoning chunk
	AnswerSentNs    int64   `json:"answer_sent_ns"`   // real send time of the first answer (content) chunk, 0 if none
	RoleSentNs      int64   `json:"role_sent_ns"`
	EndNs           int64   `json:"end_ns"`
	// PromptSHA256 is the SHA-256 of the prompt text as the simulator joined it (messages'
	// text, newline-separated): the key that pairs this truth with a client's record.
	PromptSHA256 string `json:"prompt_sha256"`
}

// Sim is the simulator as an http.Handler (for `perfdag sim --addr` and for Start).
type Sim struct {
	p     params
	model string
	vocab *vocabulary
	state *engineState
	seq   atomic.Uint64
	done  <-chan struct{} // closes when the simulator shuts down: stalled streams end
	mux   *http.ServeMux
	start int64 // process start of this simulator, for `created`
}

// New builds a simulator serving model. done, when it closes, releases stalled streams
// (nil means never).
func New(cfg schema.SimConfig, model string, done <-chan struct{}) (*Sim, error) {
	p, err := resolve(cfg)
	if err != nil {
		return nil, err
	}
	if model == "" {
		return nil, errors.New("sim: model name is empty")
	}
	v, err := newVocabulary()
	if err != nil {
		return nil, err
	}
	s := &Sim{p: p, model: model, vocab: v, state: newEngineState(p.maxBatch), done: done, start: time.Now().Unix()}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", s.models)
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	mux.HandleFunc("GET /metrics", s.metrics)
	mux.HandleFunc("GET /dcgm/metrics", s.dcgm)
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	mux.HandleFunc("GET /sim/served", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusOK, s.Served()) })
	s.mux = mux
	return s, nil
}

// ServeHTTP routes the OpenAI, metrics and DCGM endpoints.
func (s *Sim) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Served returns a copy of the truth of the requests served so far, in completion order.
func (s *Sim) Served() []Served {
	s.state.mu.Lock()
	defer s.state.mu.Unlock()
	return append([]Served(nil), s.state.served...)
}

// Server is a simulator listening on a loopback port.
type Server struct {
	*Sim
	srv    *http.Server
	ln     net.Listener
	stop   chan struct{}
	closed atomic.Bool
	served chan struct{}
	busy   sync.WaitGroup // handlers running: Close waits for them (bounded) so their truths are recorded
}

// closeWait bounds how long Close waits for running handlers once their streams are released.
const closeWait = 10 * time.Second

// Start serves a simulator on 127.0.0.1 at a free port until ctx ends or Close is called.
func Start(ctx context.Context, cfg schema.SimConfig, model string) (*Server, error) {
	return StartOn(ctx, "127.0.0.1:0", cfg, model)
}

// StartOn serves a simulator on addr (host:port; port 0 picks a free one) until ctx ends or
// Close is called.
func StartOn(ctx context.Context, addr string, cfg schema.SimConfig, model string) (*Server, error) {
	stop := make(chan struct{})
	s, err := New(cfg, model, stop)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("sim: listen on %s: %w", addr, err)
	}
	return serve(ctx, ln, s, stop), nil
}

// StartListener serves a simulator on a listener the caller opened (a socket a parent
// process handed down) until ctx ends or Close is called.
func StartListener(ctx context.Context, ln net.Listener, cfg schema.SimConfig, model string) (*Server, error) {
	stop := make(chan struct{})
	s, err := New(cfg, model, stop)
	if err != nil {
		return nil, err
	}
	return serve(ctx, ln, s, stop), nil
}

func serve(ctx context.Context, ln net.Listener, s *Sim, stop chan struct{}) *Server {
	srv := &Server{Sim: s, ln: ln, stop: stop, served: make(chan struct{})}
	srv.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		srv.busy.Add(1)
		defer srv.busy.Done()
		s.ServeHTTP(w, r)
	}), ReadHeaderTimeout: 30 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	go func() {
		defer close(srv.served)
		_ = srv.srv.Serve(ln)
	}()
	context.AfterFunc(ctx, func() { srv.Close() })
	return srv
}

// URL is the base URL clients use (no trailing slash, no /v1).
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Close stops the server: stalled streams are released and connections closed.
func (s *Server) Close() {
	if s.closed.Swap(true) {
		return
	}
	close(s.stop)
	_ = s.srv.Close()
	<-s.served
	// the released handlers record their truths as they return (Served after Close sees them)
	done := make(chan struct{})
	go func() { s.busy.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(closeWait):
	}
}

// ListenAndServe runs a simulator on addr until ctx ends (`perfdag sim --addr`); it returns
// an error only when the simulator cannot start.
func ListenAndServe(ctx context.Context, addr string, cfg schema.SimConfig, model string) error {
	s, err := StartOn(ctx, addr, cfg, model)
	if err != nil {
		return err
	}
	<-ctx.Done()
	s.Close()
	return nil
}

// now is the simulator's clock: the client's, so truth and measurement share a time base.
func now() int64 { return sse.Now() }

func (s *Sim) models(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"object": "list",
		"data": []map[string]any{{
			"id": s.model, "object": "model", "created": s.start, "owned_by": "perfdag-sim", "root": s.model,
		}},
	})
}
