package webui

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// judged gives a finished campaign directory the verdict.json a scheduler writes, with one
// diff row (the baseline's TTFT p50 at c2) when base is not nil.
func judged(t testing.TB, dir, campaign, verdict string, started time.Time, base *float64) {
	t.Helper()
	v := schema.Verdict{Schema: "verdict_v1", Campaign: campaign, Slot: started.Format(time.RFC3339), Trigger: "manual",
		Started: started.Format(time.RFC3339), Ended: started.Format(time.RFC3339), Outcome: "succeeded", Verdict: verdict}
	if base != nil {
		v.Diff = &schema.BaselineDiff{Schema: "baseline_diff_v1", Verdict: verdict, BaselineName: "b", CurrentCell: "aa-1k",
			Rows: []schema.DiffRow{{Concurrency: 2, Metric: "ttft_p50_ms", Baseline: base, Verdict: verdict, Unit: "%"}}}
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, campaigndir.Verdict()), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// scheduled writes root/.schedule/history.jsonl naming dirs, one line each, as runs of campaign.
func scheduled(t testing.TB, root, campaign string, dirs ...string) {
	t.Helper()
	var b strings.Builder
	for i, d := range dirs {
		l, _ := json.Marshal(map[string]any{"campaign": campaign, "slot": time.Date(2026, 12, 1+i, 3, 0, 0, 0, time.UTC).Format(time.RFC3339),
			"trigger": "manual", "outcome": "succeeded", "verdict": "GREEN", "dir": d})
		b.Write(append(l, '\n'))
	}
	if err := os.MkdirAll(filepath.Join(root, ".schedule"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".schedule", "history.jsonl"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The history page reads the runs serve serves and nothing else: a history line naming a
// directory outside the served roots is a run without results, none of its files read or
// linked; a hostile campaign name is text; each served run's marks link to its pages; the
// baseline's value is drawn from the run's verdict.json.
func TestHistoryPageServedRunsOnly(t *testing.T) {
	root := t.TempDir()
	hostile := `ev<img src=x onerror=alert(1)>il`
	base := 7.25
	var dirs []string
	ids := []string{"20261201T030000Z-" + hostile, "20261202T030000Z-" + hostile} // as the scheduler names runs
	for i, name := range ids {
		d := finished(t, root, name)
		judged(t, d, hostile, []string{"GREEN", "RED"}[i], time.Date(2026, 12, 1+i, 3, 0, 0, 0, time.UTC), &base)
		dirs = append(dirs, d)
	}
	outside := finished(t, t.TempDir(), "elsewhere")
	judged(t, outside, hostile, "GREEN", time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC), nil)
	scheduled(t, root, hostile, append(dirs, outside)...)
	ts := serve(t, Options{Roots: []string{root}})

	code, list := get(t, ts, "/")
	if code != http.StatusOK || !strings.Contains(list, `href="/h/ev%3Cimg%20src=x%20onerror=alert%281%29%3Eil/"`) {
		t.Fatalf("the campaigns page (%d) does not link the history:\n%.2000s", code, list)
	}
	code, page := get(t, ts, "/h/ev%3Cimg%20src=x%20onerror=alert%281%29%3Eil/")
	if code != http.StatusOK {
		t.Fatalf("history page: %d\n%.2000s", code, page)
	}
	if strings.Contains(page, "<img src=x") {
		t.Errorf("the campaign's name reached the page as markup")
	}
	if !strings.Contains(page, "elsewhere is not a campaign directory this server serves") || strings.Contains(page, `href="/c/elsewhere/`) {
		t.Errorf("the run outside the served root is not refused (or is linked)")
	}
	for _, id := range ids {
		if u := campaignURL(id); !strings.Contains(page, `<a href="`+esc(u)+`"><g class="pt"`) || !strings.Contains(page, `<a href="`+esc(u)+`verdict">`) {
			t.Errorf("%s's marks do not link its page and its verdict", id)
		}
	}
	if !strings.Contains(page, `data-baseline="7.25"`) {
		t.Errorf("the baseline's TTFT p50 at c2 (7.25 in verdict.json) is not drawn")
	}
	if strings.Count(page, `data-verdict="RED"`) == 0 {
		t.Errorf("the second run's RED verdict colours no mark")
	}

	// the run's own campaign (tiny) scheduled in the same state: its page links that history
	l, _ := json.Marshal(map[string]any{"campaign": "tiny", "trigger": "manual", "verdict": "RED", "dir": dirs[1]})
	f, err := os.OpenFile(filepath.Join(root, ".schedule", "history.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.Write(append(l, '\n'))
	f.Close()
	code, c := get(t, ts, campaignURL(ids[1]))
	if code != http.StatusOK || !strings.Contains(c, `<a href="/h/tiny/">history of tiny</a>`) || !strings.Contains(c, `<a href="`+esc(campaignURL(ids[1]))+`verdict">verdict and diff</a>`) {
		t.Errorf("the run's page (%d) links neither its history nor its verdict", code)
	}
	code, v := get(t, ts, campaignURL(ids[1])+"verdict")
	if code != http.StatusOK || !strings.Contains(v, `data-verdict="RED"`) || !strings.Contains(v, `data-exact="7.25"`) || strings.Contains(v, "<img src=x") {
		t.Errorf("verdict page: %d\n%.3000s", code, v)
	}
	if code, _ := get(t, ts, "/h/nosuch/"); code != http.StatusNotFound {
		t.Errorf("an unknown history: %d, want 404", code)
	}
}

// A state directory reached through a symlink, or a history.jsonl that is not a regular file,
// is no history (as every file serve reads); a run without verdict.json has no verdict page.
func TestHistoryStateNotRegular(t *testing.T) {
	root := t.TempDir()
	finished(t, root, "tiny-1")
	elsewhere := t.TempDir()
	scheduled(t, elsewhere, "tiny", filepath.Join(root, "tiny-1"))
	if err := os.Symlink(filepath.Join(elsewhere, ".schedule"), filepath.Join(root, ".schedule")); err != nil {
		t.Fatal(err)
	}
	root2 := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root2, ".schedule"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(elsewhere, ".schedule", "history.jsonl"), filepath.Join(root2, ".schedule", "history.jsonl")); err != nil {
		t.Fatal(err)
	}
	ts := serve(t, Options{Roots: []string{root, root2}})
	if code, page := get(t, ts, "/"); code != http.StatusOK || strings.Contains(page, "/h/") {
		t.Errorf("a symlinked state is listed as a history (%d)", code)
	}
	if code, _ := get(t, ts, "/h/tiny/"); code != http.StatusNotFound {
		t.Errorf("a symlinked state's history answered %d, want 404", code)
	}
	if code, _ := get(t, ts, "/c/tiny-1/verdict"); code != http.StatusNotFound {
		t.Errorf("a run without verdict.json: verdict page %d, want 404", code)
	}
}
