package loadgen

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/sse"
)

// An adaptive point looks at completed prefixes only, stops issuing once a look says enough
// (keeping what was in flight, index-contiguous), never exceeds its concurrency, and sends
// its whole cap when no look ever says enough.
func TestAdaptiveStopsAtALook(t *testing.T) {
	for _, tc := range []struct {
		name       string
		rate       float64
		enoughAt   int // the first look whose prefix is at least this says enough; 0: never
		wantLooks  []int
		wantAtMost int
	}{
		{name: "closed loop stops", enoughAt: 50, wantLooks: []int{10, 20, 30, 40, 50}, wantAtMost: 50 + 4*4},
		{name: "closed loop runs to the cap", enoughAt: 0, wantLooks: []int{10, 20, 30, 40, 50, 60, 70, 80, 90}, wantAtMost: 100},
		{name: "open loop stops", rate: 5000, enoughAt: 30, wantLooks: []int{10, 20, 30}, wantAtMost: 30 + 4*4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &gauge{}
			var mu sync.Mutex
			var looks []int
			a := &Adaptive{
				Next: func(prev int) int { return prev + 10 },
				Enough: func(prefix []schema.RequestRecord) bool {
					mu.Lock()
					defer mu.Unlock()
					looks = append(looks, len(prefix))
					for i, r := range prefix {
						if r.Index != i || r.FirstTokenNs == 0 {
							t.Errorf("look at %d: record %d is not a finished request %d: %+v", len(prefix), i, i, r)
						}
					}
					return tc.enoughAt > 0 && len(prefix) >= tc.enoughAt
				},
			}
			recs, err := Run(context.Background(), Config{Requests: 100, Concurrency: 4, Rate: tc.rate, Adaptive: a}, sleeper(g, 0), nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) < max(tc.enoughAt, 1) || len(recs) > tc.wantAtMost {
				t.Errorf("sent %d requests, want between %d and %d", len(recs), tc.enoughAt, tc.wantAtMost)
			}
			for i, r := range recs {
				if r.Index != i || r.FirstTokenNs == 0 {
					t.Errorf("record %d: %+v, want request %d answered", i, r, i)
				}
			}
			if !equalInts(looks, tc.wantLooks) {
				t.Errorf("looks at %v, want %v", looks, tc.wantLooks)
			}
			if p := g.peak.Load(); p > 4 {
				t.Errorf("peak in flight %d, want at most 4", p)
			}
		})
	}
}

// An open loop's look holds a send at most Ahead past it while the look's earlier requests
// are unanswered, and marks what it held: requests 0..9 are answered only after 200 ms, so at
// 100,000/s request 12 (Ahead 2 past the look at 10) and every later one wait for them and are
// look-held; none before it is, and none is cap-delayed. The point's records then say the
// server held those sends, not the client.
func TestAdaptiveOpenLoopMarksLookHeldSends(t *testing.T) {
	release := make(chan struct{})
	time.AfterFunc(200*time.Millisecond, func() { close(release) })
	send := func(ctx context.Context, i int) schema.RequestRecord {
		start := sse.Now()
		if i < 10 {
			<-release
		}
		now := sse.Now()
		return schema.RequestRecord{StartNs: start, FirstTokenNs: now, LastContentNs: now, EndNs: now}
	}
	a := &Adaptive{Next: func(prev int) int { return prev + 10 }, Enough: func([]schema.RequestRecord) bool { return false }, Ahead: 2}
	recs, err := Run(context.Background(), Config{Requests: 30, Rate: 100000, Adaptive: a}, send, nil)
	if err != nil || len(recs) != 30 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	for i, r := range recs {
		if r.CapDelayed || r.LookHeld != (i >= 12) {
			t.Errorf("record %d: look-held %v cap-delayed %v, want look-held %v (Ahead 2 past the look at 10)", i, r.LookHeld, r.CapDelayed, i >= 12)
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestAdaptiveNeedsBothFuncs(t *testing.T) {
	if err := (Config{Requests: 10, Concurrency: 1, Adaptive: &Adaptive{Next: func(int) int { return 5 }}}).Validate(); err == nil {
		t.Error("an adaptive config without Enough validated")
	}
}
