package openai

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/perfdag/perfdag/steps/measure/sse"
)

// settleWait bounds how long a window waits, after its first response that left its
// connection idle, to see whether the server closes that connection. llama-server's close
// follows its last chunk within a quarter of a millisecond on loopback; the wait is paid once
// per window (no request starts meanwhile, none is timed across it), and only in full by a
// server that keeps its connections.
const settleWait = 20 * time.Millisecond

// closeWindow separates a server that closes a connection after its response from one that
// keeps it, once the window reuses connections: a close within closeWindow of the response
// the idle connection carried is the server's answer to that response; an idle timeout
// closes seconds later (uvicorn's 5 s, so vLLM and SGLang; nginx's 75 s), between points or in
// a gap of an open loop.
const closeWindow = 100 * time.Millisecond

// Modes of a window's connection reuse (reuse.mode).
const (
	reuseUnknown  int32 = iota // no response has left an idle connection yet
	reuseSettling              // one has: the window waits (settleWait) to see it closed or kept
	reuseKept                  // it was kept: requests take idle connections
	reuseClosing               // the server closed one right after its response: never reuse
)

// reuse decides, for one window's pre-dialled stock, whether a request may take an idle
// connection. Against a server that closes each connection after its response while
// answering keep-alive, an idle connection is one the server is closing: a request handed it
// before its close arrives fails and is sent again, and its TTFT holds the failed attempt.
// The window's first response that leaves its connection idle settles the question: until
// the server closes that connection or settleWait passes, no request starts; a close means
// every later request of the window takes a fresh pre-dialled connection of its own, never
// an idle one. A keep-alive server is told apart by time: its connection outlives the wait,
// and an idle timeout between points, or in a gap, closes no connection within closeWindow
// of its response.
type reuse struct {
	mode    atomic.Int32
	decided chan struct{} // closed once mode is kept or closing
	once    sync.Once
	mu      sync.Mutex
	timer   *time.Timer // the settle; stopped when the window ends
	done    bool
}

func newReuse() reuse { return reuse{decided: make(chan struct{})} }

// fresh waits while the window settles (or until ctx ends) and reports whether the next
// request must take a fresh connection rather than an idle one.
func (r *reuse) fresh(ctx context.Context) bool {
	if r.mode.Load() == reuseSettling {
		select {
		case <-r.decided:
		case <-ctx.Done():
		}
	}
	return r.mode.Load() == reuseClosing
}

// closing records that the server closes its connections after a response: no request of
// the window takes an idle connection from now on.
func (r *reuse) closing() {
	r.mode.Store(reuseClosing)
	r.once.Do(func() { close(r.decided) })
}

// kept records that the server kept the settling connection, unless it was seen closing.
func (r *reuse) kept() {
	if r.mode.CompareAndSwap(reuseSettling, reuseKept) {
		r.once.Do(func() { close(r.decided) })
	}
}

// settle starts the window's wait on the connection of its first response that left one
// idle (c, watched by w); later calls do nothing. The watch ends the wait early when it sees
// the server close c; otherwise, after settleWait, the socket itself says whether the close
// came (a busy client may not have read it yet).
func (r *reuse) settle(c net.Conn, w *closeWatch) {
	if !r.mode.CompareAndSwap(reuseUnknown, reuseSettling) {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		r.kept()
		return
	}
	r.timer = time.AfterFunc(settleWait, func() {
		if (w != nil && w.closed()) || peerClosed(c) {
			r.closing()
			return
		}
		r.kept()
	})
}

// stop ends the settle with the window and releases any request waiting on it.
func (r *reuse) stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done = true
	if r.timer != nil && r.timer.Stop() {
		r.kept()
	}
}

// closeWatch follows one connection between its responses: when the latest response on it
// ended and whether the server closed it since. A close within closeWindow of a response that
// left the connection idle tells that response's window the server closes after responses.
type closeWatch struct {
	mu      sync.Mutex
	endNs   int64  // the latest response ended cleanly and no request took the connection since (0: none)
	closeNs int64  // a read saw the server close the connection (0: not yet)
	window  *reuse // the window of that response
}

// taken: a request got the connection.
func (w *closeWatch) taken() {
	w.mu.Lock()
	w.endNs, w.window = 0, nil
	w.mu.Unlock()
}

// ended: a response of window r ended cleanly and left the connection idle.
func (w *closeWatch) ended(r *reuse) {
	w.mu.Lock()
	w.endNs, w.window = sse.Now(), r
	w.judge()
	w.mu.Unlock()
}

// sawClose is called with a read's error: the end of the stream (EOF) or a reset is the
// server closing the connection; anything else (a deadline, a close of our own) is not.
func (w *closeWatch) sawClose(err error) {
	if err != io.EOF && !errors.Is(err, syscall.ECONNRESET) {
		return
	}
	w.mu.Lock()
	if w.closeNs == 0 {
		w.closeNs = sse.Now()
	}
	w.judge()
	w.mu.Unlock()
}

// judge tells the window when the close followed its response closely; w.mu held.
func (w *closeWatch) judge() {
	if w.endNs != 0 && w.closeNs != 0 && w.window != nil && w.closeNs-w.endNs < int64(closeWindow) {
		w.window.closing()
	}
}

// closed reports whether a read saw the server close the connection.
func (w *closeWatch) closed() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.closeNs != 0
}

// watched is a connection that carries a closeWatch (closes returns it).
type watched interface{ closes() *closeWatch }

// watchedConn gives a connection without one of its own (not kernel-stamped) a closeWatch.
type watchedConn struct {
	net.Conn
	watch closeWatch
}

func (c *watchedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if err != nil {
		c.watch.sawClose(err)
	}
	return n, err
}

func (c *watchedConn) closes() *closeWatch { return &c.watch }

// NetConn returns the wrapped connection.
func (c *watchedConn) NetConn() net.Conn { return c.Conn }

// watchable returns c with a closeWatch: c itself when it has one (a kernel-stamped
// connection), else wrapped.
func watchable(c net.Conn) net.Conn {
	if _, ok := c.(watched); ok {
		return c
	}
	return &watchedConn{Conn: c}
}

// watchOf returns the closeWatch of c or of a connection under it (TLS, pre-dialled), or nil.
func watchOf(c net.Conn) *closeWatch {
	for c != nil {
		if w, ok := c.(watched); ok {
			return w.closes()
		}
		u, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			return nil
		}
		c = u.NetConn()
	}
	return nil
}
