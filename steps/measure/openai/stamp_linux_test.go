//go:build linux

package openai

import (
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/perfdag/perfdag/steps/measure/sse"
)

// TestKernelStampsIgnoreReaderDelay shows why reads are stamped with the kernel's receive
// time: a reader that only gets to the socket 50 ms after the write returned still stamps
// the data between the start and the end of the write call (on loopback the kernel stamps
// the data as the write enqueues it), not when the read came.
//
// On a loaded machine the kernel may defer the loopback receive to ksoftirqd, which then runs
// when the reader does: that attempt shows nothing either way. The test tries up to five
// times and fails only when no attempt shows the stamp within the write call.
func TestKernelStampsIgnoreReaderDelay(t *testing.T) {
	var last string
	for attempt := 1; attempt <= 5; attempt++ {
		msg := stampAttempt(t)
		if msg == "" {
			return
		}
		last = msg
		t.Logf("attempt %d: %s", attempt, msg)
	}
	t.Errorf("no attempt stamped the data within the write call; the last: %s", last)
}

// stampAttempt writes once while the reader sleeps 50 ms and returns what went wrong with the
// stamp ("" when it lies within the write call).
func stampAttempt(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	wrote := make(chan [2]int64, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		time.Sleep(10 * time.Millisecond)
		before := sse.Now()
		_, _ = c.Write([]byte("data: x\n\n"))
		wrote <- [2]int64{before, sse.Now()}
		time.Sleep(100 * time.Millisecond)
	}()
	raw, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c := StampConn(raw)
	defer c.Close()
	clock := KernelClock(c)
	if clock == nil {
		t.Fatal("a TCP connection was not wrapped for kernel timestamps")
	}
	w := <-wrote
	time.Sleep(50 * time.Millisecond) // a busy client
	buf := make([]byte, 64)
	n, err := c.Read(buf)
	readAt := sse.Now()
	if err != nil || string(buf[:n]) != "data: x\n\n" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	stamp := clock()
	if readAt-w[1] < int64(50*time.Millisecond) {
		t.Fatalf("the read was not late: the test proves nothing")
	}
	if _, err := c.Read(buf); err != io.EOF {
		t.Errorf("after the peer closed: %v, want io.EOF", err)
	}
	if stamp < w[0] || stamp > w[1] {
		return fmt.Sprintf("stamp is %v after the write began, want within the write call (%v long); the read came %v after it",
			time.Duration(stamp-w[0]), time.Duration(w[1]-w[0]), time.Duration(readAt-w[0]))
	}
	return ""
}

func TestWrapConnLeavesOtherConnsAlone(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if StampConn(a) != a || KernelClock(a) != nil {
		t.Error("a non-TCP connection must pass through unchanged")
	}
}
