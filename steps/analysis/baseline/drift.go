package baseline

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/analysis/changepoint"
	"github.com/perfdag/perfdag/steps/analysis/history"
)

// DriftKey is the schedule.tolerances key of the drift rule: a change point (docs/schedule.md
// #change-points) that regresses a history metric by more than this many percent turns the run
// RED, though no single run broke its tolerance against the baseline.
const DriftKey = "drift"

// Drift finds the changes that make a judged run RED under the drift rule: in the campaign's
// history up to this run (the state directory's runs and dir, the run being judged, whose
// verdict.json is written), each series' latest change point when it is a regression larger
// than limit % (its estimate; its interval already excludes no change), the run is in its new
// level, and it started after the baseline was recorded (recording a new baseline accepts a
// change). Old runs' verdicts are never touched: a change point judges only the run it is found in.
func Drift(ctx context.Context, stateDir, dir string, v *schema.Verdict, open func(string) (campaigndir.Finished, error), limit float64) ([]schema.DriftFinding, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(stateDir, HistoryFile)); errors.Is(err, fs.ErrNotExist) {
		return nil, nil // the campaign's first run: no series yet
	}
	hs, err := history.FromDirs(ctx, stateDir, "", history.DirOptions{
		Campaign: v.Campaign, Open: open, Extra: abs,
		ID:       func(d, _ string) string { return filepath.Base(d) },
		Annotate: []history.Annotator{history.ChangePoints(changepoint.Options{})},
	})
	if err != nil {
		return nil, fmt.Errorf("read the history of %s: %w", v.Campaign, err)
	}
	if len(hs) == 0 {
		return nil, nil
	}
	var since time.Time
	if v.Diff != nil {
		since, _ = time.Parse("20060102T150405Z", filepath.Base(v.Diff.Baseline))
	}
	var out []schema.DriftFinding
	for _, s := range hs[0].Series {
		if len(s.Marks) == 0 || len(s.Points) == 0 || s.Points[len(s.Points)-1].Run != filepath.Base(abs) {
			continue
		}
		m := s.Marks[len(s.Marks)-1]
		c := m.Change
		if c == nil || !m.Worse || math.IsNaN(c.Pct) || math.Abs(c.Pct) <= limit {
			continue
		}
		start := startOf(s, m.Run)
		if t, err := time.Parse(time.RFC3339, start.Time); err == nil && !since.IsZero() && t.Before(since) {
			continue
		}
		out = append(out, schema.DriftFinding{Cell: s.Cell, Load: s.Load, Metric: s.Metric, Since: start.Time, SinceDir: filepath.Join(filepath.Dir(abs), m.Run),
			Before: c.Before, After: c.After, Pct: c.Pct, PctLo: 100 * c.Lo / math.Abs(c.Before), PctHi: 100 * c.Hi / math.Abs(c.Before),
			Runs: len(s.Points) - indexOf(s, m.Run), Limit: limit, Detail: m.Detail})
	}
	return out, nil
}

func startOf(s history.Series, run string) history.SeriesPoint {
	return s.Points[indexOf(s, run)]
}

func indexOf(s history.Series, run string) int {
	for i, p := range s.Points {
		if p.Run == run {
			return i
		}
	}
	return 0
}
