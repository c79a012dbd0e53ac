package promscrape

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// TestSamplerKeepsPeaks serves a KV gauge that rises then falls and fails every third request:
// the sampler must keep going through failures and Window must see the peak that neither the
// before nor the after scrape shows.
func TestSamplerKeepsPeaks(t *testing.T) {
	kv := []float64{0.1, 0.5, 0.9, 0.7, 0.3}
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := n.Add(1) - 1
		if i%3 == 2 {
			http.Error(w, "flaky", http.StatusServiceUnavailable)
			return
		}
		v := kv[min(int(i), len(kv)-1)]
		fmt.Fprintf(w, "vllm:kv_cache_usage_perc{engine=\"0\"} %g\nvllm:num_requests_running{engine=\"0\"} %d\n", v, i)
	}))
	defer srv.Close()

	f := &Fetcher{}
	s := StartSampler(context.Background(), f, srv.URL, 5*time.Millisecond)
	// Wait for request 7 (so requests 0..4 have all been answered: the sampler polls one request
	// at a time); the deadline only bounds a hang.
	for deadline := time.Now().Add(time.Minute); n.Load() < 8; time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the sampler made %d requests in a minute, want 8", n.Load())
		}
	}
	readings, st := s.Stop()
	if st.Failures == 0 || st.LastErr == nil || st.Scrapes != len(readings) || len(readings) < 5 {
		t.Fatalf("stats %+v with %d readings", st, len(readings))
	}
	for i := 1; i < len(readings); i++ {
		if readings[i].At.Before(readings[i-1].At) {
			t.Fatal("readings out of time order")
		}
	}
	// Requests 0,1,3,4 succeed with kv 0.1, 0.5, 0.7, 0.3; request 2 (kv 0.9) failed, so the
	// peak the sampler can know is 0.7, and running peaks at the last successful index.
	w := Window(nil, nil, readings...)
	if !near(w.KVCacheUsagePeak, 0.7) {
		t.Fatalf("kv peak = %v, want 0.7", deref(w.KVCacheUsagePeak))
	}
	if w.RunningRequestsPeak == nil || *w.RunningRequestsPeak < 4 {
		t.Fatalf("running peak = %v", deref(w.RunningRequestsPeak))
	}
	if again, st2 := s.Stop(); len(again) != len(readings) || st2 != st {
		t.Fatal("a second Stop must return the same result")
	}
}

func TestPollerStopsWithContext(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "up 1")
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var got atomic.Int64
	p := StartPoller(ctx, &Fetcher{}, srv.URL, time.Millisecond, func(*Scrape) { got.Add(1) })
	for got.Load() < 2 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	select {
	case <-p.done:
	case <-time.After(time.Minute): // a hang bound; the machine may be loaded
		t.Fatal("poller did not stop when its context ended")
	}
	if st := p.Stop(); st.Failures != 0 || st.Scrapes < 2 {
		t.Fatalf("stats %+v", st)
	}
}
