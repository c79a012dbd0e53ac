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
// the client did, see exchange.stale).
type connTrace struct {
	connectStart, connectDone int64
	tlsStart, tlsDone         int64
	reused                    bool
	predialed                 *predialed // the connection came from the pre-dialled stock (first use)
	got                       int
	wrote                     int64 // the request was completely written to its connection
	resent                    bool  // the client sent it again after a stale connection failed the write
	// closedYoung: the transport gave up on a connection that had been idle less than
	// closeWindow and retried: the server closed it right after its previous response.
	closedYoung bool
	prevYoung   bool // the latest connection given was reused after less than closeWindow idle
}

// liveTrace is a connTrace being filled by a request's hooks. The transport calls them from
// the request's goroutine and from its dialers, which may be more than one (a retry after a
// stale connection dials again) and may still run after the request got another
// connection: every hook and the snapshot hold mu. The hooks are its methods and its
// ClientTrace is part of it: a request allocates one of these, not a closure per hook.
type liveTrace struct {
	mu    sync.Mutex
	t     connTrace
	now   func() int64
	conn  net.Conn // the latest connection the request was given
	trace httptrace.ClientTrace
}

// newLiveTrace returns a trace whose hooks stamp on clock now; GotConn also tells the
// connection's closeWatch that a request took it.
func newLiveTrace(now func() int64) *liveTrace {
	l := &liveTrace{now: now}
	l.trace = httptrace.ClientTrace{ConnectStart: l.connectStart, ConnectDone: l.connectDone,
		TLSHandshakeStart: l.tlsStart, TLSHandshakeDone: l.tlsDone, WroteRequest: l.wroteRequest, GotConn: l.gotConn}
	return l
}

func (l *liveTrace) connectStart(string, string) {
	l.mu.Lock()
	if l.t.connectStart == 0 {
		l.t.connectStart = l.now()
	}
	l.mu.Unlock()
}

func (l *liveTrace) connectDone(string, string, error) {
	l.mu.Lock()
	l.t.connectDone = l.now()
	l.mu.Unlock()
}

func (l *liveTrace) tlsStart() {
	l.mu.Lock()
	l.t.tlsStart = l.now()
	l.mu.Unlock()
}

func (l *liveTrace) tlsDone(tls.ConnectionState, error) {
	l.mu.Lock()
	l.t.tlsDone = l.now()
	l.mu.Unlock()
}

func (l *liveTrace) wroteRequest(i httptrace.WroteRequestInfo) {
	if i.Err != nil {
		return
	}
	l.mu.Lock()
	l.t.wrote = l.now()
	l.mu.Unlock()
}

func (l *liveTrace) gotConn(i httptrace.GotConnInfo) {
	l.got(i)
	if w := watchOf(i.Conn); w != nil {
		w.taken()
	}
}

// got records the connection a request was given.
func (l *liveTrace) got(i httptrace.GotConnInfo) {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := &l.t
	t.got++
	t.closedYoung = t.closedYoung || t.prevYoung
	t.prevYoung = i.Reused && i.WasIdle && i.IdleTime < closeWindow
	t.reused = i.Reused
	// Go's transport calls a connection that waited in its idle pool reused even
	// when no request had used it; a pre-dialled one knows its first request.
	t.predialed = nil
	if p := predialedOf(i.Conn); p != nil && p.claim() {
		t.predialed, t.reused = p, false
	}
	l.conn = i.Conn
}

// connection is the latest connection the request was given (nil before any).
func (l *liveTrace) connection() net.Conn {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.conn
}

// snapshot is what the hooks recorded so far.
func (l *liveTrace) snapshot() connTrace {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.t
}

// fill copies the connection facts into a record: ConnectNs is dial plus TLS of the
// connection the request finally used (0 when it reused one), ConnectDoneNs when that
// set-up ended. A pre-dialled connection's set-up is its own dial, done before the request.
func (t *connTrace) fill(rec *schema.RequestRecord) {
	var connect, tlsNs, done int64
	switch {
	case t.reused:
	case t.predialed != nil:
		connect, done = t.predialed.doneNs-t.predialed.startNs, t.predialed.doneNs
		rec.ConnPredialed = true
	default:
		if t.connectStart > 0 && t.connectDone >= t.connectStart {
			connect, done = t.connectDone-t.connectStart, t.connectDone
		}
		if t.tlsStart > 0 && t.tlsDone >= t.tlsStart {
			tlsNs = t.tlsDone - t.tlsStart
			connect += tlsNs
			done = max(done, t.tlsDone)
		}
	}
	rec.ConnectNs, rec.TLSNs, rec.ConnectDoneNs, rec.ConnReused, rec.Retried = connect, tlsNs, done, t.reused, t.got > 1 || t.resent
	rec.SentNs = t.wrote
}

// unanswered reports whether the connection the request finally got was pre-dialled and never
// delivered a byte: the server closed it without beginning an answer.
func (t *connTrace) unanswered() bool { return t.predialed != nil && !t.predialed.answered() }
