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
	"syscall"
	"testing"
	"time"

	"github.com/perfdag/perfdag/engine/events"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// stream opens a live stream and returns its reader once the server answered (subscribed).
func stream(t *testing.T, url string) *bufio.Reader {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a hang guard, not a timing
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != 200 {
		t.Fatalf("%s: %d", url, resp.StatusCode)
	}
	return bufio.NewReader(resp.Body)
}

// nextEvent returns the next SSE message's event name ("" for a data message) and data.
func nextEvent(t *testing.T, br *bufio.Reader) (name, data string) {
	t.Helper()
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("read the live stream: %v", err)
		}
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = strings.TrimPrefix(line, "data: ")
		case line == "" && (name != "" || data != ""):
			return name, data
		}
	}
}

var liveAttr = regexp.MustCompile(`data-live="([^"]+)"`)

// A campaign directory removed and written again (a re-run into the same --out) while a page
// follows it: the open stream is told to reload (its offset is into a file that is gone), and
// a page opened afterwards follows the new directory's log.
func TestLiveFollowsAReplacedDirectory(t *testing.T) {
	root := t.TempDir()
	dir := finished(t, root, "tiny-1")
	ts := serve(t, Options{Roots: []string{root}})
	st, err := os.Stat(campaigndir.Events(dir))
	if err != nil {
		t.Fatal(err)
	}
	first := stream(t, ts.URL+"/c/tiny-1/live?from="+itoa(st.Size()))
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	finished(t, root, "tiny-1") // the same name, new files (its log as long as the old one)
	if name, _ := nextEvent(t, first); name != "reload" {
		t.Fatalf("the stream of the replaced directory sent %q, want reload", name)
	}
	_, page := get(t, ts, "/c/tiny-1/")
	m := liveAttr.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no live address on the page:\n%.500s", page)
	}
	later := stream(t, ts.URL+strings.ReplaceAll(m[1], "&amp;", "&"))
	line, _ := json.Marshal(events.Event{Time: time.Now().UTC(), Run: "r2", Type: events.NodeStart, Node: "run-shape[aa-1k/c2]", Kind: "run-shape"})
	f, err := os.OpenFile(campaigndir.Events(dir), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.Write(append(line, '\n'))
	_ = f.Close()
	if name, data := nextEvent(t, later); name != "" || !strings.Contains(data, `"run-shape[aa-1k/c2]"`) || !strings.Contains(data, `"running"`) {
		t.Fatalf("a page opened after the directory was replaced got %q %s, want the new node start", name, data)
	}
}

