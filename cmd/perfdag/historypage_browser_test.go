package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/analysis/history"
	"github.com/perfdag/perfdag/steps/testkit"
	"github.com/perfdag/perfdag/steps/testkit/browser"
)

// trendCampaign is a scheduled campaign on the deterministic simulator (seeded TTFT noise, so
// values move run to run and carry intervals) with a searched cell, slowed by slowdown.
func trendCampaign(slowdown float64, seed int) string {
	return fmt.Sprintf(`version: 1
campaign: drifty
kind: latency
endpoints:
  sim:
    url: sim://
    model: perfdag/sim-1
    sim: {deterministic: true, ttft_ms: 25, ttft_sigma: 0.15, tpot_ms: 10, batch_tpot_ms: 1.1, seed: %d, slowdown: %g}
defaults: {hardware: H100, quant: FP8, tensor_parallel: 1, parallel_strategy: TP, engine: sim}
cells:
  - id: a
    workload: {shape: aa-1k}
    concurrencies: [1, 4]
    requests_per_point: 40
  - id: knee
    workload: {shape: custom, input_tokens: 100, output_tokens: 12}
    requests_per_point: 2x
    search: {slo: "itl_avg_ms <= 18", from: 1, to: 16}
schedule:
  cron: "0 3 * * *"
  baseline: drifty-a
  tolerances: {drift: 5, ttft_p50_ms: 100, ttft_p95_ms: 100, ttft_p99_ms: 100, itl_p50_ms: 100, throughput_toks_per_s: 100, tps_per_user: 100, request_latency_p50_ms: 100}
`, seed, slowdown)
}

// domMark is what a trend chart's mark carries in its data attributes.
type domMark struct {
	Kind, Run, Value, Lo, Hi, Verdict, Baseline, Before, After, Href string
	X                                                                int
}

