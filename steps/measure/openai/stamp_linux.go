//go:build linux

package openai

import (
	"errors"
	"io"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/perfdag/perfdag/steps/measure/sse"
)

// stampConn is a TCP connection that asks the kernel for the receive time of the data each
// Read returns (SO_TIMESTAMPNS, delivered with recvmsg). A stream's stamps then say when the
// bytes reached this machine, not when a busy client got round to reading them: with
// hundreds of streams on a few cores, the client's own scheduling never shows up as server
// latency.
type stampConn struct {
	net.Conn // the *net.TCPConn, for everything but Read
	raw      syscall.RawConn
	oob      []byte
	last     atomic.Int64 // stamp of the latest Read that returned data, on the client clock
	watch    closeWatch   // whether (and when) the server closed it, off the data path
	// recv is the recvmsg Read hands raw.Read, made once: a closure per Read cost three
	// allocations. p, n, oobn and rerr are its argument and results (one Read at a time: the
	// transport's reader, or the stock's watcher before it).
	recv    func(fd uintptr) bool
	p       []byte
	n, oobn int
	rerr    error
	clockFn func() int64 // clock as a func value, made once (KernelClock)
	lag     *ReadLag     // counts each read's lag behind its kernel stamp (nil: none)
}

// StampConn enables kernel receive timestamps on a TCP connection; any other connection, or
// a kernel that refuses the option, is returned unchanged. Exported so test servers (session's
// exact-timing server) stamp a request's arrival with this code rather than a copy of it.
func StampConn(c net.Conn) net.Conn { return stampConnLag(c, nil) }

// stampConnLag is StampConn counting each read's lag in lag (nil: none).
func stampConnLag(c net.Conn, lag *ReadLag) net.Conn {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return c
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1)
	}); err != nil || serr != nil {
		return c
	}
	sc := &stampConn{Conn: tc, raw: raw, oob: make([]byte, syscall.CmsgSpace(int(unsafe.Sizeof(syscall.Timespec{})))), lag: lag}
	sc.recv = func(fd uintptr) bool {
		sc.n, sc.oobn, _, _, sc.rerr = syscall.Recvmsg(int(fd), sc.p, sc.oob, 0)
		return sc.rerr != syscall.EAGAIN && sc.rerr != syscall.EINTR
	}
	sc.clockFn = sc.clock
	return sc
}

// Read receives with recvmsg and records the kernel's receive time of the returned data
// (of its last segment), converted to the client clock. Without a timestamp the read time
// is used, so a stamp is never stale.
func (c *stampConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	c.p = p
	err := c.raw.Read(c.recv)
	n, oobn, rerr := c.n, c.oobn, c.rerr
	c.p, c.rerr = nil, nil
	if err == nil {
		err = rerr
	}
	if err != nil {
		if errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
			err = os.NewSyscallError("recvmsg", err)
		}
		c.watch.sawClose(err)
		return 0, &net.OpError{Op: "read", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
	}
	if n == 0 {
		c.watch.sawClose(io.EOF)
		return 0, io.EOF
	}
	c.last.Store(c.stamp(c.oob[:oobn]))
	return n, nil
}

// closes is the connection's closeWatch, fed by Read's end-of-stream and error paths only.
func (c *stampConn) closes() *closeWatch { return &c.watch }

// NetConn returns the *net.TCPConn (for a look at its socket, peerClosed).
func (c *stampConn) NetConn() net.Conn { return c.Conn }

// stamp converts the SCM_TIMESTAMPNS in oob (wall clock) to the client clock (sse.Now),
// never later than now. One clock reading serves both sides of the conversion, so a
// preemption between two reads cannot skew it.
func (c *stampConn) stamp(oob []byte) int64 {
	t := time.Now()
	now := sse.At(t)
	// One control message is asked for: walk the headers in place rather than allocating.
	for len(oob) >= syscall.CmsgLen(0) {
		h := (*syscall.Cmsghdr)(unsafe.Pointer(&oob[0]))
		l := int(h.Len) // uint64 or uint32 by architecture
		if l < syscall.CmsgLen(0) || l > len(oob) {
			return now
		}
		data := oob[syscall.CmsgLen(0):l]
		if h.Level == syscall.SOL_SOCKET && h.Type == syscall.SO_TIMESTAMPNS && len(data) >= int(unsafe.Sizeof(syscall.Timespec{})) {
			ts := (*syscall.Timespec)(unsafe.Pointer(&data[0]))
			age := t.UnixNano() - ts.Nano() // how long ago the kernel received it
			if age < 0 {
				return now
			}
			c.lag.add(age)
			return now - age
		}
		next := syscall.CmsgSpace(l - syscall.CmsgLen(0))
		if next > len(oob) {
			break
		}
		oob = oob[next:]
	}
	return now
}

// clock is the stamp source for a response read from this connection.
func (c *stampConn) clock() int64 {
	if ns := c.last.Load(); ns != 0 {
		return ns
	}
	return sse.Now()
}

// KernelClock returns the receive-time clock of a connection StampConn wrapped (this
// client's dialer does), or nil when the connection has none; exported with StampConn.
func KernelClock(c net.Conn) func() int64 {
	for c != nil {
		if sc, ok := c.(*stampConn); ok {
			return sc.clockFn
		}
		u, ok := c.(interface{ NetConn() net.Conn }) // TLS, a pre-dialled connection
		if !ok {
			return nil
		}
		c = u.NetConn()
	}
	return nil
}
