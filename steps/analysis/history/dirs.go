package history

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/analysis/atlas"
)

// ErrNoRuns says a folder holds no scheduled campaign's runs at all: no history file and no
// run directory with a verdict.
var ErrNoRuns = errors.New("not a scheduled campaign's runs")

// historyFile is the scheduler's history in its state directory (baseline.HistoryFile).
const historyFile = "history.jsonl"

// DirOptions say how runs are read from campaign directories.
type DirOptions struct {
	// Campaign keeps one campaign's runs ("" keeps every campaign's).
	Campaign string
	// Open opens a run's directory as a finished campaign (the campaign service's Open).
	Open func(dir string) (campaigndir.Finished, error)
	// ID is the run's campaign id, as publishing names it (strictpublish.CampaignID).
	ID func(dir, slug string) string
	// Annotate runs over each campaign's built history.
	Annotate []Annotator
	// Extra is a run directory being judged now (its verdict.json written, its history line
	// not yet): read after the state directory's lines, as the newest run.
	Extra string
	// Allow, when set, vets a run directory a history line names before anything in it is
	// read: a directory it refuses is a run from its line alone, its note the refusal (serve
	// reads only the directories it serves).
	Allow func(dir string) error
}

// line is what history reads of a history.jsonl line (baseline.HistoryLine).
type line struct {
	Campaign string `json:"campaign"`
	Slot     string `json:"slot"`
	Trigger  string `json:"trigger"`
	Outcome  string `json:"outcome"`
	Verdict  string `json:"verdict"`
	Dir      string `json:"dir"`
	Baseline string `json:"baseline"`
	Red      int    `json:"red_rows"`
	Noise    int    `json:"within_noise_rows"`
	Error    string `json:"error"`
	OnRed    string `json:"on_red"`
	Time     string `json:"time"`
	Drift    int    `json:"drift_changes"`
}

// Locate says what a directory argument is: a scheduler state directory (it holds
// history.jsonl), the root a scheduler wrote its runs into (its .schedule holds it), or a
// folder of run directories (each holding verdict.json) with no history file.
func Locate(dir string) (stateDir string, err error) {
	for _, d := range []string{dir, filepath.Join(dir, ".schedule")} {
		if _, err := os.Stat(filepath.Join(d, historyFile)); err == nil {
			return d, nil
		}
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("%s: not a directory (want a scheduler state directory, the root holding its runs, or a campaign file with schedule:)", dir)
	}
	return "", nil
}

// FromDirs reads the history of the runs a scheduler recorded in stateDir's history.jsonl —
// or, with stateDir "", of every run directory directly under folder that holds a verdict.json
// — one History per campaign, by campaign name.
func FromDirs(ctx context.Context, stateDir, folder string, o DirOptions) ([]*History, error) {
	lines, err := readLines(stateDir, folder)
	if err != nil {
		return nil, err
	}
	if o.Extra != "" {
		var v schema.Verdict
		found, err := campaigndir.ReadJSON(o.Extra, campaigndir.Verdict(), &v)
		if err != nil || !found {
			return nil, fmt.Errorf("the run being judged, %s: no verdict.json (%v)", o.Extra, err)
		}
		lines = append(lines, line{Campaign: v.Campaign, Dir: o.Extra, Slot: v.Slot, Trigger: v.Trigger,
			Outcome: v.Outcome, Verdict: v.Verdict, Time: v.Started})
	}
	byCampaign := map[string][]Run{}
	var names []string
	seen := map[string]int{} // run directory → index in its campaign's runs
	for _, l := range lines {
		if o.Campaign != "" && l.Campaign != o.Campaign {
			continue
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		r := o.run(ctx, l)
		if _, ok := byCampaign[l.Campaign]; !ok {
			names = append(names, l.Campaign)
		}
		key := l.Campaign + "\x00" + r.Dir
		if i, dup := seen[key]; dup && r.Dir != "" {
			byCampaign[l.Campaign][i] = r // a directory recorded twice: its latest verdict
			continue
		}
		seen[key] = len(byCampaign[l.Campaign])
		byCampaign[l.Campaign] = append(byCampaign[l.Campaign], r)
	}
	slices.Sort(names)
	out := make([]*History, 0, len(names))
	for _, n := range names {
		h, err := Build(n, byCampaign[n], o.Annotate...)
		if err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, nil
}

// readLines reads stateDir's history.jsonl, or makes lines of the verdicts under folder.
func readLines(stateDir, folder string) ([]line, error) {
	if stateDir == "" {
		return verdictLines(folder)
	}
	path := filepath.Join(stateDir, historyFile)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read the schedule's history: %w", err)
	}
	defer f.Close()
	return parseLines(f, path)
}

// parseLines reads the lines of a history.jsonl (path names it in errors).
func parseLines(f io.Reader, path string) ([]line, error) {
	var out []line
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return out, nil
}

// Campaigns are the campaigns a scheduler's history.jsonl (read from f) recorded runs of, in
// the order each first appears: what a viewer lists before it reads any run.
func Campaigns(f io.Reader) ([]string, error) {
	lines, err := parseLines(f, historyFile)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, l := range lines {
		if l.Campaign != "" && !slices.Contains(out, l.Campaign) {
			out = append(out, l.Campaign)
		}
	}
	return out, nil
}

// verdictLines lists the run directories under folder holding a verdict.json.
func verdictLines(folder string) ([]line, error) {
	entries, err := os.ReadDir(folder)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", folder, err)
	}
	var out []line
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir, err := filepath.Abs(filepath.Join(folder, e.Name()))
		if err != nil {
			return nil, err
		}
		var v schema.Verdict
		found, err := campaigndir.ReadJSON(dir, campaigndir.Verdict(), &v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", dir, err)
		}
		if found {
			out = append(out, line{Campaign: v.Campaign, Dir: dir, Slot: v.Slot, Trigger: v.Trigger, Outcome: v.Outcome, Verdict: v.Verdict})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s holds no history.jsonl, no .schedule/history.jsonl and no run directory with a verdict.json: %w", folder, ErrNoRuns)
	}
	return out, nil
}

