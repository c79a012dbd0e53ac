//go:build linux

package session

import (
	"context"
	"fmt"
	"net"

	"github.com/perfdag/perfdag/steps/measure/openai"
	"github.com/perfdag/perfdag/steps/measure/sse"
)

// rxListener accepts connections stamped with the kernel's receive time (SO_TIMESTAMPNS) of
// the data their latest Read returned, on sse.Now's clock (openai.StampConn, the client's
// own stamping): when a request really reached the server, however late the server's
// goroutine got round to reading it.
type rxListener struct{ net.Listener }

func (l rxListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	sc := openai.StampConn(c)
	if openai.KernelClock(sc) == nil {
		_ = c.Close()
		return nil, fmt.Errorf("accepted %s: no kernel receive timestamps on it", c.RemoteAddr())
	}
	return sc, nil
}

type rxKey struct{}

// withRx puts the connection into a request's context (http.Server.ConnContext).
func withRx(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, rxKey{}, c)
}

// received is the kernel receive time of the latest data read on the request's connection
// (its headers, when called as the handler begins), or now when there is none.
func received(ctx context.Context) int64 {
	if c, ok := ctx.Value(rxKey{}).(net.Conn); ok {
		if clock := openai.KernelClock(c); clock != nil {
			return clock()
		}
	}
	return sse.Now()
}
