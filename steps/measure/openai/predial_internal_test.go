package openai

import (
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfdag/perfdag/steps/measure/sse"
)

// idleState reports, under the stock's lock, whether it holds no connection and dials none:
// nothing but a take can make it dial again.
func (s *stock) idleState() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.ready) == 0 && s.dialing == 0
}

// Against a server that closes every idle connection, the stock drops each one it stocked
// and redials only for requests that took (or missed) a connection since: it never keeps
// redialling on its own. One take brings one refill round, no more.
func TestStockRedialsOnlyForTakes(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			_ = c.Close()
		}
	}()
	const target = 3
	var d net.Dialer
	s := newStock("tcp", ln.Addr().String(), target, d.DialContext, sse.Now)
	defer s.close()
	settle := func(what string, want int64) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !(s.idleState() && accepted.Load() == want); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: accepted %d connections (want %d), idle %v", what, accepted.Load(), want, s.idleState())
			}
		}
	}
	s.mu.Lock()
	s.fill()
	s.mu.Unlock()
	settle("the first fill, all closed by the server", target)
	if p := s.take(); p != nil {
		t.Fatalf("take handed out a connection though the server had closed every stocked one")
	}
	settle("one refill round after a miss", 2*target)
	s.mu.Lock()
	backoff := s.backoff
	s.mu.Unlock()
	if backoff <= 0 {
		t.Errorf("backoff %v after connections that died young, want a pause before redialling", backoff)
	}
}
