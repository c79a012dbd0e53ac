package openai

import (
	"context"
	"sync/atomic"
	"time"
)

// deadline bounds one request with a single timer: first its timeout, counted from its start
// stamp (so a record never ends as timed out before Options.Timeout has passed since it
// started), then, once [DONE] came, the drain grace. Either cancels the request's context; a
// request costs one timer, not a context with a timer and another timer for the grace.
type deadline struct {
	t        *time.Timer
	draining atomic.Bool // the grace is running, not the timeout
	expired  atomic.Bool // the timeout fired (the drain's expiry is no timeout)
}

// startDeadline starts the timeout d of a request whose context cancel ends.
func startDeadline(d time.Duration, cancel context.CancelFunc) *deadline {
	dl := &deadline{}
	dl.t = time.AfterFunc(d, func() {
		if !dl.draining.Load() {
			dl.expired.Store(true)
		}
		cancel()
	})
	return dl
}

// drain replaces the timeout with the drain grace: the response is complete at [DONE]; the
// client keeps listening that long for the server to end the stream. When the timeout has
// fired already, it stays fired.
func (dl *deadline) drain(grace time.Duration) {
	if dl.t.Stop() {
		dl.draining.Store(true)
		dl.t.Reset(grace)
	}
}

// timedOut reports whether the request's timeout fired.
func (dl *deadline) timedOut() bool { return dl.expired.Load() }

// stop ends the timer with the request.
func (dl *deadline) stop() { dl.t.Stop() }
