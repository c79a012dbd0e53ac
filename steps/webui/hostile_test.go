package webui

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfdag/perfdag/engine/events"
	"github.com/perfdag/perfdag/engine/gate"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// Every string from a campaign file or a server message is escaped: a hostile directory name,
// campaign name, node reason and request error text arrive as text, never as markup.
func TestHostileStringsAreEscaped(t *testing.T) {
	root := t.TempDir()
	const name = `x"><img src=x onerror=alert(1)>`
	dir := finished(t, root, name)
	info, err := campaigndir.ReadInfo(dir)
	if err != nil {
		t.Fatal(err)
	}
	info.Campaign = `</title><script>alert("campaign")</script>`
	if err := campaigndir.WriteInfo(dir, info); err != nil {
		t.Fatal(err)
	}
	log, err := events.Open(campaigndir.Events(dir))
	if err != nil {
		t.Fatal(err)
	}
	st, err := service(t).Status(dir)
	if err != nil {
		t.Fatal(err)
	}
	node := st.Nodes[0].Node
	_ = log.Emit(events.Event{Type: events.NodeSkipped, Node: node, Reason: `<script>alert("reason")</script>`})
	_ = log.Close()
	ts := serve(t, Options{Roots: []string{root}})
	esc := "/c/" + strings.ReplaceAll(strings.ReplaceAll(strings.ReplaceAll(name, `"`, "%22"), ">", "%3E"), "<", "%3C")
	esc = strings.ReplaceAll(esc, " ", "%20")
	markup := regexp.MustCompile(`<script>alert|<img src=x|onerror=alert\(1\)>`)
	for _, p := range []string{"/", esc + "/", esc + "/point/aa-1k/1", "/compare?a=" + strings.TrimPrefix(esc, "/c/") + "&b=nope",
		"/c/%3Cscript%3Ealert(1)%3C%2Fscript%3E/"} {
		code, body := get(t, ts, p)
		if m := markup.FindString(body); m != "" {
			t.Errorf("%s (%d) carries markup %q from a campaign file:\n%.400s", p, code, m, body)
		}
		if code == 200 && !strings.Contains(body, "&lt;") {
			t.Errorf("%s shows no escaped text", p)
		}
	}
	_, body := get(t, ts, esc+"/")
	if !strings.Contains(body, `&lt;script&gt;alert(&#34;reason&#34;)&lt;/script&gt;`) {
		t.Errorf("the hostile reason is not shown escaped")
	}
	// and on the live stream, as JSON whose markup characters are escaped too
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+esc+"/live?from=0", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data := nextData(t, bufio.NewReader(resp.Body))
	if strings.Contains(data, "<script") || !strings.Contains(data, `\u003cscript\u003e`) {
		t.Errorf("live message: %.300s", data)
	}
}

// No secret reaches a page or a served file: the endpoint's API key (in the run's
// environment), a DSN password in the campaign file, secrets written into SOURCE.md.
func TestNoSecretServed(t *testing.T) {
	const key, pw = "sk-proj-Zq9SECRETKEYVALUE0123456789", "hunter2pw"
	t.Setenv("TINY_KEY", key)
	root := t.TempDir()
	dir := filepath.Join(root, "secret")
	runTiny(t, dir, func(s string) string {
		s = strings.Replace(s, "model: perfdag/sim-1", "model: perfdag/sim-1\n    api_key_env: TINY_KEY", 1)
		return strings.Replace(s, "kind: latency", "kind: latency\ndescription: lake at postgres://bench:"+pw+"@db.internal/lake", 1)
	})
	f, err := os.OpenFile(campaigndir.Source(dir), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString("\nlake: postgres://bench:" + pw + "@db.internal/lake\nAuthorization: Bearer " + key + "\n")
	_ = f.Close()
	ts := serve(t, Options{Roots: []string{root}})
	seen := map[string]bool{}
	queue := []string{"/"}
	href := regexp.MustCompile(`href="(/[^"]*)"`)
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if seen[p] {
			continue
		}
		seen[p] = true
		code, body := get(t, ts, strings.ReplaceAll(p, "&amp;", "&"))
		if code != 200 {
			continue
		}
		if strings.Contains(body, key) || strings.Contains(body, pw) {
			t.Errorf("%s serves a secret", p)
		}
		for _, m := range href.FindAllStringSubmatch(body, -1) {
			queue = append(queue, m[1])
		}
	}
	for _, want := range []string{"/c/secret/file/" + campaigndir.Source(""), "/c/secret/file/" + campaigndir.Atlas(), "/c/secret/point/aa-1k/c1", "/c/secret/report"} {
		if !seen[want] {
			t.Errorf("the crawl never reached %s (crawled %d pages)", want, len(seen))
		}
	}
}

