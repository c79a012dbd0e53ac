package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/analysis/history"
	"github.com/perfdag/perfdag/steps/report"
	"github.com/perfdag/perfdag/steps/report/svgchart"
	"github.com/perfdag/perfdag/steps/testkit"
)

// TestScheduledRunReportHasTrendPage: a scheduled campaign fired six times with schedule --now
// (the last three runs 15 % slower). The campaign's own render (a run not judged yet) lists the
// trend page with the one line saying why it has none; once judged, each run's report.pdf is
// re-rendered with the trend page: its runs table holds every run of the window with the
// verdict and drift changes perfdag history --json gives, the HTML report's charts carry each
// run's throughput, and perfdag report DIR of the third run draws runs 1-3 only (the window
// ends at the run).
func TestScheduledRunReportHasTrendPage(t *testing.T) {
	if testing.Short() {
		t.Skip("fires a scheduled campaign six times (~30 s)")
	}
	pdftotext := testkit.NeedTool(t, "pdftotext")
	work := t.TempDir()
	file, reg, root := filepath.Join(work, "drifty.yaml"), filepath.Join(work, "reg"), filepath.Join(work, "runs")
	testkit.WriteFile(t, file, driftCampaign(1))
	base := filepath.Join(work, "base")
	if out, err := perfdagChild("run", file, "--out", base).CombinedOutput(); err != nil {
		t.Fatalf("baseline run: %v\n%s", err, out)
	}
	text := func(pdf string) string {
		t.Helper()
		out, err := exec.Command(pdftotext, pdf, "-").Output()
		if err != nil {
			t.Fatalf("pdftotext %s: %v", pdf, err)
		}
		return strings.Join(strings.Fields(string(out)), " ")
	}
	note := strings.Join(strings.Fields("A scheduled run's trend is drawn when its verdict is written (perfdag report DIR re-renders it)."), " ")
	if got := text(campaigndir.Abs(base, campaigndir.Report())); !strings.Contains(got, report.TitleTrend) || !strings.Contains(got, note) {
		t.Fatalf("the campaign's own report (not judged) lacks the trend page's line %q:\n%s", note, got)
	}
	if out, err := perfdagChild("baseline", "record", base, "--name", "drifty-a", "--registry", reg).CombinedOutput(); err != nil {
		t.Fatalf("record: %v\n%s", err, out)
	}
	for i, s := range []float64{1, 1, 1, 1.15, 1.15, 1.15} {
		testkit.WriteFile(t, file, driftCampaign(s))
		out, err := perfdagChild("schedule", "--now", file, "--root", root, "--registry", reg, "--json").CombinedOutput()
		if _, ok := err.(*exec.ExitError); err != nil && !ok {
			t.Fatalf("run %d: %v\n%s", i+1, err, out)
		}
	}
	h := readHistory(t, "history", file, "--root", root, "--json").Campaigns[0]
	if len(h.Runs) != 6 {
		t.Fatalf("history holds %d runs, want 6", len(h.Runs))
	}
	checkTable := func(pdf string, runs []history.Run, this string) {
		t.Helper()
		got := text(pdf)
		i := strings.Index(got, report.TitleTrend+" ")
		if i < 0 || strings.Contains(got, note) {
			t.Fatalf("%s: no trend page:\n%s", pdf, got)
		}
		page := got[i:]
		if !strings.Contains(page, "over its last "+strconv.Itoa(len(runs))+" scheduled runs, ending at this one (run "+strconv.Itoa(len(runs))+",") {
			t.Errorf("%s: the trend page does not name its %d-run window ending at this run:\n%s", pdf, len(runs), page)
		}
		for n, r := range runs {
			row := strings.Join([]string{strconv.Itoa(n + 1), r.ID, r.Started, r.Verdict, strconv.Itoa(r.DriftChanges)}, " ")
			if !strings.Contains(page, row) {
				t.Errorf("%s: the runs table lacks %q:\n%s", pdf, row, page)
			}
		}
		if strings.Contains(page, runs[len(runs)-1].ID) && runs[len(runs)-1].ID != this {
			t.Errorf("the page is not about %s", this)
		}
	}
	last := h.Runs[5]
	checkTable(campaigndir.Abs(last.Dir, campaigndir.Report()), h.Runs, last.ID)
	// the HTML sink draws the same charts: each run's throughput at c1 is a point of the page
	htmlOut := filepath.Join(work, "last.html")
	if out, err := perfdagChild("report", last.Dir, "--html", htmlOut).CombinedOutput(); err != nil {
		t.Fatalf("report --html: %v\n%s", err, out)
	}
	b, err := os.ReadFile(htmlOut)
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	var found int
	for _, s := range h.Series {
		if s.Cell != "a" || s.Load != "c1" || s.Metric != "output_tok_s" {
			continue
		}
		for n, p := range s.Points {
			found++
			if want := `data-x="` + strconv.Itoa(n+1) + `" data-y="` + svgchart.Exact(p.Value) + `"`; !strings.Contains(html, want) {
				t.Errorf("the HTML trend chart lacks run %d's throughput %v (%s)", n+1, p.Value, want)
			}
		}
	}
	if found != 6 || !strings.Contains(html, report.TitleTrend) {
		t.Fatalf("history has %d throughput points at a/c1, want 6; trend page in the HTML: %v", found, strings.Contains(html, report.TitleTrend))
	}
	// perfdag report DIR of the third run: the window ends at it
	if out, err := perfdagChild("report", h.Runs[2].Dir).CombinedOutput(); err != nil {
		t.Fatalf("report DIR: %v\n%s", err, out)
	}
	third := text(campaigndir.Abs(h.Runs[2].Dir, campaigndir.Report()))
	checkTable(campaigndir.Abs(h.Runs[2].Dir, campaigndir.Report()), h.Runs[:3], h.Runs[2].ID)
	if strings.Contains(third, h.Runs[3].ID) {
		t.Errorf("the third run's trend shows the fourth run %s", h.Runs[3].ID)
	}
}