// The serve history page in a real browser: ten runs fired by schedule --now, the last four on
// a 12 % slower simulator (a change point, the drift rule's RED runs). Every chart's run marks
// carry exactly the values, intervals and verdicts of perfdag history --json's series, its
// change-point marks are the series' marks, its baseline segments are the verdict.json diff
// rows' baseline values, and the marks link to the run's page and its verdict.
func TestHistoryPageInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("fires a scheduled campaign ten times (~30 s) and opens serve in a headless Chromium")
	}
	b := browser.Start(t)
	work := t.TempDir()
	file, reg, root := filepath.Join(work, "drifty.yaml"), filepath.Join(work, "reg"), filepath.Join(work, "runs")
	testkit.WriteFile(t, file, trendCampaign(1, 1))
	if out, err := perfdagChild("run", file, "--out", filepath.Join(work, "base")).CombinedOutput(); err != nil {
		t.Fatalf("baseline run: %v\n%s", err, out)
	}
	if out, err := perfdagChild("baseline", "record", filepath.Join(work, "base"), "--name", "drifty-a", "--cell", "a", "--registry", reg).CombinedOutput(); err != nil {
		t.Fatalf("record: %v\n%s", err, out)
	}
	for i, s := range []float64{1, 1, 1, 1, 1, 1, 1.12, 1.12, 1.12, 1.12} {
		testkit.WriteFile(t, file, trendCampaign(s, i+3))
		_ = perfdagChild("schedule", "--now", file, "--root", root, "--registry", reg).Run() // RED exits 1
	}
	out, err := perfdagChild("history", root, "--json").Output()
	if err != nil {
		t.Fatalf("history --json: %v", err)
	}
	var doc history.Document
	if err := json.Unmarshal(out, &doc); err != nil || len(doc.Campaigns) != 1 {
		t.Fatalf("history --json: %v\n%s", err, out)
	}
	h := doc.Campaigns[0]
	if len(h.Runs) != 10 {
		t.Fatalf("%d runs in the history, want 10", len(h.Runs))
	}
	verdicts := map[string]string{}
	var reds, marks int
	for _, r := range h.Runs {
		verdicts[r.ID] = r.Verdict
		if r.Verdict == "RED" {
			reds++
		}
	}
	for _, s := range h.Series {
		marks += len(s.Marks)
	}
	if reds == 0 || marks == 0 {
		t.Fatalf("the slowdown made %d RED runs and %d change points: the page would show neither", reds, marks)
	}

	addr := startServe(t, root)
	b.Navigate(addr + "/")
	if got := browser.Eval[string](b, `(document.querySelector('nav.histories a') || {}).pathname || ""`); got != "/h/drifty/" {
		t.Fatalf("the campaigns page links the history as %q", got)
	}
	b.Navigate(addr + "/h/drifty/")
	type chart struct {
		Cell, Load, Metric string
		Marks              []domMark
	}
	charts := browser.Eval[[]chart](b, `[...document.querySelectorAll("div.trend")].map(d => ({
		Cell: d.dataset.cell, Load: d.dataset.load, Metric: d.dataset.metric,
		Marks: [...d.querySelectorAll("g[data-kind]")].map(g => ({Kind: g.dataset.kind, Run: g.dataset.run || "", X: +g.dataset.x,
			Value: g.dataset.value || "", Lo: g.dataset.lo || "", Hi: g.dataset.hi || "", Verdict: g.dataset.verdict || "",
			Baseline: g.dataset.baseline || "", Before: g.dataset.before || "", After: g.dataset.after || "",
			Href: g.parentElement.tagName.toLowerCase() === "a" ? g.parentElement.getAttribute("href") : ""}))}))`)
	if len(charts) != len(h.Series) {
		t.Fatalf("%d charts on the page, %d series in history --json", len(charts), len(h.Series))
	}
	num := func(s string) float64 {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("a mark's number %q: %v", s, err)
		}
		return v
	}
	runIndex := map[string]int{}
	for i, r := range h.Runs {
		runIndex[r.ID] = i
	}
	// a chart per series, found by its series (series measured in fewer than half the runs
	// come after the rest, under a fold)
	byName := map[string]chart{}
	for _, c := range charts {
		byName[c.Cell+"\x00"+c.Load+"\x00"+c.Metric] = c
	}
	folded := browser.Eval[int](b, `document.querySelectorAll("details.sparse div.trend").length`)
	var intervals, baselines, sparse int
	for i, s := range h.Series {
		name := fmt.Sprintf("%s %s %s", s.Cell, s.Load, s.Metric)
		c, ok := byName[s.Cell+"\x00"+s.Load+"\x00"+s.Metric]
		if !ok {
			t.Fatalf("no chart of history's series %d, %s", i, name)
		}
		if s.Metric != history.KneeMetric && 2*len(s.Points) < len(h.Runs) {
			sparse++
		}
		var runs, changes []domMark
		for _, m := range c.Marks {
			switch m.Kind {
			case "run":
				runs = append(runs, m)
			case "change":
				changes = append(changes, m)
			case "baseline":
				baselines++
				r := h.Runs[m.X]
				var v schema.Verdict
				if _, err := campaigndir.ReadJSON(r.Dir, campaigndir.Verdict(), &v); err != nil || v.Diff == nil {
					t.Fatalf("%s: a baseline segment at run %s, whose verdict.json has no diff (%v)", name, r.ID, err)
				}
				want := baselineRow(v.Diff, s.Load, s.Metric)
				if want == nil || num(m.Baseline) != *want {
					t.Errorf("%s at run %s: baseline drawn at %s, verdict.json's diff row holds %v", name, r.ID, m.Baseline, want)
				}
				if m.Href != "/c/"+r.ID+"/verdict" {
					t.Errorf("%s: the baseline segment of run %s links %q", name, r.ID, m.Href)
				}
			}
		}
		if len(runs) != len(s.Points) {
			t.Fatalf("%s: %d run marks, %d points in history --json", name, len(runs), len(s.Points))
		}
		for j, p := range s.Points {
			m := runs[j]
			if m.Run != p.Run || num(m.Value) != p.Value || m.X != runIndex[p.Run] || m.Verdict != verdicts[p.Run] {
				t.Errorf("%s point %d: the page has run %s x %d value %s verdict %s; history --json run %s value %v verdict %s",
					name, j, m.Run, m.X, m.Value, m.Verdict, p.Run, p.Value, verdicts[p.Run])
			}
			if (p.Lo == nil) != (m.Lo == "") || p.Lo != nil && (num(m.Lo) != *p.Lo || num(m.Hi) != *p.Hi) {
				t.Errorf("%s point %d: interval [%s, %s] on the page, %v … %v in history --json", name, j, m.Lo, m.Hi, p.Lo, p.Hi)
			}
			if p.Lo != nil {
				intervals++
			}
			if m.Href != "/c/"+p.Run+"/" {
				t.Errorf("%s point %d links %q, want its run's page", name, j, m.Href)
			}
		}
		if len(changes) != len(s.Marks) {
			t.Fatalf("%s: %d change points drawn, %d in history --json", name, len(changes), len(s.Marks))
		}
		for j, cp := range s.Marks {
			m := changes[j]
			if m.Run != cp.Run || m.X != runIndex[cp.Run] || num(m.Before) != cp.Change.Before || num(m.After) != cp.Change.After {
				t.Errorf("%s change %d: the page marks run %s (%s → %s), history --json run %s (%v → %v)", name, j, m.Run, m.Before, m.After, cp.Run, cp.Change.Before, cp.Change.After)
			}
			if m.Href != "/c/"+cp.Run+"/verdict" {
				t.Errorf("%s change %d links %q, want the run's verdict", name, j, m.Href)
			}
		}
	}
	if folded != sparse || sparse == 0 {
		t.Errorf("%d charts under the fold, want the %d series measured in fewer than half the runs (some: the searches' probes)", folded, sparse)
	}
	if intervals == 0 || baselines == 0 {
		t.Errorf("%d run marks with an interval and %d baseline segments on the page: the test compared none", intervals, baselines)
	}
	b.ScreenshotFull("history-page")

	// a change point's link opens the run's verdict with its diff
	href := browser.Eval[string](b, `document.querySelector('g[data-kind="change"]').parentElement.getAttribute("href")`)
	b.Navigate(addr + href)
	run := strings.TrimSuffix(strings.TrimPrefix(href, "/c/"), "/verdict")
	shown := browser.Eval[string](b, `document.querySelector("h1 .verdict").textContent`)
	if shown != verdicts[run] {
		t.Errorf("the verdict page of %s shows %q, history says %s", run, shown, verdicts[run])
	}
	if n := browser.Eval[int](b, `document.querySelectorAll("table.diff tbody tr").length`); n == 0 {
		t.Errorf("the verdict page of %s shows no diff row", run)
	}
	b.Screenshot("history-verdict")
	b.Clean()
}

// baselineRow is the baseline value verdict.json's diff gives a history series' point.
func baselineRow(d *schema.BaselineDiff, load, metric string) *float64 {
	name := map[string]string{"output_tok_s": "throughput_toks_per_s"}[metric]
	if name == "" {
		name = metric
	}
	for _, r := range d.Rows {
		key := r.Load
		if key == "" && r.Concurrency > 0 {
			key = "c" + strconv.Itoa(r.Concurrency)
		}
		if r.Metric == name && key == load && r.Baseline != nil {
			return r.Baseline
		}
	}
	return nil
}
