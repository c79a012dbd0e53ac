package openai

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"sync"
	"time"

	"github.com/perfdag/perfdag/schema"
)

// warmHold bounds how long Warm waits for all its connections to be open at once.
const warmHold = 10 * time.Second

// Warmed is what Warm did: how many connections it opened and what each cost.
type Warmed struct {
	Opened    int     // connections opened (the others were already idle in the pool)
	ConnectNs []int64 // dial + TLS time of each connection opened (when the trace saw its dial)
}

// Warm opens n connections to the server and leaves them idle in the pool, so the first n
// requests of a window reuse one instead of paying a TCP (and TLS) connect inside their
// TTFT. Each connection carries one cheap GET /v1/models; every request holds its connection
// until all n have one (or warmHold passes), so no two share one. Whatever the server answers
// is ignored: Warm is best effort. It returns how many connections it opened and the connect
// time of each (httptrace), which a point records in place of its requests' connects.
func (c *Client) Warm(ctx context.Context, n int) Warmed {
	n = min(n, c.tr.MaxIdleConnsPerHost)
	if n <= 0 {
		return Warmed{}
	}
	ctx, cancel := context.WithTimeout(ctx, warmHold)
	defer cancel()
	var got sync.WaitGroup
	got.Add(n)
	all := make(chan struct{})
	go func() { got.Wait(); close(all) }()
	var mu sync.Mutex
	var w Warmed
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			once := sync.Once{}
			live := newLiveTrace(c.now)
			trace := &live.trace
			trace.GotConn = func(i httptrace.GotConnInfo) {
				once.Do(func() {
					if !i.Reused {
						var rec schema.RequestRecord
						ct := live.snapshot()
						ct.fill(&rec) // ct.reused stays false: this request opened its connection
						mu.Lock()
						w.Opened++
						if rec.ConnectNs > 0 {
							w.ConnectNs = append(w.ConnectNs, rec.ConnectNs)
						}
						mu.Unlock()
					}
					got.Done()
					select { // hold this connection until every request has its own
					case <-all:
					case <-ctx.Done():
					}
				})
			}
			defer once.Do(got.Done) // the request failed before it had a connection
			req, err := c.newRequest(httptrace.WithClientTrace(ctx, trace), http.MethodGet, "/v1/models", nil)
			if err != nil {
				return
			}
			resp, err := c.http.Do(req)
			if err != nil {
				return
			}
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, MaxErrorBody))
			_ = resp.Body.Close()
		})
	}
	wg.Wait()
	return w
}

// Predial keeps a stock of min(n, MaxPredial) connections to the server dialled ahead of the
// requests that will use them, refilled in the background as requests take them, so a
// request never waits on a connect when the server closes each connection after its
// response (llama-server does). It waits (at most warmHold) until the stock is full and
// returns the function that closes it, for the point's end. A request served by a stocked
// connection records that connection's set-up as done before it started (ConnPredialed).
// While the stock lasts, the window also watches whether the server closes connections right
// after their responses; once it does, every request takes a stocked connection of its own
// and none an idle one (see reuse). Through a proxy, or with n ≤ 0, there is no stock.
func (c *Client) Predial(ctx context.Context, n int) (stop func()) {
	n = min(n, MaxPredial)
	addr, ok := c.dialAddr()
	if n <= 0 || !ok {
		return func() {}
	}
	s := newStock("tcp", addr, n, c.dialer.dial, c.now)
	if old := c.dialer.cur.Swap(s); old != nil {
		old.close()
	}
	s.mu.Lock()
	s.fill()
	s.mu.Unlock()
	s.wait(ctx, warmHold)
	return func() {
		c.dialer.cur.CompareAndSwap(s, nil)
		s.close()
	}
}

// dialAddr is the address the transport dials for the server (host:port, the scheme's port
// by default); false when it goes through a proxy or is not plain HTTP.
func (c *Client) dialAddr() (string, bool) {
	u, err := url.Parse(c.base)
	if err != nil || u.Scheme != "http" {
		return "", false // https: the transport's own TLS handshake would still run inside the request
	}
	if c.tr.Proxy != nil {
		if p, err := c.tr.Proxy(&http.Request{URL: u, Header: http.Header{}}); err != nil || p != nil {
			return "", false
		}
	}
	port := u.Port()
	if port == "" {
		port = "80"
	}
	return net.JoinHostPort(u.Hostname(), port), true
}
