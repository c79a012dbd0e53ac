package promscrape

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

func loadSample(t *testing.T, name string) *Scrape {
	t.Helper()
	raw, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse(raw, time.Unix(1_700_000_000, 0))
	if err != nil {
		t.Fatalf("parse %s: %v", name, err)
	}
	return s
}

// TestParseRealVLLMSample reads the verbatim captures of reference/samples/vllm-metrics.txt
// (sections A–D: V1 gauges and counters with _created companions, request_success with
// finish reasons, histograms, untyped spec-decode lines).
func TestParseRealVLLMSample(t *testing.T) {
	s := loadSample(t, "vllm-metrics.txt")
	if got := len(s.Families); got != 23 {
		t.Fatalf("families = %d, want 23 (reference/telemetry.md §6)", got)
	}
	tests := []struct {
		name    string
		aliases []string
		want    float64
		ok      bool
	}{
		{"gauge §A", []string{"vllm:num_requests_running"}, 0, true},
		{"new KV name first", []string{"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"}, 0, true},
		{"old KV name falls through to new", []string{"vllm:gpu_cache_usage_perc", "vllm:kv_cache_usage_perc"}, 0, true},
		{"counter declared without _total", []string{"vllm:prefix_cache_queries"}, 0, true},
		// 1 stop + 131 length + 0 abort, summed over the finished_reason label (§B).
		{"summed over label sets", []string{"vllm:request_success"}, 132, true},
		// §D: untyped line (no # TYPE) read as a value; its _created companion is not added.
		{"untyped counter §D", []string{"vllm:spec_decode_num_draft_tokens"}, 10218118, true},
		{"typed counter §D", []string{"vllm:spec_decode_num_drafts_total"}, 2043630, true},
		// positions 0–3: 1,883,866 + 1,732,372 + 1,489,894 + 1,204,113 = 6,310,245
		{"per position summed", []string{"vllm:spec_decode_num_accepted_tokens_per_pos"}, 6310245, true},
		{"histogram is not a scalar", []string{"vllm:time_to_first_token_seconds"}, 0, false},
		{"absent is not zero", []string{"vllm:gpu_prefix_cache_hits"}, 0, false},
		{"SGLang absent", []string{"sglang:spec_accept_length"}, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := s.Sum(tc.aliases...)
			if ok != tc.ok || got != tc.want {
				t.Fatalf("Sum(%v) = %v, %v; want %v, %v", tc.aliases, got, ok, tc.want, tc.ok)
			}
		})
	}
	if _, name := s.Family("vllm:prefix_cache_hits"); name != "vllm:prefix_cache_hits_total" {
		t.Fatalf("family found under %q, want the _total name", name)
	}
}

func TestFetch(t *testing.T) {
	const body = "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{engine=\"0\"} 7\n"
	var gotAccept, gotAuth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAccept, gotAuth = r.Header.Get("Accept"), r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_, _ = w.Write([]byte(body))
	}))
	defer srv.Close()
	f := &Fetcher{BearerToken: "tok-123"}
	s, err := f.Fetch(context.Background(), srv.URL+"/metrics?secret=x")
	if err != nil {
		t.Fatal(err)
	}
	if gotAccept != AcceptText || gotAuth != "Bearer tok-123" {
		t.Fatalf("headers: Accept %q, Authorization %q", gotAccept, gotAuth)
	}
	if string(s.Raw) != body || s.URL != srv.URL+"/metrics" || s.At.IsZero() {
		t.Fatalf("scrape = url %q at %v raw %q", s.URL, s.At, s.Raw)
	}
	if v, ok := s.Sum("vllm:num_requests_running"); !ok || v != 7 {
		t.Fatalf("running = %v, %v", v, ok)
	}
}

func TestFetchErrors(t *testing.T) {
	slow := make(chan struct{})
	defer close(slow)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/500":
			http.Error(w, "boom", http.StatusInternalServerError)
		case "/proto":
			w.Header().Set("Content-Type", "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited")
			_, _ = w.Write([]byte{0x01, 0x02})
		case "/garbage":
			_, _ = w.Write([]byte("metric{ 1\n"))
		case "/slow":
			select {
			case <-slow:
			case <-r.Context().Done():
			}
		}
	}))
	defer srv.Close()
	withCreds := strings.Replace(srv.URL, "http://", "http://user:hunter2@", 1)
	tests := []struct {
		path string
		want string
	}{
		{"/500", "HTTP 500"},
		{"/proto", "not the Prometheus text format"},
		{"/garbage", "parse metrics text"},
		{"/slow", "deadline exceeded"},
	}
	// Only /slow waits for the timeout; the others answer at once, and a loaded machine must
	// not turn their answers into deadline errors.
	f := &Fetcher{Timeout: 2 * time.Second, BearerToken: "tok-secret"}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			_, err := f.Fetch(context.Background(), withCreds+tc.path)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
			msg := err.Error()
			if strings.Contains(msg, "hunter2") || strings.Contains(msg, "tok-secret") {
				t.Fatalf("error leaks a credential: %s", msg)
			}
			if !strings.Contains(msg, srv.URL+tc.path) {
				t.Fatalf("error does not name the URL: %s", msg)
			}
		})
	}
}

func TestFetchCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := (&Fetcher{}).Fetch(ctx, "http://127.0.0.1:1/metrics")
	if err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Fatalf("err = %v", err)
	}
}
