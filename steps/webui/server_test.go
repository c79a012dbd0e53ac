package webui

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// The pages of a finished campaign show what its files hold: the list, the node table with
// every node, a point's numbers as point.json has them, the recorded outputs.
func TestPagesShowTheDirectory(t *testing.T) {
	root := t.TempDir()
	dir := finished(t, root, "tiny-1")
	ts := serve(t, Options{Roots: []string{root}})
	code, body := get(t, ts, "/")
	if code != 200 || !strings.Contains(body, `href="/c/tiny-1/"`) || !strings.Contains(body, ">tiny<") {
		t.Fatalf("list: %d\n%s", code, body)
	}
	st, err := service(t).Status(dir)
	if err != nil {
		t.Fatal(err)
	}
	code, body = get(t, ts, "/c/tiny-1/")
	if code != 200 {
		t.Fatalf("campaign page: %d\n%s", code, body)
	}
	for _, n := range st.Nodes {
		if !strings.Contains(body, `data-node="`+n.Node+`"`) {
			t.Errorf("campaign page lacks node %s", n.Node)
		}
	}
	for _, want := range []string{`href="/c/tiny-1/file/` + campaigndir.Report() + `"`, `href="/c/tiny-1/file/` + campaigndir.Atlas() + `"`,
		`href="/c/tiny-1/file/` + campaigndir.Source("") + `"`, `href="/c/tiny-1/point/aa-1k/c2"`} {
		if !strings.Contains(body, want) {
			t.Errorf("campaign page lacks %s", want)
		}
	}
	var p schema.Point
	if _, err := campaigndir.ReadJSON(dir, campaigndir.Point("aa-1k", schema.Conc(2)), &p); err != nil {
		t.Fatal(err)
	}
	code, body = get(t, ts, "/c/tiny-1/point/aa-1k/2")
	if code != 200 {
		t.Fatalf("point page: %d\n%s", code, body)
	}
	for _, want := range []string{
		`data-key="output_token_throughput" title="` + exact(p.OutputTokenThroughput) + `">` + fig(p.OutputTokenThroughput) + `<`,
		`ttft_ms p50 (point.json) = ` + exact(p.TTFT.P50) + ` ms"`,
		`ttft_ms p99 (point.json) = ` + exact(p.TTFT.P99) + ` ms"`,
		`data-x="50" data-y="` + exact(p.TTFT.P50) + `"`,
		`class="chart timeline"`, `TTFT (ms) [`, `ITL (ms) [`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("point page lacks %s", want)
		}
	}
	code, body = get(t, ts, "/c/tiny-1/file/"+campaigndir.Report())
	if code != 200 || !strings.HasPrefix(body, "%PDF") {
		t.Errorf("report.pdf: %d %.20q", code, body)
	}
}

