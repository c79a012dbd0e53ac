// Package hostile is a loopback chat-completions server that misbehaves on purpose, one mode
// per hostile-server row of issue 11 (and the failures perfdag already classed), so tests can
// prove the client ends every request within its timeout, with the right error class and
// bounded memory. Requests whose X-Request-ID starts with "ok" get a valid stream, so a point
// mixes valid and hostile requests and its statistics can be checked over the valid ones.
package hostile

import (
	"compress/gzip"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

// Mode names one way to misbehave.
type Mode string

// The modes. Each comment says what the server does to a non-"ok" request.
const (
	EndlessData Mode = "endless_data" // SSE `data:` lines with no blank line, forever
	EndlessHTML Mode = "endless_html" // HTTP 200 text/html, an endless body
	Redirect302 Mode = "redirect_302" // 302 to another port (Server.Elsewhere)
	Redirect307 Mode = "redirect_307" // 307 to another port (Server.Elsewhere)
	Gzip        Mode = "gzip"         // a valid stream, gzip-encoded
	RateLimit   Mode = "http_429"     // 429 with a JSON error
	ServerError Mode = "http_500"     // 500 with a JSON error
	HTMLPage    Mode = "html_page"    // 200 text/html, a short page
	BadJSON     Mode = "bad_json"     // SSE whose data is not JSON
	Reset       Mode = "reset"        // one chunk, then the connection is closed without [DONE]
	Trickle     Mode = "trickle"      // one valid chunk every 200 ms, past any timeout
	Stall       Mode = "stall"        // headers, then nothing
)

// Modes lists every mode, in a stable order.
var Modes = []Mode{EndlessData, EndlessHTML, Redirect302, Redirect307, Gzip, RateLimit, ServerError,
	HTMLPage, BadJSON, Reset, Trickle, Stall}

// Server serves one Mode. Elsewhere is the redirect target (another port); it only counts.
type Server struct {
	Mode      Mode
	Elsewhere string        // URL of the redirect target, e.g. http://127.0.0.1:4321
	Hits      atomic.Int64  // requests that reached Elsewhere (must stay 0)
	KeyHits   atomic.Int64  // of them, requests carrying an Authorization header
	Tick      time.Duration // Trickle's interval (default 200 ms)
}

// chunk is one valid chat-completion chunk carrying text.
func chunk(text string) string {
	return `data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"` + text + `"},"finish_reason":null}]}` + "\n\n"
}

const finish = `data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n" +
	`data: {"id":"c","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":3}}` + "\n\n" +
	"data: [DONE]\n\n"

// Valid is the whole valid stream served to "ok" requests.
var Valid = chunk("one") + chunk(" two") + chunk(" three") + finish

// ElsewhereHandler counts what reaches the redirect target.
func (s *Server) ElsewhereHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.Hits.Add(1)
		if r.Header.Get("Authorization") != "" {
			s.KeyHits.Add(1)
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(Valid)) // counted valid if ever followed: the test must see the class instead
	})
}

// ServeHTTP answers one request according to the mode.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.Header.Get("X-Request-ID"), "ok") {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(Valid))
		return
	}
	fl, _ := w.(http.Flusher)
	flush := func() {
		if fl != nil {
			fl.Flush()
		}
	}
	ctx := r.Context()
	// forever writes block until the client goes away (a write fails or the request ends).
	forever := func(block []byte) {
		for ctx.Err() == nil {
			if _, err := w.Write(block); err != nil {
				return
			}
		}
	}
	switch s.Mode {
	case EndlessData:
		w.Header().Set("Content-Type", "text/event-stream")
		forever([]byte(strings.Repeat("data: "+strings.Repeat("x", 250)+"\n", 64)))
	case EndlessHTML:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		forever([]byte(strings.Repeat("<p>hello</p>\n", 1024)))
	case Redirect302, Redirect307:
		code := http.StatusFound
		if s.Mode == Redirect307 {
			code = http.StatusTemporaryRedirect
		}
		http.Redirect(w, r, s.Elsewhere+"/v1/chat/completions?token=secret-in-location", code)
	case Gzip:
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Content-Encoding", "gzip")
		gz := gzip.NewWriter(w)
		_, _ = gz.Write([]byte(Valid))
		_ = gz.Close()
	case RateLimit:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(`{"error":{"message":"slow down"}}`))
	case ServerError:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`{"error":{"message":"boom"}}`))
	case HTMLPage:
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html><body>502 Bad Gateway</body></html>"))
	case BadJSON:
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte("data: {not json\n\ndata: [DONE]\n\n"))
	case Reset:
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(chunk("one")))
		flush()
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, err := hj.Hijack(); err == nil {
				_ = c.Close()
			}
		}
	case Trickle:
		tick := s.Tick
		if tick <= 0 {
			tick = 200 * time.Millisecond
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for ctx.Err() == nil {
			if _, err := w.Write([]byte(chunk("t"))); err != nil {
				return
			}
			flush()
			select {
			case <-ctx.Done():
			case <-time.After(tick):
			}
		}
	case Stall:
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		flush()
		<-ctx.Done()
	default:
		http.Error(w, fmt.Sprintf("unknown mode %q", s.Mode), http.StatusNotImplemented)
	}
}