// run reads one history line's run: from its directory when it has a verdict.json and reads
// as a finished campaign, else from the line alone.
func (o DirOptions) run(ctx context.Context, l line) Run {
	fromLine := func(note string) Run {
		row := schema.HistoryRow{Schema: schema.SchemaHistoryRow, Campaign: l.Campaign, Slot: l.Slot, Trigger: l.Trigger,
			Outcome: l.Outcome, Verdict: l.Verdict, Baseline: l.Baseline, RedRows: l.Red, NoiseRows: l.Noise,
			Error: l.Error, OnRed: l.OnRed, Dir: l.Dir, Started: l.Time, Ended: l.Time, DriftChanges: l.Drift}
		id := l.Slot
		if l.Dir != "" {
			id = o.ID(l.Dir, l.Campaign)
		}
		return Run{ID: id, HistoryRow: row, Points: []Point{}, Note: note}
	}
	if l.Dir == "" {
		return fromLine("the run made no campaign directory")
	}
	if o.Allow != nil {
		if err := o.Allow(l.Dir); err != nil {
			o.ID = func(dir, _ string) string { return filepath.Base(filepath.Clean(dir)) } // nothing of a refused directory is read, not even run.json
			return fromLine(err.Error())
		}
	}
	var v schema.Verdict
	found, err := campaigndir.ReadJSON(l.Dir, campaigndir.Verdict(), &v)
	switch {
	case errors.Is(err, fs.ErrNotExist) || (err == nil && !found):
		return fromLine("no verdict.json in " + l.Dir)
	case err != nil:
		return fromLine(err.Error())
	}
	id := o.ID(l.Dir, l.Campaign)
	fin, err := o.Open(l.Dir)
	if err != nil {
		r := Run{ID: id, HistoryRow: schema.NewHistoryRow(&v, l.Dir, nil), Points: []Point{}}
		r.Note = "no results: " + err.Error()
		return r
	}
	row, err := RowOf(fin)
	var rows []schema.AtlasRow
	if err == nil && fin.Evidence.Atlas != "" {
		rows, err = atlas.ReadAll(ctx, fin.Files, fin.Evidence.Atlas)
	}
	if err != nil {
		r := Run{ID: id, HistoryRow: schema.NewHistoryRow(&v, l.Dir, nil), Points: []Point{}}
		r.Note = "no results: " + err.Error()
		return r
	}
	return newRun(id, *row, versionsOf(fin.Spec.Source, rows), rows)
}

// RowOf is a judged run's history row — its verdict.json (written by the scheduler after the
// run, so read as it is) with its searched cells' knees from their sweeps; nil when the directory holds no verdict (not a scheduled run, or published by
// its own pipeline before the scheduler judged it). Publishing puts the same row in the lake.
func RowOf(fin campaigndir.Finished) (*schema.HistoryRow, error) {
	var v schema.Verdict
	found, err := campaigndir.ReadJSON(fin.Dir, campaigndir.Verdict(), &v)
	if err != nil {
		return nil, fmt.Errorf("read the run's verdict: %w", err)
	}
	if !found {
		return nil, nil
	}
	sweeps := make([]schema.SweepResult, 0, len(fin.Evidence.Sweeps))
	for _, p := range fin.Evidence.Sweeps {
		var sw schema.SweepResult
		if err := fin.Files.JSON(p, &sw); err != nil {
			return nil, err
		}
		sweeps = append(sweeps, sw)
	}
	abs, err := filepath.Abs(fin.Dir)
	if err != nil {
		return nil, fmt.Errorf("campaign directory %s: %w", fin.Dir, err)
	}
	row := schema.NewHistoryRow(&v, abs, sweeps)
	if info, err := campaigndir.ReadInfo(fin.Dir); err == nil {
		row.PerfdagVersion, row.Host = info.Version, info.Host
		for _, e := range info.Endpoints {
			row.Endpoints = append(row.Endpoints, schema.HistoryEndpoint{Name: e.Name, Model: e.Model, Server: e.Server})
		}
	}
	return &row, nil
}