// The list reads a campaign's events.jsonl as every served file is read: inside the
// directory, a regular file, not a symlink. One pointing out of the directory is not read
// (its events are not shown), and a FIFO does not hang the page.
func TestListReadsOnlyRegularFiles(t *testing.T) {
	root := t.TempDir()
	out := filepath.Join(t.TempDir(), "elsewhere.jsonl")
	line, _ := json.Marshal(events.Event{Time: time.Now().UTC(), Run: "x", Type: events.RunEnd, Status: "OUTSIDE-STATUS"})
	if err := os.WriteFile(out, append(line, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	linked := finished(t, root, "a-linked")
	if err := os.Remove(campaigndir.Events(linked)); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(out, campaigndir.Events(linked)); err != nil {
		t.Fatal(err)
	}
	fifo := finished(t, root, "b-fifo")
	if err := os.Remove(campaigndir.Events(fifo)); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(campaigndir.Events(fifo), 0o644); err != nil {
		t.Fatal(err)
	}
	finished(t, root, "c-plain")
	ts := serve(t, Options{Roots: []string{root}})
	t.Cleanup(func() { // release a reader left blocked on the FIFO, so the server can close
		if f, err := os.OpenFile(campaigndir.Events(fifo), os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	code, body := getWithin(t, ts.URL+"/")
	if code != 200 || strings.Contains(body, "OUTSIDE-STATUS") {
		t.Fatalf("list: %d, showing the events of a file outside the directory: %v\n%s", code, strings.Contains(body, "OUTSIDE-STATUS"), body)
	}
	for _, id := range []string{"a-linked", "b-fifo"} {
		row := rowOf(body, id)
		if !strings.Contains(row, `data-state="unreadable"`) || !strings.Contains(row, "not a regular file") {
			t.Errorf("%s: %s, want unreadable (events.jsonl is not a regular file)", id, row)
		}
		if code, _ := getWithin(t, ts.URL+"/c/"+id+"/"); code == 200 {
			t.Errorf("the page of %s: 200, want a refusal", id)
		}
		if code, _ := getWithin(t, ts.URL+"/c/"+id+"/live?from=0"); code == 200 {
			t.Errorf("the live stream of %s: 200, want a refusal", id)
		}
	}
	if row := rowOf(body, "c-plain"); row == "" || strings.Contains(row, "unreadable") {
		t.Errorf("c-plain, a campaign with regular files: %q", row)
	}
}

// A log that is a symlink to a device (/dev/zero never ends) is refused, not read whole.
func TestListRefusesADeviceLog(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	root := t.TempDir()
	dir := finished(t, root, "zero")
	if err := os.Remove(campaigndir.Events(dir)); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", campaigndir.Events(dir)); err != nil {
		t.Fatal(err)
	}
	ts := serve(t, Options{Roots: []string{root}})
	code, body := getWithin(t, ts.URL+"/")
	if row := rowOf(body, "zero"); code != 200 || !strings.Contains(row, `data-state="unreadable"`) {
		t.Errorf("list: %d %s", code, row)
	}
	if code, _ := getWithin(t, ts.URL+"/c/zero/"); code == 200 {
		t.Errorf("the campaign page: 200, want a refusal")
	}
}

// A served engine file that is a symlink is refused, even to a file inside the directory: a
// SOURCE.md pointing at config.yaml would serve the config (it may hold a lake DSN).
func TestSymlinkedServedFileRefused(t *testing.T) {
	root := t.TempDir()
	dir := finished(t, root, "tiny-1")
	for _, name := range []string{filepath.Base(campaigndir.Source(dir)), filepath.Base(campaigndir.Summary(dir))} {
		_ = os.Remove(filepath.Join(dir, name))
		if err := os.Symlink(filepath.Base(campaigndir.Config(dir)), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	ts := serve(t, Options{Roots: []string{root}})
	for _, name := range []string{filepath.Base(campaigndir.Source(dir)), filepath.Base(campaigndir.Summary(dir))} {
		if code, body := get(t, ts, "/c/tiny-1/file/"+name); code == 200 || strings.Contains(body, "version: 1") {
			t.Errorf("%s symlinked to config.yaml: %d\n%.300s", name, code, body)
		}
	}
	if _, page := get(t, ts, "/c/tiny-1/"); strings.Contains(page, "/file/"+filepath.Base(campaigndir.Source(dir))) {
		t.Errorf("the campaign page links a symlinked SOURCE.md")
	}
}

// Campaigns whose directory names collide, in different roots or with a name that looks like
// another's suffix, get distinct ids, each naming its own directory, the same on every read.
func TestIDsAreUnique(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	dirs := []string{finished(t, a, "x"), finished(t, a, "x~2"), finished(t, b, "x")}
	for _, d := range dirs {
		if err := os.WriteFile(campaigndir.Summary(d), []byte("WHICH "+d+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ts := serve(t, Options{Roots: []string{a, b}})
	ids := func() []string {
		_, body := get(t, ts, "/")
		var out []string
		for _, m := range regexp.MustCompile(`<tr data-campaign="([^"]+)"`).FindAllStringSubmatch(body, -1) {
			out = append(out, m[1])
		}
		return out
	}
	first := ids()
	if len(first) != 3 {
		t.Fatalf("ids %q, want 3", first)
	}
	shows := map[string]string{}
	for _, id := range first {
		code, body := get(t, ts, "/c/"+id+"/file/"+filepath.Base(campaigndir.Summary("")))
		if code != 200 {
			t.Fatalf("%s: %d %s", id, code, body)
		}
		if prev, ok := shows[body]; ok {
			t.Errorf("ids %s and %s serve the same directory (%s)", prev, id, strings.TrimSpace(body))
		}
		shows[body] = id
	}
	_, list := get(t, ts, "/")
	for _, where := range []string{filepath.Join(filepath.Base(a), "x"), filepath.Join(filepath.Base(b), "x")} {
		if !strings.Contains(list, `title="`+where+`">x~`) {
			t.Errorf("the list does not say on hover which x is %s", where)
		}
	}
	if again := ids(); strings.Join(again, " ") != strings.Join(first, " ") {
		t.Errorf("ids changed between reads: %q then %q", first, again)
	}
}

// getWithin fetches url with a hang guard (a FIFO must not hold a page forever).
func getWithin(t *testing.T, url string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard, not a timing
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", url, err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil || resp.Header.Get("Content-Type") == "text/event-stream" {
			break
		}
	}
	return resp.StatusCode, b.String()
}

// rowOf is the list's row of a campaign id.
func rowOf(body, id string) string {
	i := strings.Index(body, `<tr data-campaign="`+id+`"`)
	if i < 0 {
		return ""
	}
	j := strings.Index(body[i:], "</tr>")
	if j < 0 {
		return body[i:]
	}
	return body[i : i+j]
}
