package openai

import (
	"context"
	"errors"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// MaxPredial bounds the stock of pre-dialled connections a point keeps (Client.Predial).
const MaxPredial = 64

// predialBackoffMax bounds the pause before the stock redials after a failed dial or after a
// stocked connection the server closed young.
const predialBackoffMax = time.Second

// dialFunc is a DialContext.
type dialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// predialed is a connection dialled before any request asked for it. While it waits in the
// stock a watcher reads it, so a server that closes it (an idle timeout) is seen at once and
// the connection is dropped instead of handed to a request that would then fail.
type predialed struct {
	net.Conn
	startNs, doneNs int64 // the dial began and ended, on the client clock
	dialedAt        int   // the stock's take count when it was dialled
	gotByte         atomic.Bool
	claimed         atomic.Bool   // a request got the connection (claim)
	watchErr        error         // what the watcher's read returned; valid once watched is closed
	watched         chan struct{} // closed when the watcher has stopped reading
}

// Read counts whether the connection ever delivered a byte (see answered).
func (p *predialed) Read(b []byte) (int, error) {
	n, err := p.Conn.Read(b)
	if n > 0 && !p.gotByte.Load() {
		p.gotByte.Store(true)
	}
	return n, err
}

// claim reports whether this is the first request to get the connection.
func (p *predialed) claim() bool { return p.claimed.CompareAndSwap(false, true) }

// NetConn returns the dialled connection (for the kernel receive clock).
func (p *predialed) NetConn() net.Conn { return p.Conn }

// answered reports whether the server sent anything on the connection since it was handed
// to a request: a request on a connection that never delivered a byte was not answered.
func (p *predialed) answered() bool { return p.gotByte.Load() }

// watch reads the idle connection until the server closes it (or sends something it should
// not) or the stock interrupts the read with a past deadline to hand the connection out.
func (p *predialed) watch(died func(*predialed)) {
	var b [1]byte
	_, err := p.Conn.Read(b[:])
	if err == nil {
		err = errors.New("unsolicited data on an idle connection")
	}
	p.watchErr = err
	close(p.watched)
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		died(p)
	}
}

// predialedOf returns the pre-dialled connection under c (through TLS), or nil.
func predialedOf(c net.Conn) *predialed {
	for c != nil {
		if p, ok := c.(*predialed); ok {
			return p
		}
		u, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			return nil
		}
		c = u.NetConn()
	}
	return nil
}

// stock keeps up to target connections to one address dialled ahead of the requests that
// will use them, for servers that close a connection after each response (llama.cpp's
// llama-server does, while answering keep-alive): without it every such request would dial
// inside its TTFT. A connection taken is replaced in the background. A stocked connection
// the server closes is dropped and replaced only while requests keep taking connections, so
// against a server that keeps connections the stock withers at its idle timeout instead of
// redialling forever.
type stock struct {
	network, addr string
	dial          dialFunc
	now           func() int64
	ctx           context.Context // cancelled by close: ends background dials
	cancel        context.CancelFunc
	wg            sync.WaitGroup

	mu      sync.Mutex
	target  int
	ready   []*predialed // oldest first: the server saw it first, so serves it first
	dialing int
	takes   int // connections handed out or dialled for lack of one
	backoff time.Duration
	closed  bool
	changed chan struct{} // closed and replaced on every change of ready or dialing

	reuse reuse // whether the window's requests may take idle connections
}

func newStock(network, addr string, target int, dial dialFunc, now func() int64) *stock {
	ctx, cancel := context.WithCancel(context.Background())
	return &stock{network: network, addr: addr, target: target, dial: dial, now: now, ctx: ctx, cancel: cancel, changed: make(chan struct{}), reuse: newReuse()}
}

// signal wakes waiters; s.mu held.
func (s *stock) signal() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// fill starts dials until ready plus dialing reach the target; s.mu held.
func (s *stock) fill() {
	for !s.closed && len(s.ready)+s.dialing < s.target {
		s.dialing++
		delay := s.backoff
		s.wg.Go(func() { s.dialOne(delay) })
	}
}

