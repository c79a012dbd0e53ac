package browser_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/steps/testkit/browser"
)

// page exercises every helper: a hover handler, a console error, a broken image and an alert.
const page = `<!doctype html><html><body>
<div id="target" style="margin:300px 0 0 40px;width:80px;height:40px;background:#28a">hover me</div>
<p id="out">idle</p>
<script>
document.getElementById("target").addEventListener("mouseover", () => { document.getElementById("out").textContent = "hovered"; });
function breakThings() { console.error("boom from the page"); alert("hi from the page"); const i = document.createElement("img"); i.src = "missing.png"; document.body.appendChild(i); }
</script></body></html>`

func TestBrowserKit(t *testing.T) {
	b := browser.Start(t)
	path := filepath.Join(t.TempDir(), "kit.html")
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	b.Navigate(browser.FileURL(path))
	if got := browser.Eval[string](b, `document.getElementById("out").textContent`); got != "idle" {
		t.Fatalf("before hover: %q", got)
	}
	b.Settle()
	if p, d := b.Problems(), b.Dialogs(); len(p)+len(d) > 0 {
		t.Fatalf("a clean page reported problems %q dialogs %q", p, d)
	}
	b.Hover("#target")
	if got := browser.Eval[string](b, `document.getElementById("out").textContent`); got != "hovered" {
		t.Errorf("after hover: %q, want hovered (the mouse did not reach the element)", got)
	}
	shot := b.Screenshot("kit")
	data, err := os.ReadFile(shot)
	if err != nil || !bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("screenshot %s is not a PNG (err %v)", shot, err)
	}

	browser.Eval[bool](b, `(breakThings(), true)`)
	b.Settle()
	problems := strings.Join(b.Problems(), "\n")
	t.Logf("problems:\n%s", problems)
	if !strings.Contains(problems, "boom from the page") {
		t.Errorf("console error not collected; problems:\n%s", problems)
	}
	if !strings.Contains(problems, "failed: Image") {
		t.Errorf("failed image request not collected; problems:\n%s", problems)
	}
	if !slices.ContainsFunc(b.Dialogs(), func(s string) bool { return strings.Contains(s, "hi from the page") }) {
		t.Errorf("alert not collected: %q", b.Dialogs())
	}
}
