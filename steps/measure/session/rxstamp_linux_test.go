//go:build linux

package session

import (
	"context"
	"io"
	"net"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/perfdag/perfdag/steps/measure/sse"
)

// rxConn is a server-side TCP connection that keeps the kernel's receive time
// (SO_TIMESTAMPNS) of the data its latest Read returned, on sse.Now's clock: when a request
// really reached the server, however late the server's goroutine got round to reading it.
type rxConn struct {
	*net.TCPConn
	raw  syscall.RawConn
	oob  []byte
	last atomic.Int64
}

// rxListener accepts connections as rxConns.
type rxListener struct{ net.Listener }

func (l rxListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc := c.(*net.TCPConn)
	raw, err := tc.SyscallConn()
	if err != nil {
		return nil, err
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1)
	}); err != nil || serr != nil {
		_ = c.Close()
		return nil, errorsJoin(err, serr)
	}
	return &rxConn{TCPConn: tc, raw: raw, oob: make([]byte, syscall.CmsgSpace(int(unsafe.Sizeof(syscall.Timespec{}))))}, nil
}

func errorsJoin(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

func (c *rxConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n, oobn int
	var rerr error
	err := c.raw.Read(func(fd uintptr) bool {
		n, oobn, _, _, rerr = syscall.Recvmsg(int(fd), p, c.oob, 0)
		return rerr != syscall.EAGAIN && rerr != syscall.EINTR
	})
	if err == nil {
		err = rerr
	}
	if err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, io.EOF
	}
	t := time.Now()
	at := sse.At(t)
	if msgs, err := syscall.ParseSocketControlMessage(c.oob[:oobn]); err == nil {
		for _, m := range msgs {
			if m.Header.Level == syscall.SOL_SOCKET && m.Header.Type == syscall.SO_TIMESTAMPNS && len(m.Data) >= int(unsafe.Sizeof(syscall.Timespec{})) {
				ts := (*syscall.Timespec)(unsafe.Pointer(&m.Data[0]))
				if age := t.UnixNano() - ts.Nano(); age > 0 {
					at -= age
				}
			}
		}
	}
	c.last.Store(at)
	return n, nil
}

type rxKey struct{}

// withRx puts the connection into a request's context (http.Server.ConnContext).
func withRx(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, rxKey{}, c)
}

// received is the kernel receive time of the latest data read on the request's connection
// (its headers, when called as the handler begins), or now when there is none.
func received(ctx context.Context) int64 {
	if c, ok := ctx.Value(rxKey{}).(*rxConn); ok {
		if ns := c.last.Load(); ns != 0 {
			return ns
		}
	}
	return sse.Now()
}
