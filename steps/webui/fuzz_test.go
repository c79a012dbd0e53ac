package webui

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/perfdag/perfdag/schema/campaigndir"
)

// maxAllocPerRequest bounds what one request may make the server allocate on the fixture
// campaign (its largest page, the HTML report, takes a few MiB): an offset or a number taken
// from the request must never size an allocation.
const maxAllocPerRequest = 64 << 20

// routes are every serve route, {a} {b} {c} standing for fuzzed path segments (put in raw, so
// "..", "%2e" and "/" reach the router as a browser or curl could send them).
var routes = []string{"/{a}", "/c/{a}/", "/c/{a}/live", "/c/{a}/nodes", "/c/{a}/point/{b}/{c}", "/c/{a}/file/{b}",
	"/c/{a}/baseline", "/c/{a}/report", "/compare", "/static/{a}", "/h/{a}/", "/c/{a}/verdict"}

// flushCancels is a recorder that ends the request's context at its first flush: a live
// stream sends its preamble, reads the log once from the offset asked for, then returns.
type flushCancels struct {
	*httptest.ResponseRecorder
	cancel func()
}

func (f flushCancels) Flush() { f.ResponseRecorder.Flush(); f.cancel() }

// FuzzServe drives the real handler (with and without a token) over every route with fuzzed
// path segments, query, Host, Authorization, Cookie and Last-Event-ID: no request may panic,
// hang, or make the server allocate more than maxAllocPerRequest. Its seeds (which go test
// runs) include the offsets that allocated a TiB or panicked.
func FuzzServe(f *testing.F) {
	root := f.TempDir()
	dir := finished(f, root, "tiny-1")
	base := 7.25
	judged(f, dir, "tiny", "GREEN", time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC), &base)
	scheduled(f, root, "tiny", dir, filepath.Join(root, ".."), "/etc")
	open, err := New(Options{Roots: []string{root}, Service: service(f), Registry: f.TempDir()})
	if err != nil {
		f.Fatal(err)
	}
	const token = "fuzz-token-0123456789"
	guarded, err := New(Options{Roots: []string{root}, Service: service(f), Token: token})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { open.Close(); guarded.Close() })
	for _, s := range []struct {
		route              uint8
		a, b, c, query, id string
		auth, host, cookie string
	}{
		{route: 0},
		{route: 1, a: "tiny-1"},
		{route: 2, a: "tiny-1", query: "from=-1099511627776"},
		{route: 2, a: "tiny-1", id: "-1099511627776"},
		{route: 2, a: "tiny-1", query: "from=-9223372036854775808"},
		{route: 2, a: "tiny-1", query: "from=9223372036854775807"},
		{route: 2, a: "tiny-1", query: "from=0"},
		{route: 2, a: "tiny-1", query: "from=12&from=3", id: "7"},
		{route: 3, a: "tiny-1", query: "step=run-shape"},
		{route: 4, a: "tiny-1", b: "aa-1k", c: "2"},
		{route: 4, a: "tiny-1", b: "aa-1k", c: "-9223372036854775808"},
		{route: 4, a: "tiny-1", b: "aa-1k", c: "99999999999999999999999"},
		{route: 5, a: "tiny-1", b: campaigndir.Report()},
		{route: 5, a: "tiny-1", b: "../../../../etc/passwd"},
		{route: 5, a: "tiny-1", b: "%2e%2e/%2e%2e/" + filepath.Base(campaigndir.Config(""))},
		{route: 6, a: "tiny-1", query: "name=../../etc&cell=aa-1k"},
		{route: 7, a: "tiny-1"},
		{route: 8, query: "a=tiny-1&b=tiny-1"},
		{route: 9, a: "app.js"},
		{route: 10, a: "tiny"},
		{route: 10, a: "..%2f..%2fetc"},
		{route: 11, a: "tiny-1"},
		{route: 128 + 10, a: "tiny", query: "token=" + token},
		{route: 128 + 1, a: "tiny-1", auth: "bearer " + token, host: "box.example"},
		{route: 128 + 2, a: "tiny-1", query: "from=-1&token=" + token},
		{route: 128, cookie: cookieName + "=" + token, host: "evil.example"},
		{route: 128 + 5, a: "tiny-1", b: filepath.Base(campaigndir.Source("")), auth: "Bearer\t" + token},
	} {
		f.Add(s.route, s.a, s.b, s.c, s.query, s.id, s.auth, s.host, s.cookie)
	}
	f.Fuzz(func(t *testing.T, route uint8, a, b, c, query, lastID, auth, host, cookie string) {
		srv := open
		if route >= 128 {
			srv = guarded
		}
		target := strings.NewReplacer("{a}", a, "{b}", b, "{c}", c).Replace(routes[int(route%128)%len(routes)])
		if query != "" {
			target += "?" + query
		}
		u, err := url.ParseRequestURI(target)
		if err != nil {
			return // no server hands a handler an address it cannot parse
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req := httptest.NewRequest(http.MethodGet, "/", nil).WithContext(ctx)
		req.URL, req.RequestURI, req.Host = u, target, host
		if host == "" {
			req.Host = "127.0.0.1"
		}
		for k, v := range map[string]string{"Authorization": auth, "Cookie": cookie, "Last-Event-ID": lastID} {
			if v != "" {
				req.Header.Set(k, v)
			}
		}
		w := flushCancels{httptest.NewRecorder(), cancel}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		done := make(chan struct{})
		go func() {
			defer close(done)
			srv.ServeHTTP(w, req)
		}()
		select {
		case <-done:
		case <-time.After(2 * time.Minute): // a hang guard, not a timing
			t.Fatalf("GET %q (Last-Event-ID %q) did not return", target, lastID)
		}
		runtime.ReadMemStats(&after)
		if d := after.TotalAlloc - before.TotalAlloc; d > maxAllocPerRequest {
			t.Errorf("GET %q (Last-Event-ID %q): %d MiB allocated, bound %d MiB", target, lastID, d>>20, maxAllocPerRequest>>20)
		}
		if w.Code >= 500 && w.Code != http.StatusServiceUnavailable {
			t.Errorf("GET %q (Last-Event-ID %q): %d %.300s", target, lastID, w.Code, w.Body.String())
		}
	})
}