// No address reaches a file outside the served directories, nor one inside that no step
// recorded: "..", its encodings, absolute paths, unknown campaigns and symlinks pointing out.
func TestTraversalIsRefused(t *testing.T) {
	root := t.TempDir()
	dir := finished(t, root, "tiny-1")
	secret := filepath.Join(t.TempDir(), "outside.txt")
	if err := os.WriteFile(secret, []byte("OUTSIDE-THE-ROOT"), 0o644); err != nil {
		t.Fatal(err)
	}
	// a symlink where a recorded output was, and one beside the engine files
	rep := campaigndir.Abs(dir, campaigndir.Atlas())
	if err := os.Remove(rep); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, rep); err != nil {
		t.Fatal(err)
	}
	src := campaigndir.Source(dir)
	_ = os.Remove(src)
	if err := os.Symlink(secret, src); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(secret), filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	elsewhere := finished(t, t.TempDir(), "elsewhere") // a campaign outside the root, linked in
	if err := os.Symlink(elsewhere, filepath.Join(root, "linked")); err != nil {
		t.Fatal(err)
	}
	ts := serve(t, Options{Roots: []string{root}})
	if _, body := get(t, ts, "/"); strings.Contains(body, "linked") {
		t.Errorf("a symlinked campaign directory pointing out of the root is listed")
	}
	for _, p := range []string{
		"/c/linked/", "/c/linked/file/" + campaigndir.Source(""), "/c/elsewhere/",
		"/c/tiny-1/file/../../../" + secret,
		"/c/tiny-1/file/..%2f..%2f..%2f" + secret,
		"/c/tiny-1/file/%2e%2e/%2e%2e/%2e%2e" + secret,
		"/c/tiny-1/file/%2e%2e%2f%2e%2e%2f%2e%2e" + secret,
		"/c/tiny-1/file/" + secret,
		"/c/tiny-1/file//" + secret,
		"/c/tiny-1/file/" + campaigndir.Atlas(),
		"/c/tiny-1/file/" + campaigndir.Source(""),
		"/c/tiny-1/file/out/outside.txt",
		"/c/..%2f..%2f..%2f" + filepath.Dir(secret) + "/file/outside.txt",
		"/c/%2e%2e/file/" + filepath.Base(root) + "/tiny-1/" + campaigndir.Config(""),
		"/c/tiny-1/file/" + campaigndir.Config(""),
		"/c/tiny-1/file/" + campaigndir.Journal(""),
		"/c/tiny-1/file/" + campaigndir.Cells() + "/..%2f..%2f" + campaigndir.Config(""),
		"/static/..%2fserver.go",
		"/static/layout.html",
	} {
		code, body := get(t, ts, p)
		if strings.Contains(body, "OUTSIDE-THE-ROOT") || strings.Contains(body, "version: 1") || strings.Contains(body, `"fingerprint"`) || strings.Contains(body, "{{define") {
			t.Errorf("%s served a file it must not (%d):\n%.200s", p, code, body)
		}
		if code == http.StatusOK {
			t.Errorf("%s: 200, want a refusal", p)
		}
	}
}

// Without a token only loopback Host names are answered (no DNS rebinding); with one, every
// request must carry it: as a bearer header, as the cookie ?token= sets, never without.
func TestToken(t *testing.T) {
	root := t.TempDir()
	finished(t, root, "tiny-1")
	open := serve(t, Options{Roots: []string{root}})
	if code, _ := get(t, open, "/", "Host", "evil.example:8080"); code != http.StatusForbidden {
		t.Errorf("a foreign Host without a token: %d, want 403", code)
	}
	for _, h := range []string{"localhost:8080", "127.0.0.1", "[::1]:80"} {
		if code, _ := get(t, open, "/", "Host", h); code != 200 {
			t.Errorf("Host %s: %d, want 200", h, code)
		}
	}
	ts := serve(t, Options{Roots: []string{root}, Token: "s3cret-t0ken-0123456789"})
	for _, p := range []string{"/", "/c/tiny-1/", "/c/tiny-1/live", "/c/tiny-1/file/" + campaigndir.Report(), "/static/app.js", "/compare?a=tiny-1&b=tiny-1", "/nope"} {
		if code, body := get(t, ts, p, "Host", "evil.example"); code != http.StatusUnauthorized || strings.Contains(body, "tiny") {
			t.Errorf("%s without the token: %d, want 401", p, code)
		}
		if code, _ := get(t, ts, p, "Authorization", "Bearer wrong"); code != http.StatusUnauthorized {
			t.Errorf("%s with a wrong token: %d, want 401", p, code)
		}
		if code, _ := get(t, ts, p, "Cookie", cookieName+"=wrong"); code != http.StatusUnauthorized {
			t.Errorf("%s with a wrong cookie: %d, want 401", p, code)
		}
	}
	if code, body := get(t, ts, "/c/tiny-1/", "Authorization", "Bearer s3cret-t0ken-0123456789", "Host", "box.example"); code != 200 || !strings.Contains(body, "tiny") {
		t.Errorf("bearer token: %d", code)
	}
	req, _ := http.NewRequest(http.MethodGet, ts.URL+"/c/tiny-1/?token=s3cret-t0ken-0123456789", nil)
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == cookieName {
			cookie = c
		}
	}
	if resp.StatusCode != http.StatusSeeOther || strings.Contains(loc, "token") || cookie == nil || !cookie.HttpOnly {
		t.Fatalf("?token=: %d, Location %q, cookie %v", resp.StatusCode, loc, cookie)
	}
	if code, _ := get(t, ts, loc, "Cookie", cookieName+"="+cookie.Value); code != 200 {
		t.Errorf("with the cookie: %d", code)
	}
	for _, p := range []string{"//evil.example/x?token=s3cret-t0ken-0123456789", "/\\evil.example?token=s3cret-t0ken-0123456789"} {
		req, _ := http.NewRequest(http.MethodGet, ts.URL, nil)
		req.URL.Opaque = p
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if loc := resp.Header.Get("Location"); resp.StatusCode == http.StatusSeeOther &&
			(!strings.HasPrefix(loc, "/") || strings.HasPrefix(loc, "//") || strings.HasPrefix(loc, "/\\") || strings.Contains(loc, "://")) {
			t.Errorf("%s redirects to %q: off this server", p, loc)
		}
	}
	if code, _ := get(t, ts, "/?token=wrong"); code != http.StatusUnauthorized {
		t.Errorf("?token=wrong: %d, want 401", code)
	}
}

func TestLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8080": true, "localhost:0": true, "[::1]:80": true, "127.0.0.2:1": true,
		"0.0.0.0:8080": false, ":8080": false, "[::]:80": false, "192.168.1.4:80": false, "example.com:80": false, "nonsense": false,
	} {
		if got := Loopback(addr); got != want {
			t.Errorf("Loopback(%q) = %v, want %v", addr, got, want)
		}
	}
}

// Two campaigns side by side: the baseline diff of each common cell, its figures as the
// CLI prints them; identical campaigns are GREEN.
func TestCompare(t *testing.T) {
	root := t.TempDir()
	finished(t, root, "tiny-1")
	finished(t, root, "tiny-2")
	ts := serve(t, Options{Roots: []string{root}})
	code, body := get(t, ts, "/compare?a=tiny-1&b=tiny-2")
	if code != 200 || !strings.Contains(body, `<section class="diff" data-cell="aa-1k">`) || !strings.Contains(body, `data-verdict="GREEN">GREEN</span>`) ||
		!strings.Contains(body, `<tr data-metric="throughput_toks_per_s" data-concurrency="2">`) {
		t.Fatalf("%d:\n%.2000s", code, body)
	}
	if code, _ := get(t, ts, "/compare?a=tiny-1&b=../tiny-2"); code != http.StatusNotFound {
		t.Errorf("an unknown campaign: %d", code)
	}
	if code, _ := get(t, ts, "/c/tiny-1/baseline?name=../../etc"); code != http.StatusNotFound {
		t.Errorf("a baseline name that is a path: %d", code)
	}
}

// The report as `perfdag report --html` writes it, from the recorded results, under its own
// policy: only its tooltip script runs.
func TestReportPage(t *testing.T) {
	root := t.TempDir()
	finished(t, root, "tiny-1")
	ts := serve(t, Options{Roots: []string{root}})
	_, page := get(t, ts, "/c/tiny-1/")
	if !strings.Contains(page, `href="/c/tiny-1/report"`) {
		t.Error("the campaign page does not link its HTML report")
	}
	resp, err := http.Get(ts.URL + "/c/tiny-1/report")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Security-Policy") != reportCSP {
		t.Fatalf("%d, policy %q", resp.StatusCode, resp.Header.Get("Content-Security-Policy"))
	}
	_, body := get(t, ts, "/c/tiny-1/report")
	if !strings.Contains(body, `<main data-pages="`) || strings.Count(body, "<script") != 1 || !strings.Contains(body, "svgchart") {
		t.Errorf("report:\n%.600s", body)
	}
}
