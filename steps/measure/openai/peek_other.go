//go:build !linux

package openai

import "net"

// peerClosed has no way to look at the socket here: the connection's closeWatch, which sees
// the transport's reader reach the end of stream, decides alone.
func peerClosed(net.Conn) bool { return false }
