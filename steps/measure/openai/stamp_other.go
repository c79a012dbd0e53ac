//go:build !linux

package openai

import "net"

// StampConn leaves connections alone where kernel receive timestamps are not wired up:
// stamps then come from the client clock when a read returns.
func StampConn(c net.Conn) net.Conn { return c }

// stampConnLag is StampConn: no stamp, no lag to count.
func stampConnLag(c net.Conn, _ *ReadLag) net.Conn { return c }

// KernelClock has no kernel clock to offer on this platform.
func KernelClock(net.Conn) func() int64 { return nil }
