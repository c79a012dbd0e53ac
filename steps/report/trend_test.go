package report_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/analysis/history"
	"github.com/perfdag/perfdag/steps/report"
	"github.com/perfdag/perfdag/steps/testkit"
)

// trendInput is partialInput as a scheduled run, the last of eight whose TTFT at c1 rises from
// the fifth (a change point there, a drift RED at the eighth), with intervals and a knee.
func trendInput(t *testing.T) report.Input {
	in := partialInput()
	in.Campaign.Schedule = &schema.Schedule{Cron: "0 3 * * *", Baseline: "b"}
	var runs []history.Run
	for i := range 8 {
		ttft, thr := 100.0, 800.0+float64(i%3)*10
		if i >= 4 {
			ttft, thr = 130, 760
		}
		row := schema.HistoryRow{Campaign: "aa-partial", Started: fmt.Sprintf("2026-12-0%dT03:00:00Z", i+1), Verdict: "GREEN",
			Knees: []schema.Knee{{Cell: "aa-1k", Knee: 10 + i%2, KneeLo: 8, KneeHi: 12}, {Cell: "aa-10k", Over: "rate", KneeRate: 2.5 + float64(i%2)/10, KneeRateLo: 2.3, KneeRateHi: 2.7}}}
		if i == 7 {
			row.Verdict, row.DriftChanges = "RED", 1
		}
		runs = append(runs, history.Run{ID: fmt.Sprintf("2026120%dT030000Z-aa-partial", i+1), HistoryRow: row, Points: []history.Point{
			{Cell: "aa-1k", Load: "c1", Metrics: map[string]history.Value{"output_tok_s": {Value: thr, Lo: f(thr - 15), Hi: f(thr + 15)}, "ttft_p50_ms": {Value: ttft, Lo: f(ttft - 4), Hi: f(ttft + 5)}}},
			{Cell: "aa-1k", Load: "c10", Metrics: map[string]history.Value{"output_tok_s": {Value: 5 * thr}, "ttft_p50_ms": {Value: 3 * ttft}}},
		}})
	}
	mark := func(h *history.History) error {
		for i := range h.Series {
			if s := &h.Series[i]; s.Load == "c1" && s.Metric == "ttft_p50_ms" {
				m := history.Mark{Kind: history.KindChangePoint, Run: h.Runs[4].ID, Cell: s.Cell, Load: s.Load, Metric: s.Metric, Detail: "+30 %", Worse: true}
				s.Marks, h.Runs[4].Marks = append(s.Marks, m), append(h.Runs[4].Marks, m)
			}
		}
		return nil
	}
	h, err := history.Build("aa-partial", runs, mark)
	if err != nil {
		t.Fatal(err)
	}
	in.Trend = &report.Trend{History: h, Run: runs[7].ID}
	return in
}

// TestTrendPage: a judged scheduled run's report has the trend page, last in the contents, with
// every run of the window in its table (verdict, drift changes, the change point at the fifth);
// the same run not judged yet lists the page with why it has none; an unscheduled campaign's
// contents leave it out.
func TestTrendPage(t *testing.T) {
	bin := testkit.NeedTool(t, "pdftotext")
	in := trendInput(t)
	contents := report.Contents(in)
	if p := contents[len(contents)-1]; p.Title != report.TitleTrend || !p.HasData || !p.Listed() {
		t.Fatalf("last page %+v, want the trend page with data", p)
	}
	out := filepath.Join(t.TempDir(), "r.pdf")
	if err := report.Render(context.Background(), in, out); err != nil {
		t.Fatal(err)
	}
	b, err := exec.Command(bin, "-layout", out, "-").Output()
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	i := strings.LastIndex(text, report.TitleTrend)
	if i < 0 {
		t.Fatalf("no trend page:\n%s", text)
	}
	page := text[i:]
	for _, want := range []string{"over its last 8 scheduled runs, ending at this one (run 8,",
		"5   20261205T030000Z-aa-partial   2026-12-05T03:00:00Z   GREEN   0   aa-1k c1 ttft_p50_ms",
		"8   20261208T030000Z-aa-partial   2026-12-08T03:00:00Z   RED     1"} {
		if !strings.Contains(strings.Join(strings.Fields(page), " "), strings.Join(strings.Fields(want), " ")) {
			t.Errorf("trend page lacks %q:\n%s", want, page)
		}
	}
	if os.Getenv("PERFDAG_TREND_PDF") != "" {
		_ = os.WriteFile(os.Getenv("PERFDAG_TREND_PDF"), mustRead(t, out), 0o644)
	}
	// the HTML sink draws the same charts: the rate search's knee in req/s among them
	htmlOut := filepath.Join(t.TempDir(), "r.html")
	if err := report.RenderHTML(context.Background(), in, htmlOut); err != nil {
		t.Fatal(err)
	}
	html := string(mustRead(t, htmlOut))
	for _, want := range []string{"aa-10k: knee (req/s)", `data-x="2" data-y="2.6"`, "aa-1k: TTFT p50 (ms)", "95 % interval: [126, 135]"} {
		if !strings.Contains(html, want) {
			t.Errorf("the HTML trend page lacks %q", want)
		}
	}
	in.Trend = nil
	p := report.Contents(in)[len(contents)-1]
	if p.HasData || !p.Listed() || p.Missing != "A scheduled run's trend is drawn when its verdict is written (perfdag report DIR re-renders it)." {
		t.Errorf("not judged yet: %+v", p)
	}
	in.Campaign.Schedule = nil
	if slices.ContainsFunc(report.Contents(in), func(p report.PageInfo) bool { return p.Title == report.TitleTrend && p.Listed() }) {
		t.Error("an unscheduled campaign's contents list the trend page")
	}
}
