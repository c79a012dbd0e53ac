package history

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/perfdag/perfdag/schema/campaigndir"
)

// TestWindow: a trend's window is the campaign's last n runs ending at the run judged — runs
// after it and before the window are left out and never opened — at the edge of the history
// (fewer runs than n) it holds them all, the run being judged counts before its history line
// is written, and a directory that is not one of the campaign's runs is refused.
func TestWindow(t *testing.T) {
	root := t.TempDir()
	state := filepath.Join(root, ".schedule")
	var dirs []string
	for i := range 13 {
		started := fmt.Sprintf("2026-01-%02dT03:00:00Z", i+1)
		dir := runDir(t, root, fmt.Sprintf("202601%02dT030000Z-nightly", i+1), "GREEN", "scheduled", started, 30+i, 1)
		dirs = append(dirs, dir)
		if i < 12 { // the 13th is being judged: its verdict is written, its history line not yet
			// the scheduler stamps a line when it appends it, after the run
			historyLine(t, state, line{Campaign: "nightly", Dir: dir, Verdict: "GREEN", Trigger: "scheduled", Slot: started,
				Time: fmt.Sprintf("2026-01-%02dT04:10:00Z", i+1)})
		}
	}
	for _, c := range []struct {
		name     string
		at, n    int
		from, to int // the window: runs from..to (0-based, inclusive)
	}{
		{"inside", 11, 10, 2, 11},
		{"the last run, judged now", 12, 10, 3, 12},
		{"the edge: fewer runs than n", 2, 10, 0, 2},
		{"exactly n", 9, 10, 0, 9},
		{"one", 5, 1, 5, 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			var mu sync.Mutex
			var opened []string
			o := opts()
			o.Campaign = "nightly"
			open := o.Open
			o.Open = func(dir string) (campaigndir.Finished, error) {
				mu.Lock()
				opened = append(opened, dir)
				mu.Unlock()
				return open(dir)
			}
			h, err := Window(context.Background(), state, dirs[c.at], c.n, o)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range h.Runs {
				got = append(got, r.Dir)
			}
			want := dirs[c.from : c.to+1]
			if !slices.Equal(got, want) {
				t.Fatalf("window at run %d of n=%d: %d runs %v, want runs %d..%d", c.at, c.n, len(got), got, c.from, c.to)
			}
			slices.Sort(opened)
			if !slices.Equal(slices.Compact(opened), want) {
				t.Errorf("opened %v, want only the window's %v", opened, want)
			}
			if s := h.Series[0]; s.Metric != KneeMetric || len(s.Points) != len(want) || s.Points[len(want)-1].Value != float64(30+c.to) {
				t.Errorf("knee series %+v, want %d points ending at %d", s, len(want), 30+c.to)
			}
		})
	}
	if _, err := Window(context.Background(), state, filepath.Join(root, "elsewhere"), 10, func() DirOptions { o := opts(); o.Campaign = "nightly"; return o }()); err == nil {
		t.Error("a directory that is no run of the campaign made a window")
	}
}