// dialOne dials one connection (after delay) and stocks it.
func (s *stock) dialOne(delay time.Duration) {
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-s.ctx.Done():
		}
	}
	start := s.now()
	c, err := s.dial(s.ctx, s.network, s.addr)
	done := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dialing--
	defer s.signal()
	if err != nil {
		s.grow()
		return // the next take (or miss) dials again
	}
	if s.closed {
		_ = c.Close()
		return
	}
	p := &predialed{Conn: c, startNs: start, doneNs: done, dialedAt: s.takes, watched: make(chan struct{})}
	s.ready = append(s.ready, p)
	s.wg.Go(func() { p.watch(s.died) })
}

// grow lengthens the pause before the next redial; s.mu held.
func (s *stock) grow() {
	s.backoff = min(max(2*s.backoff, 10*time.Millisecond), predialBackoffMax)
}

// died drops a stocked connection the server closed and replaces it if requests took
// connections since it was dialled.
func (s *stock) died(p *predialed) {
	_ = p.Conn.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, q := range s.ready {
		if q == p {
			s.ready = append(s.ready[:i], s.ready[i+1:]...)
			if time.Duration(s.now()-p.doneNs) < time.Second {
				s.grow() // closed young: do not hammer a server that refuses idle connections
			}
			if s.takes > p.dialedAt {
				s.fill()
			}
			s.signal()
			return
		}
	}
}

// take hands out the oldest live stocked connection, or nil when there is none; either way
// the stock refills behind it.
func (s *stock) take() *predialed {
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return nil
		}
		if len(s.ready) == 0 {
			s.takes++
			s.fill()
			s.mu.Unlock()
			return nil
		}
		p := s.ready[0]
		s.ready = s.ready[1:]
		s.mu.Unlock()
		// Stop the watcher; a connection it saw closed is not handed out.
		_ = p.Conn.SetReadDeadline(time.Unix(1, 0))
		<-p.watched
		_ = p.Conn.SetReadDeadline(time.Time{})
		s.mu.Lock()
		if !errors.Is(p.watchErr, os.ErrDeadlineExceeded) {
			s.mu.Unlock()
			_ = p.Conn.Close()
			continue
		}
		s.takes++
		s.backoff = 0
		s.fill()
		s.signal()
		s.mu.Unlock()
		return p
	}
}

// wait blocks until the stock holds its target, its dials are over (some failed), ctx ends
// or hold passes; it returns how many connections are ready.
func (s *stock) wait(ctx context.Context, hold time.Duration) int {
	timer := time.NewTimer(hold)
	defer timer.Stop()
	for {
		s.mu.Lock()
		n, dialing, changed := len(s.ready), s.dialing, s.changed
		s.mu.Unlock()
		if n >= s.target || dialing == 0 {
			return n
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return n
		case <-timer.C:
			return n
		}
	}
}

// close ends the stock: background dials stop and stocked connections are closed.
func (s *stock) close() {
	s.mu.Lock()
	s.closed = true
	ready := s.ready
	s.ready = nil
	s.signal()
	s.mu.Unlock()
	s.cancel()
	s.reuse.stop()
	for _, p := range ready {
		_ = p.Conn.Close()
	}
	s.wg.Wait()
}

// predialer is the client's DialContext: a dial to the address of its current stock takes a
// stocked connection when there is one; anything else dials as usual.
type predialer struct {
	dial dialFunc
	cur  atomic.Pointer[stock]
}

// window is the reuse policy of the current stock's window, nil outside one.
func (d *predialer) window() *reuse {
	if s := d.cur.Load(); s != nil {
		return &s.reuse
	}
	return nil
}

func (d *predialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	if s := d.cur.Load(); s != nil && s.network == network && s.addr == addr {
		if p := s.take(); p != nil {
			return p, nil
		}
	}
	return d.dial(ctx, network, addr)
}
