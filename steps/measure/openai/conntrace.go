package openai

import (
	"crypto/tls"
	"net"
	"net/http/httptrace"
	"sync"

	"github.com/perfdag/perfdag/schema"
)

// connTrace records, through httptrace, how a request got its connection: dial and TLS
// time when it opened one, whether it reused one, and how many connections it was given
// (more than one means the transport retried it after a stale idle connection; resent, that
// the client did, see exchange.staleWrite).
type connTrace struct {
	connectStart, connectDone int64
	tlsStart, tlsDone         int64
	reused                    bool
	got                       int
	wrote                     int64 // the request was completely written to its connection
	resent                    bool  // the client sent it again after a stale connection failed the write
}

// liveTrace is a connTrace being filled by a request's hooks. The transport calls them from
// the request's goroutine and from its dialers, which may be more than one (a retry after a
// stale connection dials again) and may still run after the request got another
// connection: every hook and the snapshot hold mu.
type liveTrace struct {
	mu sync.Mutex
	t  connTrace
}

// hooks returns the hooks that fill l on clock now; gotConn also receives each connection.
func (l *liveTrace) hooks(now func() int64, gotConn func(net.Conn)) *httptrace.ClientTrace {
	set := func(f func(t *connTrace)) {
		l.mu.Lock()
		defer l.mu.Unlock()
		f(&l.t)
	}
	return &httptrace.ClientTrace{
		ConnectStart: func(string, string) {
			set(func(t *connTrace) {
				if t.connectStart == 0 {
					t.connectStart = now()
				}
			})
		},
		ConnectDone:       func(string, string, error) { set(func(t *connTrace) { t.connectDone = now() }) },
		TLSHandshakeStart: func() { set(func(t *connTrace) { t.tlsStart = now() }) },
		TLSHandshakeDone:  func(tls.ConnectionState, error) { set(func(t *connTrace) { t.tlsDone = now() }) },
		WroteRequest: func(i httptrace.WroteRequestInfo) {
			if i.Err == nil {
				set(func(t *connTrace) { t.wrote = now() })
			}
		},
		GotConn: func(i httptrace.GotConnInfo) {
			set(func(t *connTrace) {
				t.got++
				t.reused = i.Reused
			})
			gotConn(i.Conn)
		},
	}
}

// snapshot is what the hooks recorded so far.
func (l *liveTrace) snapshot() connTrace {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.t
}

// fill copies the connection facts into a record: ConnectNs is dial plus TLS of the
// connection the request finally used (0 when it reused one).
func (t *connTrace) fill(rec *schema.RequestRecord) {
	var connect, tlsNs int64
	if !t.reused {
		if t.connectStart > 0 && t.connectDone >= t.connectStart {
			connect = t.connectDone - t.connectStart
		}
		if t.tlsStart > 0 && t.tlsDone >= t.tlsStart {
			tlsNs = t.tlsDone - t.tlsStart
			connect += tlsNs
		}
	}
	rec.ConnectNs, rec.TLSNs, rec.ConnReused, rec.Retried = connect, tlsNs, t.reused, t.got > 1 || t.resent
	rec.SentNs = t.wrote
}
