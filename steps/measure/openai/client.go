// Package openai is perfdag's OpenAI-compatible chat-completions client: one shared HTTP
// transport, SSE messages stamped at their first byte (on Linux with the kernel's receive
// time, so a busy client never inflates a latency), and a per-request record that follows
// AIPerf's definitions (TTFT, TTFO, last content, usage, error classes). It holds no SDK and
// no state beyond connections, so thousands of requests can stream through it at once.
package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/perfdag/perfdag/steps/measure/sse"
	"github.com/perfdag/perfdag/steps/measure/tokens"
)

// DefaultTimeout is the per-request timeout when Options.Timeout is zero (AIPerf's old default).
const DefaultTimeout = 10 * time.Minute

// DefaultMaxConns sizes the idle pool per host: the highest concurrency a campaign may ask
// (cells[].concurrencies, up to 100,000), so a closed loop never re-dials between requests.
// A pool of 1,024 closed every connection past it as its response ended: at c = 8,192 seven
// requests in eight dialled inside their TTFT and the client spent a third of its CPU on
// connects. A point never holds more connections than it has requests in flight, and an idle
// one closes after IdleConnTimeout.
const DefaultMaxConns = 100_000

// Options configure a Client.
type Options struct {
	BaseURL  string        // e.g. http://127.0.0.1:8000 (a trailing / or /v1 is trimmed)
	APIKey   string        // sent as a bearer token; from endpoint.APIKey, never logged
	Timeout  time.Duration // per request, from send to the end of the stream
	MaxConns int           // idle connections kept per host
	Now      func() int64  // clock for every timestamp (default sse.Now); setting it implies UserStamps
	// UserStamps stamps SSE messages when a read returns instead of with the kernel's
	// receive time (Linux SO_TIMESTAMPNS, on sse.Now's time base), e.g. to compare the two.
	UserStamps bool
	// DeferCounts leaves a streamed record's o200k_base counts (and the usage checks that
	// need them) to the caller's later CountTokens with the Result's texts: tokenizing is
	// most of the client's CPU per token, and a load window then spends none on it (no
	// think time in a closed loop, no CPU taken from the streams being read or from a
	// server on the same machine).
	DeferCounts bool
}

// Client streams chat completions. It is safe for concurrent use.
type Client struct {
	base    string
	key     string
	timeout time.Duration
	now     func() int64
	http    *http.Client
	tr      *http.Transport
	dialer  *predialer // the transport's DialContext: hands out the point's pre-dialled stock
	// deferCounts: see Options.DeferCounts.
	deferCounts bool
	// fresh never reuses a connection: a request the server cut off on a stale one is sent
	// again through it.
	fresh *http.Client
	// contextLen is the server's per-request context in its tokens (0 = unknown), set by
	// Check; the truncation rule of every record reads it.
	contextLen atomic.Int64
	// analysis bounds how many finished streams are tokenized at once, leaving at least one
	// CPU to the streams still being read: the client's own work must not delay the stamps
	// of other requests. Making a record without its counts is too little work to queue for
	// (a queue whose holder the OS preempts holds every finished request up).
	analysis chan struct{}
	// skel are the shapes of chunk this client's streams have read (see skeleton).
	skel skeletons
	lag  ReadLag // its kernel-stamped reads' lag (ReadLag)
	// chatURL is base + chatPath, parsed once; each request gets a copy.
	chatURL *url.URL
}

