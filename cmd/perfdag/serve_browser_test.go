package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/analysis/baseline"
	"github.com/perfdag/perfdag/steps/report/svgchart"
	"github.com/perfdag/perfdag/steps/testkit/browser"
)

// startServe runs `perfdag serve args...` as a child and returns the address it printed.
func startServe(t *testing.T, args ...string) string {
	t.Helper()
	cmd := perfdagChild(append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("perfdag serve printed no address: %v\n%s", err, stderr.String())
	}
	i := strings.Index(line, "http://")
	if i < 0 {
		t.Fatalf("perfdag serve: %q", line)
	}
	return strings.TrimSuffix(strings.TrimSpace(line[i:]), "/")
}

// waitFor waits (bounded against a hang, never a performance assertion) until the page has an
// element matching sel.
func waitFor(t *testing.T, b *browser.Browser, sel string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.Context(), 4*time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.WaitReady(chromedp.CSS(sel))); err != nil {
		t.Fatalf("waiting for %s: %v", sel, err)
	}
}

// `perfdag serve` in a real browser against the quickstart: the page loads without a console
// error, node states change on screen while the campaign runs (no reload), a point's tooltip
// shows its point.json value, and the comparison views show `baseline diff`'s numbers.
// Screenshots of each view go to $PERFDAG_SCREENSHOTS.
func TestServeInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the quickstart twice (~2 min) under a headless Chromium")
	}
	b := browser.Start(t)
	root := filepath.Join(t.TempDir(), "campaigns")
	reg := filepath.Join(t.TempDir(), "baselines")
	qs := filepath.Join(root, "qs")
	run := perfdagChild("run", "../../pipelines/quickstart.yaml", "--out", qs)
	var runOut bytes.Buffer
	run.Stdout, run.Stderr = &runOut, &runOut
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	defer run.Process.Kill()
	waitRunning(t, run, qs, "prewarm[aa-1k]", 3*time.Minute, &runOut)
	base := startServe(t, root, "--registry", reg)

	b.Navigate(base + "/c/qs/")
	before := browser.Eval[string](b, `document.querySelector('tr[data-node="render"] td.state').textContent`)
	if before != "pending" {
		t.Fatalf("render is %q on the first page, want pending (the campaign just started)", before)
	}
	browser.Eval[bool](b, `window.__sameDocument = true`)
	waitFor(t, b, `tr[data-node^="run-shape"] td.state[data-state="running"]`)
	b.Screenshot("campaign-live")
	waitFor(t, b, `tr[data-node="render"] td.state[data-state="succeeded"]`)
	if !browser.Eval[bool](b, `window.__sameDocument === true`) {
		t.Fatal("the page reloaded: the state change did not arrive live")
	}
	if err := run.Wait(); err != nil {
		t.Fatalf("quickstart: %v\n%s", err, runOut.String())
	}
	b.Screenshot("campaign-done")
	b.Clean()

	// a second campaign, slower per token, to compare with the first
	src, err := os.ReadFile("../../pipelines/quickstart.yaml")
	if err != nil {
		t.Fatal(err)
	}
	slower := filepath.Join(t.TempDir(), "quickstart.yaml")
	if err := os.WriteFile(slower, bytes.Replace(src, []byte("tpot_ms: 1,"), []byte("tpot_ms: 1.3,"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	run2 := perfdagChild("run", slower, "--out", filepath.Join(root, "qs-slower"))
	var run2Out bytes.Buffer
	run2.Stdout, run2.Stderr = &run2Out, &run2Out
	if err := run2.Start(); err != nil {
		t.Fatal(err)
	}
	defer run2.Process.Kill()

	b.Navigate(base + "/c/qs/point/aa-1k/4")
	var pt schema.Point
	if _, err := campaigndir.ReadJSON(qs, campaigndir.Point("aa-1k", schema.Conc(4)), &pt); err != nil {
		t.Fatal(err)
	}
	want := "ttft_ms p50 (point.json) = " + svgchart.Exact(pt.TTFT.P50) + " ms"
	b.Hover(fmt.Sprintf(`svg.svgchart [data-tip*=%q]`, want))
	tip := browser.Eval[string](b, `(() => { const t = document.querySelector(".svgchart-tip"); return t && !t.hidden ? t.textContent : ""; })()`)
	if !strings.Contains(tip, want) {
		t.Errorf("the tooltip over TTFT p50 says %q, want it to hold %q", tip, want)
	}
	b.Screenshot("point-tooltip")
	b.Clean()
	b.Navigate(base + "/c/qs/report")
	if n := browser.Eval[int](b, `document.querySelectorAll("svg.svgchart").length`); n == 0 {
		t.Error("the HTML report view draws no chart")
	}
	b.Screenshot("report")
	b.Clean() // its inline script ran under the policy: a blocked one is a console error

	if err := run2.Wait(); err != nil {
		t.Fatalf("second quickstart: %v\n%s", err, run2Out.String())
	}
	// a hostile copy: its directory name and campaign name are markup; nothing may run
	hostile := filepath.Join(root, `x"><img src=x onerror=alert(1)>`)
	if err := os.CopyFS(hostile, os.DirFS(qs)); err != nil {
		t.Fatal(err)
	}
	info, err := campaigndir.ReadInfo(hostile)
	if err != nil {
		t.Fatal(err)
	}
	info.Campaign = `<script>alert("campaign")</script><img src=y onerror=alert(2)>`
	if err := campaigndir.WriteInfo(hostile, info); err != nil {
		t.Fatal(err)
	}
	b.Navigate(base + "/")
	b.Screenshot("list")
	b.Navigate(base + "/c/" + url.PathEscape(filepath.Base(hostile)) + "/")
	if got := browser.Eval[string](b, `document.querySelector("h1").firstChild.textContent.trim()`); got != info.Campaign {
		t.Errorf("the hostile campaign name shows as %q, want its text", got)
	}
	b.Screenshot("hostile")
	b.Clean()
	b.Navigate(base + "/")
	for _, cell := range []string{"aa-1k", "aa-10k"} {
		if out, err := perfdagChild("baseline", "record", qs, "--name", "weekly-"+cell, "--cell", cell, "--registry", reg).CombinedOutput(); err != nil {
			t.Fatalf("baseline record: %v\n%s", err, out)
		}
		out, _ := perfdagChild("baseline", "diff", "--baseline", "weekly-"+cell, "--current", filepath.Join(root, "qs-slower"),
			"--registry", reg, "--cell", cell, "--json").Output()
		var d schema.BaselineDiff
		if err := json.Unmarshal(out, &d); err != nil {
			t.Fatalf("baseline diff --json: %v\n%s", err, out)
		}
		for _, view := range []string{"/c/qs-slower/baseline?name=weekly-" + cell, "/compare?a=qs&b=qs-slower"} {
			b.Navigate(base + view)
			sec := "section.diff"
			if strings.HasPrefix(view, "/compare") {
				sec = fmt.Sprintf(`section.diff[data-cell=%q]`, cell)
			}
			checked := 0
			for _, r := range d.Rows {
				sel := fmt.Sprintf(`%s tr[data-metric=%q][data-concurrency="%d"]`, sec, r.Metric, r.Concurrency)
				got := browser.Eval[[]string](b, fmt.Sprintf(`(() => { const tr = document.querySelector(%q); if (!tr) return [];
					const b = tr.querySelector("td.base"), c = tr.querySelector("td.cur");
					return [...tr.querySelectorAll("td")].slice(0, 8).map(td => td.textContent).concat([b.dataset.exact, c.dataset.exact]); })()`, sel))
				cl := baseline.Cells(r) // the figures `baseline diff` prints, and the exact values of its JSON
				wantRow := []string{cl.Concurrency, cl.Metric, cl.Baseline, cl.Current, cl.Delta, cl.DeltaPct, cl.Tolerance, cl.Verdict, num(r.Baseline), num(r.Current)}
				if fmt.Sprint(got) != fmt.Sprint(wantRow) {
					t.Errorf("%s %s: the page shows %v, baseline diff says %v", view, sel, got, wantRow)
				}
				checked++
			}
			if checked == 0 {
				t.Fatalf("baseline diff of %s has no rows", cell)
			}
			verdict := browser.Eval[string](b, fmt.Sprintf(`document.querySelector(%q).textContent`, sec+" h2 .verdict"))
			if verdict != d.Verdict {
				t.Errorf("%s: verdict %q on the page, %q from baseline diff", view, verdict, d.Verdict)
			}
			if cell == "aa-1k" {
				name := "compare-campaigns"
				if strings.Contains(view, "baseline") {
					name = "compare-baseline"
				}
				b.Screenshot(name)
			}
		}
	}
	b.Clean()
}

func num(p *float64) string {
	if p == nil {
		return "null"
	}
	return svgchart.Exact(*p)
}
