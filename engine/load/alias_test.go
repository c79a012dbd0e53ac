package load

import (
	"testing"
	"time"
)

func TestAliasCycle(t *testing.T) {
	for _, src := range []string{"&a [*a]", "version: 1\ncampaign: &x [*x]\n", "cells: &c [{id: a, workload: *c}]\n"} {
		done := make(chan struct{})
		go func() {
			Bytes("f.yaml", ".", []byte(src), testRegistry(t), Options{})
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(time.Minute): // a hang bound, not a speed limit: the machine may be loaded
			t.Fatalf("hang on %q", src)
		}
	}
}
