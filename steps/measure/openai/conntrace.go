package openai

import (
	"crypto/tls"
	"net"
	"net/http/httptrace"

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

// trace returns the hooks that fill t on clock now; gotConn also receives each connection.
// The transport calls them from the request's goroutine or its dialer, never concurrently
// for one request.
func (t *connTrace) trace(now func() int64, gotConn func(net.Conn)) *httptrace.ClientTrace {
	return &httptrace.ClientTrace{
		ConnectStart: func(string, string) {
			if t.connectStart == 0 {
				t.connectStart = now()
			}
		},
		ConnectDone:       func(string, string, error) { t.connectDone = now() },
		TLSHandshakeStart: func() { t.tlsStart = now() },
		TLSHandshakeDone:  func(tls.ConnectionState, error) { t.tlsDone = now() },
		WroteRequest: func(i httptrace.WroteRequestInfo) {
			if i.Err == nil {
				t.wrote = now()
			}
		},
		GotConn: func(i httptrace.GotConnInfo) {
			t.got++
			t.reused = i.Reused
			gotConn(i.Conn)
		},
	}
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
