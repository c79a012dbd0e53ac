package webui

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"image/color"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/perfdag/perfdag/engine/redact"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/analysis/changepoint"
	"github.com/perfdag/perfdag/steps/analysis/history"
	"github.com/perfdag/perfdag/steps/report/svgchart"
	strictpublish "github.com/perfdag/perfdag/steps/strict-publish"
)

// A served root that holds a scheduler's state — <root>/.schedule/history.jsonl, as perfdag
// schedule --root ROOT writes it, or history.jsonl in the root itself — has a history page per
// campaign the scheduler ran there: /h/<id>/. Its runs are read by the history package (the
// same reading and change points as perfdag history --json) from the served campaign
// directories only: a history line naming a directory serve does not serve is a run without
// results, nothing in that directory read.

// stateFiles are where a served root keeps its scheduler's history, relative to the root.
var stateFiles = []string{filepath.Join(".schedule", "history.jsonl"), "history.jsonl"}

// histEntry is one scheduled campaign's history: the id its address uses, its state directory
// and the campaign's name.
type histEntry struct {
	ID, State, Campaign string
}

// historyURL is a history page's address.
func historyURL(id string) string { return "/h/" + url.PathEscape(id) + "/" }

// stateDir is the scheduler state directory a served root holds, "" when none: its
// history.jsonl must be a regular file reached through no symlink (not the state directory
// either), as every file serve reads.
func stateDir(root string) string {
	r, err := os.OpenRoot(root)
	if err != nil {
		return ""
	}
	defer r.Close()
	for _, rel := range stateFiles {
		if d := filepath.Dir(rel); d != "." {
			if st, err := r.Lstat(d); err != nil || !st.IsDir() {
				continue
			}
		}
		if st, err := r.Lstat(rel); err == nil && st.Mode().IsRegular() {
			return filepath.Join(root, filepath.Dir(rel))
		}
	}
	return ""
}

// histories lists the scheduled campaigns of the served roots, read afresh. An id is the
// campaign's name, or when two state directories hold the same name, the name, "~" and the
// start of the SHA-256 of the state directory's absolute path.
func (s *Server) histories() []histEntry {
	var out []histEntry
	count := map[string]int{}
	for _, root := range s.opts.Roots {
		st := stateDir(root)
		if st == "" {
			continue
		}
		if a, err := filepath.Abs(st); err == nil {
			st = a
		}
		f, err := openServed(st, "history.jsonl")
		if err != nil {
			continue
		}
		names, err := history.Campaigns(f)
		f.Close()
		if err != nil {
			continue
		}
		for _, n := range names {
			if slices.ContainsFunc(out, func(e histEntry) bool { return e.State == st && e.Campaign == n }) {
				continue
			}
			out = append(out, histEntry{ID: n, State: st, Campaign: n})
			count[n]++
		}
	}
	for i, e := range out {
		if count[e.Campaign] > 1 {
			sum := sha256.Sum256([]byte(e.State))
			out[i].ID = e.Campaign + "~" + hex.EncodeToString(sum[:])[:12]
		}
	}
	return out
}

// readHistory reads a scheduled campaign's history as perfdag history does, from the served
// campaign directories only.
func (s *Server) readHistory(r *http.Request, e histEntry) (*history.History, map[string]entry, error) {
	served := map[string]entry{}
	for _, c := range s.campaigns() {
		served[c.Dir] = c
	}
	allow := func(dir string) error {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return err
		}
		if _, ok := served[abs]; !ok {
			return fmt.Errorf("%s is not a campaign directory this server serves", filepath.Base(abs))
		}
		if err := checkFiles(abs); err != nil {
			return err
		}
		if st, err := os.Lstat(filepath.Join(abs, campaigndir.Verdict())); err == nil && !st.Mode().IsRegular() {
			return fmt.Errorf("%s is %w", campaigndir.Verdict(), errNotRegular)
		}
		return nil
	}
	hs, err := history.FromDirs(r.Context(), e.State, "", history.DirOptions{Campaign: e.Campaign, Open: s.opts.Service.Open,
		ID: strictpublish.CampaignID, Allow: allow, Annotate: []history.Annotator{history.ChangePoints(changepoint.Options{})}})
	if err != nil {
		return nil, nil, err
	}
	byRun := map[string]entry{}
	h := &history.History{Campaign: e.Campaign}
	for _, x := range hs {
		if x.Campaign == e.Campaign {
			h = x
		}
	}
	for _, run := range h.Runs {
		if run.Dir == "" {
			continue
		}
		if abs, err := filepath.Abs(run.Dir); err == nil {
			if c, ok := served[abs]; ok && allow(abs) == nil {
				byRun[run.ID] = c
			}
		}
	}
	return h, byRun, nil
}

