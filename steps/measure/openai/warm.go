package openai

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
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
			var live liveTrace
			trace := live.hooks(c.now, func(net.Conn) {})
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
