// Package browser drives a headless Chromium from Go tests (through chromedp): open a page, run
// JavaScript, hover an element, and collect what a user would see go wrong — console errors,
// uncaught exceptions, failed requests and JavaScript dialogs — plus PNG screenshots to look at.
// A machine without Chromium skips the test, and fails it under PERFDAG_NO_SKIP=1 (CI).
package browser

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/perfdag/perfdag/steps/testkit"
)

// ScreenshotsEnv names the directory screenshots are written to (default: the test's temp dir,
// which Go removes after the test); set it to keep the PNGs and look at them.
const ScreenshotsEnv = "PERFDAG_SCREENSHOTS"

// hangLimit bounds a browser session so a wedged Chromium fails the test instead of hanging
// the package until go test's own timeout; it is never a performance assertion.
const hangLimit = 3 * time.Minute

// Browser is one headless Chromium tab owned by a test; it closes when the test ends.
type Browser struct {
	t   testing.TB
	ctx context.Context
	dir string

	mu       sync.Mutex
	problems []string // console errors, exceptions, failed requests
	dialogs  []string // alert/confirm/prompt messages (each dismissed)
}

// Start launches headless Chromium for t (skipping, or failing under PERFDAG_NO_SKIP=1, when it
// is not installed) with a 1280x900 window and starts collecting the page's problems.
func Start(t testing.TB) *Browser {
	t.Helper()
	exe := testkit.NeedTool(t, "chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.Headless,
		chromedp.NoSandbox, // tests run as root in CI containers, where the sandbox cannot start
		chromedp.DisableGPU,
		chromedp.WindowSize(1280, 900),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("hide-scrollbars", true),
	)
	base, cancelTimeout := context.WithTimeout(context.Background(), hangLimit)
	actx, cancelAlloc := chromedp.NewExecAllocator(base, opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc()
		cancelTimeout()
	})
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium %s: %v", exe, err)
	}
	b := &Browser{t: t, ctx: ctx, dir: os.Getenv(ScreenshotsEnv)}
	if b.dir == "" {
		b.dir = t.TempDir()
	}
	b.collect()
	return b
}

// collect records console errors, exceptions, failed requests and dialogs from now on; a
// dialog is dismissed so that it cannot block the page (and the test).
func (b *Browser) collect() {
	console := chromedp.Console(b.ctx)
	failed := chromedp.Events(b.ctx, network.LoadingFailed)
	dialogs := chromedp.Events(b.ctx, page.JavascriptDialogOpening)
	go func() {
		for m, err := range console {
			if err != nil {
				return
			}
			if m.IsException() || m.Type == "error" || m.Type == "assert" {
				b.add(&b.problems, fmt.Sprintf("console %s: %s (%s:%d)", m.Type, m.Text, m.URL, m.Line+1))
			}
		}
	}()
	go func() {
		for ev, err := range failed {
			if err != nil {
				return
			}
			b.add(&b.problems, fmt.Sprintf("request %s failed: %s %s", ev.RequestID, ev.Type, ev.ErrorText))
		}
	}()
	go func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			b.add(&b.dialogs, fmt.Sprintf("%s: %s", ev.Type, ev.Message))
			_, _ = chromedp.Call(b.ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	}()
}

func (b *Browser) add(to *[]string, s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	*to = append(*to, s)
}

// Context is the tab's context, for chromedp actions the helpers do not cover.
func (b *Browser) Context() context.Context { return b.ctx }

// FileURL is the file:// URL of a local path, the way a user opens an e-mailed report.
func FileURL(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	return "file://" + filepath.ToSlash(abs)
}

// Navigate opens url and waits until the document has loaded; it fails the test on error.
func (b *Browser) Navigate(url string) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, chromedp.Navigate(url), chromedp.WaitReady(chromedp.CSS("body"))); err != nil {
		b.t.Fatalf("navigate %s: %v", url, err)
	}
}

// Eval runs a JavaScript expression in the page and decodes its result into T; it fails the
// test when the expression throws or the result does not decode.
func Eval[T any](b *Browser, expr string) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.t.Fatalf("eval %q: %v", expr, err)
	}
	return v
}

// Hover scrolls the first element matching the CSS selector into view and moves the mouse to
// its centre, firing the page's real mouseover/mousemove handlers (not synthetic JS events).
func (b *Browser) Hover(selector string) {
	b.t.Helper()
	type box struct{ X, Y float64 }
	c := Eval[*box](b, fmt.Sprintf(`(() => { const e = document.querySelector(%q); if (!e) return null;
		e.scrollIntoView({block: "center", inline: "center"}); const r = e.getBoundingClientRect();
		return {X: r.left + r.width / 2, Y: r.top + r.height / 2}; })()`, selector))
	if c == nil {
		b.t.Fatalf("hover: no element matches %s", selector)
	}
	if err := chromedp.Do(b.ctx, chromedp.MouseEvent("mouseMoved", c.X, c.Y)); err != nil {
		b.t.Fatalf("hover %s: %v", selector, err)
	}
}

// Problems is every console error, uncaught exception and failed request seen so far.
func (b *Browser) Problems() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.problems...)
}

// Dialogs is every alert, confirm or prompt the page opened so far (each was dismissed).
func (b *Browser) Dialogs() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.dialogs...)
}

// Settle waits until the page has handled everything queued so far (two animation frames), so
// that the problems and dialogs a page causes have been reported before a test reads them.
func (b *Browser) Settle() {
	b.t.Helper()
	const frames = `new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))`
	if _, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](frames, chromedp.EvalAwaitPromise)); err != nil {
		b.t.Fatalf("settle: %v", err)
	}
}

// Clean fails the test when the page reported a problem or opened a dialog.
func (b *Browser) Clean() {
	b.t.Helper()
	b.Settle()
	for _, p := range b.Problems() {
		b.t.Errorf("browser: %s", p)
	}
	for _, d := range b.Dialogs() {
		b.t.Errorf("browser: a dialog opened: %s", d)
	}
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// Screenshot writes a PNG of the window as a user sees it (a tooltip where it floats) named
// after the test and name into $PERFDAG_SCREENSHOTS (or the test's temp dir) and returns its
// path; the test log names it so a person can look.
func (b *Browser) Screenshot(name string) string {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	return b.write(name, png)
}

// ScreenshotFull writes a PNG of the whole page, however long (see Screenshot).
func (b *Browser) ScreenshotFull(name string) string {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	return b.write(name, png)
}

// ScreenshotOf writes a PNG of the first element matching the CSS selector (see Screenshot).
func (b *Browser) ScreenshotOf(name, selector string) string {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.Screenshot(chromedp.CSS(selector)))
	if err != nil {
		b.t.Fatalf("screenshot %s of %s: %v", name, selector, err)
	}
	return b.write(name, png)
}

func (b *Browser) write(name string, png []byte) string {
	b.t.Helper()
	if err := os.MkdirAll(b.dir, 0o755); err != nil {
		b.t.Fatalf("screenshots dir: %v", err)
	}
	p := filepath.Join(b.dir, unsafeName.ReplaceAllString(b.t.Name()+"-"+name, "_")+".png")
	if err := os.WriteFile(p, png, 0o644); err != nil {
		b.t.Fatalf("write screenshot %s: %v", p, err)
	}
	b.t.Logf("screenshot: %s", p)
	return p
}