// verdictColor is a run's marker: GREEN green, RED red, anything else (FAILED, NO_BASELINE …) grey.
func verdictColor(v string) color.Color {
	switch v {
	case "GREEN":
		return color.RGBA{0x1f, 0x7a, 0x3a, 0xff}
	case "RED":
		return color.RGBA{0xb3, 0x26, 0x1e, 0xff}
	}
	return color.RGBA{0x9a, 0xa0, 0xa6, 0xff}
}

// histChart is one series' trend on the page.
type histChart struct {
	Cell, Load, Metric string
	SVG                template.HTML
}

// histRun is one run's line in the page's table.
type histRun struct {
	history.Run
	URL, VerdictURL string // the run's campaign page and its verdict page ("" when not served)
}

// historyPage is a scheduled campaign's history: each series' trend, then the runs.
func (s *Server) historyPage(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	i := slices.IndexFunc(s.histories(), func(e histEntry) bool { return e.ID == id })
	if i < 0 {
		s.fail(w, http.StatusNotFound, fmt.Errorf("no served scheduled campaign is called %q", id))
		return
	}
	e := s.histories()[i]
	h, byRun, err := s.readHistory(r, e)
	if err != nil {
		s.fail(w, http.StatusInternalServerError, fmt.Errorf("history of %s: %w", e.Campaign, errors.New(redact.String(err.Error()))))
		return
	}
	at := map[string]int{}
	labels := make([]string, len(h.Runs))
	baselines := make([]map[history.Key]float64, len(h.Runs))
	var runs []histRun
	for ri, run := range h.Runs {
		at[run.ID] = ri
		labels[ri] = runLabel(run.Started, "01-02 15:04")
		hr := histRun{Run: run}
		if c, ok := byRun[run.ID]; ok {
			hr.URL, hr.VerdictURL = campaignURL(c.ID), campaignURL(c.ID)+"verdict"
			var v schema.Verdict
			if b, err := readServed(c.Dir, campaigndir.Verdict(), ""); err == nil && campaigndir.DecodeStrict(campaigndir.Verdict(), b, &v) == nil {
				baselines[ri] = history.BaselineValues(&v)
			}
		}
		runs = append(runs, hr)
	}
	if hasDup(labels) { // runs minutes apart (fired by hand): their seconds tell them apart
		for ri, run := range h.Runs {
			labels[ri] = runLabel(run.Started, "15:04:05")
		}
	}
	// a series measured in fewer than half the runs (a point only some nights' searches probed)
	// is drawn under a fold, so the series every run measured lead the page
	var charts, sparse []histChart
	for _, se := range h.Series {
		c := histChart{Cell: se.Cell, Load: se.Load, Metric: se.Metric, SVG: trendOf(se, h, at, labels, baselines, byRun, -1)}
		if knee := se.Metric == history.KneeMetric || se.Metric == history.KneeRateMetric; !knee && 2*len(se.Points) < len(h.Runs) {
			sparse = append(sparse, c)
			continue
		}
		charts = append(charts, c)
	}
	slices.Reverse(runs) // the table reads newest first
	s.render(w, "history.html", map[string]any{"Title": "history of " + e.Campaign, "E": e, "H": h, "Charts": charts, "Sparse": sparse, "Runs": runs})
}

