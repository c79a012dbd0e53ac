package openai

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/perfdag/perfdag/steps/measure/sse"
)

// A connection's close tells its window the server closes after responses only when the
// server closed it (end of stream or reset, not a deadline or a close of our own) within
// closeWindow of a response that left it idle, with no request on it since.
func TestCloseWatchJudgesOnlyACloseRightAfterAResponse(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(w *closeWatch, r *reuse)
		want bool
	}{
		{"EOF right after the response", func(w *closeWatch, r *reuse) { w.ended(r); w.sawClose(io.EOF) }, true},
		{"EOF read before the response's end was noted", func(w *closeWatch, r *reuse) { w.sawClose(io.EOF); w.ended(r) }, true},
		{"reset right after the response", func(w *closeWatch, r *reuse) {
			w.ended(r)
			w.sawClose(&net.OpError{Op: "read", Err: os.NewSyscallError("recvmsg", syscall.ECONNRESET)})
		}, true},
		{"a deadline (the stock's watcher handing it out)", func(w *closeWatch, r *reuse) { w.ended(r); w.sawClose(os.ErrDeadlineExceeded) }, false},
		{"closed by this client", func(w *closeWatch, r *reuse) { w.ended(r); w.sawClose(net.ErrClosed) }, false},
		{"a request took it before the close", func(w *closeWatch, r *reuse) { w.ended(r); w.taken(); w.sawClose(io.EOF) }, false},
		{"an idle timeout, long after the response", func(w *closeWatch, r *reuse) {
			w.ended(r)
			w.mu.Lock()
			w.endNs = sse.Now() - int64(2*closeWindow)
			w.mu.Unlock()
			w.sawClose(io.EOF)
		}, false},
		{"closed before it carried any response", func(w *closeWatch, _ *reuse) { w.sawClose(io.EOF) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newReuse()
			var w closeWatch
			tc.run(&w, &r)
			if got := r.mode.Load() == reuseClosing; got != tc.want {
				t.Errorf("window closing = %v, want %v", got, tc.want)
			}
		})
	}
}

// While the window settles, a request waits for the verdict: closing when the watch saw the
// settling connection closed, kept when it outlived settleWait; the end of the window
// releases a waiting request without a verdict of closing.
func TestSettleDecidesBeforeTheNextRequest(t *testing.T) {
	for _, tc := range []struct {
		closed, stop bool
		want         bool
	}{
		{closed: false, want: false},
		{closed: true, want: true},
		{stop: true, want: false},
	} {
		t.Run(fmt.Sprintf("closed=%v stop=%v", tc.closed, tc.stop), func(t *testing.T) {
			r := newReuse()
			a, b := net.Pipe() // no socket to peek: the watch decides
			defer a.Close()
			defer b.Close()
			var w closeWatch
			r.settle(a, &w)
			if tc.closed {
				w.sawClose(io.EOF) // before settleWait, not within closeWindow of any response
			}
			if tc.stop {
				r.stop()
			}
			if got := r.fresh(context.Background()); got != tc.want {
				t.Errorf("fresh = %v, want %v", got, tc.want)
			}
			if m := r.mode.Load(); m != reuseKept && m != reuseClosing {
				t.Errorf("mode %d after the wait: want a verdict", m)
			}
		})
	}
}