// A recorded output being rewritten in place while served is never shown torn: each read
// is the whole recorded file or a refusal.
func TestNoTornFile(t *testing.T) {
	root := t.TempDir()
	dir := finished(t, root, "tiny-1")
	atlas := campaigndir.Abs(dir, campaigndir.Atlas())
	whole, err := os.ReadFile(atlas)
	if err != nil {
		t.Fatal(err)
	}
	ts := serve(t, Options{Roots: []string{root}})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // a writer that is not atomic: truncate, then write in two halves
		defer wg.Done()
		for {
			select {
			case <-stop:
				_ = os.WriteFile(atlas, whole, 0o644)
				return
			default:
			}
			f, err := os.OpenFile(atlas, os.O_WRONLY|os.O_TRUNC, 0)
			if err != nil {
				continue
			}
			_, _ = f.Write(whole[:len(whole)/2])
			_, _ = f.Write(whole[len(whole)/2:])
			_ = f.Close()
		}
	}()
	var ok, refused int
	for range 200 {
		code, body := get(t, ts, "/c/tiny-1/file/"+campaigndir.Atlas())
		switch {
		case code == 200 && body == string(whole):
			ok++
		case code == http.StatusConflict || code == http.StatusNotFound:
			refused++
		default:
			t.Fatalf("a read while the file was rewritten: %d, %d of %d bytes", code, len(body), len(whole))
		}
	}
	close(stop)
	wg.Wait()
	t.Logf("%d whole reads, %d refused while torn", ok, refused)
}

// The live stream sends what a run appends to events.jsonl, and only whole lines: a line
// being written arrives once it is complete.
func TestLiveSendsWholeLines(t *testing.T) {
	root := t.TempDir()
	dir := finished(t, root, "tiny-1")
	ts := serve(t, Options{Roots: []string{root}})
	st, err := os.Stat(campaigndir.Events(dir))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/c/tiny-1/live?from="+itoa(st.Size()), nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	br := bufio.NewReader(resp.Body)
	f, err := os.OpenFile(campaigndir.Events(dir), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	line1, _ := json.Marshal(events.Event{Time: time.Now().UTC(), Run: "r", Type: events.NodeStart, Node: "run-shape[aa-1k/c1]", Kind: "run-shape"})
	line2, _ := json.Marshal(events.Event{Time: time.Now().UTC(), Run: "r", Type: events.NodeEnd, Node: "run-shape[aa-1k/c1]", Kind: "run-shape", Status: "ran", Seconds: 2.5})
	_, _ = f.Write(append(line1, '\n'))
	if d := nextData(t, br); !strings.Contains(d, `"state":"running"`) || !strings.Contains(d, `run-shape[aa-1k/c1]`) {
		t.Fatalf("first message: %s", d)
	}
	rec, _ := json.Marshal(map[string]any{"node": "run-shape[aa-1k/c1]", "status": "succeeded",
		"gates": []gate.Verdict{{Gate: "no-errors", Severity: gate.Warn, Passed: true}, {Gate: "slo", Severity: gate.Fail}}})
	jf, err := os.OpenFile(campaigndir.Journal(dir), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = jf.Write(append(rec, '\n'))
	_ = jf.Close()
	half := len(line2) / 2
	_, _ = f.Write(line2[:half]) // torn: nothing may be sent for it
	_, _ = f.Write(append(line2[half:], '\n'))
	d := nextData(t, br)
	var us []update
	if err := json.Unmarshal([]byte(d), &us); err != nil {
		t.Fatalf("a message that is not whole JSON (%v): %s", err, d)
	}
	if len(us) != 1 || us[0].State != "succeeded" || us[0].Seconds != 2.5 {
		t.Fatalf("second message: %s", d)
	}
	if g := us[0].Gates; len(g) != 2 || g[0] != (gateMark{"no-errors", "ok", g[0].Tip}) || g[1].Gate != "slo" || g[1].Class != "failed" {
		t.Errorf("the node's verdicts from its journal record: %+v", g)
	}
}

// nextData returns the data of the next SSE message that has some.
func nextData(t *testing.T, br *bufio.Reader) string {
	t.Helper()
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("read the live stream: %v", err)
		}
		if strings.HasPrefix(line, "data: ") {
			return strings.TrimSpace(strings.TrimPrefix(line, "data: "))
		}
	}
}

func itoa(n int64) string { return jsonNum(n) }

func jsonNum(n int64) string { b, _ := json.Marshal(n); return string(b) }
