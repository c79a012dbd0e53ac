package webui

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// An offset a page never sent is refused (400), whether as ?from= or as Last-Event-ID: a
// negative one made the server allocate the difference (a TiB) or panic, not a stream.
func TestLiveRefusesBadOffsets(t *testing.T) {
	root := t.TempDir()
	finished(t, root, "tiny-1")
	ts := serve(t, Options{Roots: []string{root}})
	for _, tc := range []struct{ query, lastID string }{
		{"from=-9223372036854775808", ""},
		{"from=-1", ""},
		{"from=abc", ""},
		{"from=1e3", ""},
		{"from=%2B5", ""},
		{"from=99999999999999999999", ""},
		{"from=0", "-1"},
		{"from=0", "-9223372036854775808"},
		{"from=0", "x"},
		{"from=0&from=-1", ""},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard, not a timing
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/c/tiny-1/live?"+tc.query, nil)
		if tc.lastID != "" {
			req.Header.Set("Last-Event-ID", tc.lastID)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Errorf("%s Last-Event-ID %q: %v", tc.query, tc.lastID, err)
			cancel()
			continue
		}
		var b strings.Builder
		if resp.StatusCode == http.StatusBadRequest {
			buf := make([]byte, 4096)
			n, _ := resp.Body.Read(buf)
			b.Write(buf[:n])
		}
		resp.Body.Close()
		cancel()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(b.String(), "offset") {
			t.Errorf("%s Last-Event-ID %q: %d %q, want 400 naming the offset", tc.query, tc.lastID, resp.StatusCode, b.String())
		}
	}
}
