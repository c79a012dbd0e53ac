//go:build !linux

package openai

import "net"

// wrapConn leaves connections alone where kernel receive timestamps are not wired up:
// stamps then come from the client clock when a read returns.
func wrapConn(c net.Conn) net.Conn { return c }

// kernelClock has no kernel clock to offer on this platform.
func kernelClock(net.Conn) func() int64 { return nil }
