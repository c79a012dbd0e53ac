package openai

import (
	"context"
	"testing"
	"time"
)

// TestDeadline: the timeout cancels the request and says so; the drain grace cancels it and is
// no timeout; a deadline stopped before it fired is reused with a fresh state and its new
// duration.
func TestDeadline(t *testing.T) {
	wait := func(ctx context.Context) {
		select {
		case <-ctx.Done():
		case <-time.After(time.Minute):
			t.Fatal("never cancelled")
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	dl := startDeadline(time.Millisecond, cancel)
	wait(ctx)
	if !dl.timedOut() {
		t.Error("a fired timeout is not a timeout")
	}
	dl.stop()

	ctx, cancel = context.WithCancel(context.Background())
	dl = startDeadline(time.Hour, cancel)
	dl.drain(time.Millisecond)
	wait(ctx)
	if dl.timedOut() {
		t.Error("the drain grace's end counted as a timeout")
	}
	dl.stop()

	_, cancel = context.WithCancel(context.Background())
	kept := startDeadline(time.Hour, cancel)
	kept.expired.Store(true) // a stale state the reuse must clear
	kept.stop()
	ctx, cancel = context.WithCancel(context.Background())
	dl = startDeadline(time.Millisecond, cancel)
	if dl != kept {
		t.Log("the pool gave another deadline (a collection ran): reuse not exercised")
	}
	if dl.timedOut() {
		t.Fatal("a reused deadline kept its old state")
	}
	wait(ctx)
	if !dl.timedOut() {
		t.Error("a reused deadline's timeout is not a timeout")
	}
}
