package history

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
)

// Window is the history a scheduled run's report draws as its trend: its campaign's last n
// runs ending at the run in dir (judged, its verdict.json written; its history line may not be
// yet), read from the scheduler state stateDir, only those n directories opened (o.Allow is
// narrowed to them), the annotators run over the window alone. o.Campaign names the campaign.
func Window(ctx context.Context, stateDir, dir string, n int, o DirOptions) (*History, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("run directory %s: %w", dir, err)
	}
	listing := o
	listing.Annotate, listing.Extra = nil, abs
	listing.Allow = func(string) error { return errWindowListing } // the lines alone: which runs, in what order
	hs, err := FromDirs(ctx, stateDir, filepath.Dir(abs), listing)
	if err != nil {
		return nil, err
	}
	if len(hs) != 1 {
		return nil, fmt.Errorf("%s: no run of campaign %s recorded in %s", dir, o.Campaign, stateDir)
	}
	runs := hs[0].Runs
	end := slices.IndexFunc(runs, func(r Run) bool { return r.Dir == abs })
	if end < 0 {
		return nil, fmt.Errorf("%s: not a run of campaign %s recorded in %s", dir, o.Campaign, stateDir)
	}
	runs = runs[max(0, end+1-n) : end+1]
	in := map[string]bool{}
	for _, r := range runs {
		if r.Dir != "" {
			in[r.Dir] = true
		}
	}
	reading := o
	reading.Annotate, reading.Extra = nil, abs
	reading.Allow = func(d string) error {
		if !in[d] {
			return errWindowListing
		}
		if o.Allow != nil {
			return o.Allow(d)
		}
		return nil
	}
	if hs, err = FromDirs(ctx, stateDir, filepath.Dir(abs), reading); err != nil {
		return nil, err
	}
	var window []Run
	for _, r := range hs[0].Runs {
		if in[r.Dir] {
			window = append(window, r)
		}
	}
	return Build(o.Campaign, window, o.Annotate...)
}

// errWindowListing refuses a run directory outside the window (it is not read).
var errWindowListing = errors.New("outside the trend's window")