// New returns a Client with its own transport. It loads the tokenizer up front, so the first
// request of a run never pays for it while other streams are being stamped.
func New(o Options) (*Client, error) {
	u, err := url.Parse(o.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("openai: base URL %q: want http://host:port or https://host", o.BaseURL)
	}
	if err := tokens.Load(); err != nil {
		return nil, fmt.Errorf("openai: %w", err)
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxConns <= 0 {
		o.MaxConns = DefaultMaxConns
	}
	if o.Now == nil {
		o.Now = sse.Now
	} else {
		o.UserStamps = true // kernel stamps are on sse.Now's time base only
	}
	// Every connection carries a closeWatch (see reuse): a kernel-stamped one has its own.
	cl := &Client{}
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dialer.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		if !o.UserStamps {
			c = stampConnLag(c, &cl.lag)
		}
		return watchable(c), nil
	}
	pd := &predialer{dial: dial}
	// HTTP/1.1 only (a custom dialer without ForceAttemptHTTP2): one stream per connection,
	// as AIPerf's aiohttp client does, so a connection's kernel receive times belong to one
	// response.
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           pd.DialContext,
		MaxIdleConns:          0, // no global cap: the per-host cap below governs
		MaxIdleConnsPerHost:   o.MaxConns,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   30 * time.Second,
		ExpectContinueTimeout: time.Second,
		DisableCompression:    true, // a gzip layer would buffer the stream and blur the stamps
		ReadBufferSize:        64 << 10,
		WriteBufferSize:       64 << 10,
	}
	base := strings.TrimSuffix(strings.TrimSuffix(o.BaseURL, "/"), "/v1")
	freshTr := tr.Clone()
	freshTr.DisableKeepAlives = true
	cl.base, cl.key, cl.timeout, cl.now, cl.tr, cl.dialer = base, o.APIKey, o.Timeout, o.Now, tr, pd
	if u, err := url.Parse(base + chatPath); err == nil && u.Host != "" {
		cl.chatURL = u // else newChatRequest parses (and reports) per request
	}
	cl.http, cl.deferCounts = &http.Client{Transport: tr, CheckRedirect: noRedirect}, o.DeferCounts
	cl.fresh = &http.Client{Transport: freshTr, CheckRedirect: noRedirect}
	cl.analysis = make(chan struct{}, max(1, runtime.GOMAXPROCS(0)-1))
	return cl, nil
}

// DefersCounts reports whether streamed records wait for CountTokens (Options.DeferCounts).
func (c *Client) DefersCounts() bool { return c.deferCounts }

// Close drops idle connections and any pre-dialled stock (Predial).
func (c *Client) Close() {
	if s := c.dialer.cur.Swap(nil); s != nil {
		s.close()
	}
	c.tr.CloseIdleConnections()
}

// Now reads the client's clock, so callers stamp on the same time base as the records.
func (c *Client) Now() int64 { return c.now() }

// newRequest builds a request to path with the auth header; the key goes nowhere else.
func (c *Client) newRequest(ctx context.Context, method, path string, body io.Reader) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return nil, fmt.Errorf("build %s %s: %w", method, path, c.redactErr(err))
	}
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	return req, nil
}

// chatPath is where chat completions are posted.
const chatPath = "/v1/chat/completions"

// newChatRequest builds a chat-completion POST of body as newRequest would, from the URL
// parsed once in New rather than per request.
func (c *Client) newChatRequest(ctx context.Context, body []byte) (*http.Request, error) {
	if c.chatURL == nil {
		return c.newRequest(ctx, http.MethodPost, chatPath, bytes.NewReader(body))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "", bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("build POST %s: %w", chatPath, c.redactErr(err))
	}
	u := *c.chatURL
	req.URL, req.Host = &u, u.Host
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	return req, nil
}

// redact removes the API key from text that may end up in a record, an error or a log.
func (c *Client) redact(s string) string {
	if c.key == "" {
		return s
	}
	return strings.ReplaceAll(s, c.key, "[redacted]")
}

func (c *Client) redactErr(err error) error {
	if err == nil || c.key == "" || !strings.Contains(err.Error(), c.key) {
		return err
	}
	return redactedError{msg: c.redact(err.Error()), cause: err}
}

// redactedError keeps errors.Is/As working on the cause while printing a key-free message.
type redactedError struct {
	msg   string
	cause error
}

func (e redactedError) Error() string { return e.msg }
func (e redactedError) Unwrap() error { return e.cause }

// Models lists the model ids the server serves (GET /v1/models): the preflight that proves
// the endpoint answers, the key is accepted and the model name is right.
func (c *Client) Models(ctx context.Context) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, min(c.timeout, time.Minute))
	defer cancel()
	req, err := c.newRequest(ctx, http.MethodGet, "/v1/models", nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s/v1/models: %w", c.base, c.redactErr(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return nil, fmt.Errorf("GET %s/v1/models: read body: %w", c.base, c.redactErr(err))
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s/v1/models: HTTP %d: %s", c.base, resp.StatusCode, c.redact(snippet(body)))
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("GET %s/v1/models: decode: %w", c.base, err)
	}
	ids := make([]string, 0, len(list.Data))
	for _, m := range list.Data {
		ids = append(ids, m.ID)
	}
	return ids, nil
}

// snippet shortens a response body for an error message.
func snippet(b []byte) string {
	const n = 300
	s := strings.TrimSpace(string(b))
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}