// trendOf draws one series over the history's runs.
func trendOf(se history.Series, h *history.History, at map[string]int, labels []string, baselines []map[history.Key]float64,
	byRun map[string]entry, highlight int) template.HTML {
	name := se.Metric + " · " + se.Cell
	if se.Load != "" {
		name += " " + se.Load
	}
	t := svgchart.Trend{Title: name, YLabel: se.Metric, Runs: labels, Color: palette[0], Empty: "no run measured it"}
	for _, p := range se.Points {
		x := at[p.Run]
		run := h.Runs[x]
		tip := fmt.Sprintf("run %s (%s)\n%s = %s", p.Run, run.Started, se.Metric, exact(p.Value))
		if p.Lo != nil && p.Hi != nil {
			tip += fmt.Sprintf("\n95 %%: %s … %s", exact(*p.Lo), exact(*p.Hi))
		}
		tip += "\nverdict " + run.Verdict
		tp := svgchart.TrendPoint{X: x, Y: p.Value, Lo: p.Lo, Hi: p.Hi, Color: verdictColor(run.Verdict), Highlight: x == highlight,
			Tip: tip, Data: [][2]string{{"run", p.Run}, {"verdict", run.Verdict}}}
		if c, ok := byRun[p.Run]; ok {
			tp.Href = campaignURL(c.ID)
		}
		t.Points = append(t.Points, tp)
	}
	for ri, b := range baselines {
		if v, ok := b[history.Key{Cell: se.Cell, Load: se.Load, Metric: se.Metric}]; ok {
			ref := svgchart.TrendRef{X: ri, Y: v, Tip: fmt.Sprintf("baseline %s (judging run %s) = %s", h.Runs[ri].Baseline, h.Runs[ri].ID, exact(v))}
			if c, ok := byRun[h.Runs[ri].ID]; ok {
				ref.Href = campaignURL(c.ID) + "verdict"
			}
			t.Baseline = append(t.Baseline, ref)
		}
	}
	for _, m := range se.Marks {
		x, ok := at[m.Run]
		if !ok {
			continue
		}
		tm := svgchart.TrendMark{X: x, Worse: m.Worse, Tip: m.Detail, Data: [][2]string{{"run", m.Run}}}
		if m.Change != nil {
			tm.Data = append(tm.Data, [2]string{"before", exact(m.Change.Before)}, [2]string{"after", exact(m.Change.After)})
		}
		if c, ok := byRun[m.Run]; ok {
			tm.Href = campaignURL(c.ID) + "verdict"
		}
		t.Marks = append(t.Marks, tm)
	}
	return t.SVG()
}

// runLabel is a run's start as the x axis shows it, in layout, UTC.
func runLabel(started, layout string) string {
	if t, err := time.Parse(time.RFC3339Nano, started); err == nil {
		return t.UTC().Format(layout)
	}
	return started
}

// hasDup says whether two labels are the same.
func hasDup(labels []string) bool {
	seen := map[string]bool{}
	for _, l := range labels {
		if seen[l] {
			return true
		}
		seen[l] = true
	}
	return false
}

// verdict shows a run's verdict.json: its verdict, what judged it, its drift findings and the
// diff against the baseline it was judged by, as the scheduler recorded them.
func (s *Server) verdict(w http.ResponseWriter, r *http.Request) {
	e, ok := s.open(w, r)
	if !ok {
		return
	}
	b, err := readServed(e.Dir, campaigndir.Verdict(), "")
	if errors.Is(err, fs.ErrNotExist) {
		s.fail(w, http.StatusNotFound, fmt.Errorf("campaign %s has no verdict.json: no scheduler judged it", e.ID))
		return
	}
	var v schema.Verdict
	if err == nil {
		err = campaigndir.DecodeStrict(campaigndir.Verdict(), b, &v)
	}
	if err != nil {
		s.fail(w, http.StatusConflict, fmt.Errorf("campaign %s: %w", e.ID, errors.New(redact.String(err.Error()))))
		return
	}
	var diffs []diffView
	if v.Diff != nil {
		diffs = append(diffs, diffView{Title: v.Diff.CurrentCell, Diff: v.Diff})
	}
	var hist string
	for _, h := range s.histories() {
		if h.Campaign == v.Campaign {
			hist = historyURL(h.ID)
		}
	}
	s.render(w, "verdict.html", map[string]any{"Title": "verdict of " + e.ID, "ID": e.ID, "V": v, "Diffs": diffs, "History": hist})
}
