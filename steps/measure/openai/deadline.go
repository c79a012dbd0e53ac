package openai

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// deadline bounds one request with a single timer: first its timeout, counted from its start
// stamp (so a record never ends as timed out before Options.Timeout has passed since it
// started), then, once [DONE] came, the drain grace. Either cancels the request's context; a
// request costs one timer, not a context with a timer and another timer for the grace, and a
// timer stopped before it fired serves a later request (deadlines).
type deadline struct {
	t        *time.Timer
	cancel   context.CancelFunc
	draining atomic.Bool // the grace is running, not the timeout
	expired  atomic.Bool // the timeout fired (the drain's expiry is no timeout)
}

// deadlines are deadlines whose timer was stopped before it fired: its function can no longer
// run, so the timer is reset for another request.
var deadlines sync.Pool

// startDeadline starts the timeout d of a request whose context cancel ends.
func startDeadline(d time.Duration, cancel context.CancelFunc) *deadline {
	if dl, _ := deadlines.Get().(*deadline); dl != nil {
		dl.cancel = cancel
		dl.draining.Store(false)
		dl.expired.Store(false)
		dl.t.Reset(d)
		return dl
	}
	dl := &deadline{cancel: cancel}
	dl.t = time.AfterFunc(d, dl.fire)
	return dl
}

func (dl *deadline) fire() {
	if !dl.draining.Load() {
		dl.expired.Store(true)
	}
	dl.cancel()
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

// stop ends the timer with the request; a deadline whose timer never fired goes back for
// reuse (one that fired is left to the collector: its function may still be running).
func (dl *deadline) stop() {
	if dl.t.Stop() {
		dl.cancel = nil
		deadlines.Put(dl)
	}
}
