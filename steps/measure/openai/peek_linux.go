//go:build linux

package openai

import (
	"errors"
	"net"
	"syscall"
)

// peerClosed reports whether the server has closed c: its end of stream (or a reset) waits on
// the socket. It peeks without blocking and consumes nothing, so it may run while the
// transport's reader waits on the same connection; the kernel's view does not depend on when
// that reader was last scheduled.
func peerClosed(c net.Conn) bool {
	for c != nil {
		if sc, ok := c.(syscall.Conn); ok {
			raw, err := sc.SyscallConn()
			if err != nil {
				return false
			}
			closed := false
			if err := raw.Control(func(fd uintptr) {
				var b [1]byte
				n, _, rerr := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
				closed = (n == 0 && rerr == nil) || errors.Is(rerr, syscall.ECONNRESET)
			}); err != nil {
				return false
			}
			return closed
		}
		u, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			return false
		}
		c = u.NetConn()
	}
	return false
}
