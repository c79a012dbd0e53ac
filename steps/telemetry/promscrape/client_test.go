package promscrape_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/perfdag/perfdag/steps/telemetry/promscrape"
)

// TestRedirectsStayOnOrigin: a redirect on the same origin is followed with the token; one to
// another port is refused and the other port never sees the token; a loop stops at the bound.
func TestRedirectsStayOnOrigin(t *testing.T) {
	const token = "scrape-token-abc123"
	var elsewhere, elsewhereKey atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		if r.Header.Get("Authorization") != "" {
			elsewhereKey.Add(1)
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write([]byte("up 1\n"))
	}))
	defer other.Close()
	var hops atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/same":
			http.Redirect(w, r, "/metrics", http.StatusFound)
		case r.URL.Path == "/metrics":
			if r.Header.Get("Authorization") != "Bearer "+token {
				http.Error(w, "no token", http.StatusUnauthorized)
				return
			}
			w.Header().Set("Content-Type", "text/plain; version=0.0.4")
			_, _ = w.Write([]byte("up 1\n"))
		case r.URL.Path == "/away":
			http.Redirect(w, r, other.URL+"/metrics", http.StatusTemporaryRedirect)
		case strings.HasPrefix(r.URL.Path, "/loop"):
			n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/loop"))
			hops.Add(1)
			http.Redirect(w, r, "/loop"+strconv.Itoa(n+1), http.StatusFound)
		}
	}))
	defer srv.Close()
	f := &promscrape.Fetcher{BearerToken: token}
	ctx := context.Background()
	if _, err := f.Fetch(ctx, srv.URL+"/same"); err != nil {
		t.Fatalf("same-origin redirect: %v", err)
	}
	_, err := f.Fetch(ctx, srv.URL+"/away")
	if !errors.Is(err, promscrape.ErrCrossOrigin) {
		t.Fatalf("cross-origin redirect: err %v, want ErrCrossOrigin", err)
	}
	if strings.Contains(err.Error(), token) {
		t.Fatalf("error leaks the token: %v", err)
	}
	if elsewhere.Load() != 0 || elsewhereKey.Load() != 0 {
		t.Fatalf("the other port got %d requests (%d with the token)", elsewhere.Load(), elsewhereKey.Load())
	}
	// at the bound: MaxRedirects redirects are followed (MaxRedirects+1 requests); the next is refused.
	if _, err := f.Fetch(ctx, srv.URL+"/loop0"); err == nil || !strings.Contains(err.Error(), "redirects") {
		t.Fatalf("redirect loop: err %v, want the redirect bound", err)
	}
	if got := hops.Load(); got != promscrape.MaxRedirects+1 {
		t.Fatalf("followed %d redirects, want MaxRedirects+1 = %d", got, promscrape.MaxRedirects+1)
	}
}
