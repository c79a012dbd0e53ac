package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/perfdag/perfdag/steps/analysis/changepoint"
	"github.com/perfdag/perfdag/steps/analysis/history"
	"github.com/perfdag/perfdag/steps/lake"
	strictpublish "github.com/perfdag/perfdag/steps/strict-publish"
)

type historyFlags struct {
	state, root, lakeURL, campaign string
	asJSON                         bool
}

func (a *app) historyCmd() *cobra.Command {
	var f historyFlags
	cmd := &cobra.Command{
		Use:   "history [FILE|DIR]",
		Short: "List a scheduled campaign's runs: verdicts, knees and headline metrics over time",
		Long: `History lists the runs of a scheduled campaign, oldest first: when each started, its
trigger (scheduled, catch-up, queued, manual), its verdict and the baseline it was judged
against, the versions it recorded (engine, engine version, commit, delivery, models), its
directory, each searched cell's knee with its band, and every point's headline metrics —
throughput, TTFT p50 and p95, ITL p50, goodput and attainment on a cell with slo: — with
their 95 % intervals.

FILE is a campaign file with a schedule: block: its runs are read from the state directory
'perfdag schedule' keeps for it (--state, default <--root>/.schedule, as schedule resolves
it). DIR is a state directory (it holds history.jsonl), the root holding the runs (its
.schedule), or a folder of run directories each holding verdict.json.

--lake URL reads the runs published to a lake instead (sqlite://path or
postgres://user@host:5432/db, the password in PGPASSWORD): each run 'perfdag publish' wrote
after its verdict, from whichever machine. Name the campaign by FILE or --campaign.

--json prints the perfdag_history_v1 document (docs/schedule.md#history): the runs, and per
(cell, load, metric) the ordered series of {run, time, value, lo, hi} that a trend chart or
a change-point detector reads.

Exit codes: 0 listed (also when no run is recorded yet) · 1 the history or the lake could
not be read · 2 bad usage (not a state directory, no campaign named) · 3 an invalid
campaign file.`,
		Example: `  perfdag history pipelines/nightly-sweep.yaml
  perfdag history campaigns/.schedule --json | jq '.campaigns[0].series[] | select(.metric == "knee")'
  PGPASSWORD=... perfdag history pipelines/nightly-sweep.yaml --lake postgres://bench@lake.internal:5432/perf`,
		Args: usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.history(cmd.Context(), args, &f)
		},
	}
	cmd.Flags().StringVar(&f.state, "state", "", "the scheduler's state directory of FILE (default <root>/.schedule)")
	cmd.Flags().StringVar(&f.root, "root", "campaigns", "where FILE's runs were created, as for perfdag schedule")
	cmd.Flags().StringVar(&f.lakeURL, "lake", "", "read the published runs from this lake (sqlite://path or postgres://user@host/db)")
	cmd.Flags().StringVar(&f.campaign, "campaign", "", "the campaign to read (default: FILE's; every campaign of DIR)")
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "print the perfdag_history_v1 JSON document")
	return cmd
}

func (a *app) history(ctx context.Context, args []string, f *historyFlags) error {
	var arg string
	if len(args) == 1 {
		arg = args[0]
	}
	fi, statErr := os.Stat(arg)
	isDir := arg != "" && statErr == nil && fi.IsDir()
	if arg != "" && statErr != nil {
		return exitf(ExitUsage, "%v (want a campaign file with schedule:, a state directory or the root holding the runs)", statErr)
	}
	if arg != "" && !isDir {
		camps, err := a.loadScheduled([]string{arg})
		if err != nil {
			return err
		}
		if f.campaign != "" && f.campaign != camps[0].Job.Name {
			return exitf(ExitUsage, "--campaign %s: %s schedules %s", f.campaign, arg, camps[0].Job.Name)
		}
		f.campaign = camps[0].Job.Name
	}
	doc := history.Document{Schema: history.Schema}
	switch {
	case f.lakeURL != "":
		if isDir {
			return exitf(ExitUsage, "--lake reads the runs from the lake: name the campaign by its FILE or --campaign, not a directory")
		}
		h, source, err := a.historyFromLake(ctx, f)
		if err != nil {
			return err
		}
		doc.Source, doc.Campaigns = source, []*history.History{h}
	case arg == "":
		return exitf(ExitUsage, "name a campaign file with schedule:, a state directory or the root holding the runs (or --lake URL --campaign NAME)")
	default:
		stateDir, folder := f.state, arg
		if isDir {
			s, err := history.Locate(arg)
			if err != nil {
				return exit(ExitUsage, err)
			}
			stateDir = s
		} else if stateDir == "" {
			stateDir = filepath.Join(f.root, ".schedule")
		}
		if stateDir != "" {
			if _, err := os.Stat(filepath.Join(stateDir, "history.jsonl")); err != nil && !isDir {
				// a scheduled campaign that never ran here
				doc.Source, doc.Campaigns = abs(stateDir), []*history.History{{Campaign: f.campaign, Runs: []history.Run{}, Series: []history.Series{}}}
				fmt.Fprintf(a.stderr, "%s: no run recorded in %s (perfdag schedule --now %s fires one)\n", f.campaign, stateDir, arg)
				return a.printHistory(doc, f)
			}
		}
		hs, err := history.FromDirs(ctx, stateDir, folder, history.DirOptions{Campaign: f.campaign, Open: a.open, ID: strictpublish.CampaignID,
			Annotate: []history.Annotator{history.ChangePoints(changepoint.Options{})}})
		switch {
		case errors.Is(err, history.ErrNoRuns):
			return exit(ExitUsage, err)
		case err != nil:
			return exit(ExitFailed, err)
		}
		doc.Source = abs(firstNonEmpty(stateDir, folder))
		doc.Campaigns = hs
		if len(hs) == 0 && f.campaign != "" {
			doc.Campaigns = []*history.History{{Campaign: f.campaign, Runs: []history.Run{}, Series: []history.Series{}}}
			fmt.Fprintf(a.stderr, "%s: no run recorded in %s\n", f.campaign, doc.Source)
		}
	}
	return a.printHistory(doc, f)
}

func (a *app) printHistory(doc history.Document, f *historyFlags) error {
	if f.asJSON {
		return writeJSON(a.stdout, doc)
	}
	fmt.Fprintf(a.stdout, "history from %s\n\n", doc.Source)
	return history.WriteTable(a.stdout, doc.Campaigns)
}

// historyFromLake reads a campaign's published runs from --lake.
func (a *app) historyFromLake(ctx context.Context, f *historyFlags) (*history.History, string, error) {
	if f.campaign == "" {
		return nil, "", exitf(ExitUsage, "--lake: name the campaign by its FILE or --campaign")
	}
	cwd, err := os.Getwd()
	if err != nil {
		return nil, "", err
	}
	loc, err := lake.ParseURL(f.lakeURL, cwd)
	if err != nil {
		return nil, "", exit(ExitUsage, fmt.Errorf("--lake: %w", err))
	}
	url := f.lakeURL
	if loc.Driver == lake.DriverSQLite {
		if _, err := os.Stat(loc.Path); err != nil {
			return nil, "", exit(ExitUsage, fmt.Errorf("--lake %s: %w (nothing was ever published there)", loc, err))
		}
		url = "sqlite://" + loc.Path
	}
	l, err := lake.Open(ctx, url, cwd)
	if err != nil {
		return nil, "", exit(ExitFailed, err)
	}
	defer l.Close(context.WithoutCancel(ctx))
	h, err := history.FromLake(ctx, l, f.campaign, history.ChangePoints(changepoint.Options{}))
	if err != nil {
		return nil, "", exit(ExitFailed, fmt.Errorf("read the history of %s from %s: %w", f.campaign, loc, err))
	}
	if len(h.Runs) == 0 {
		fmt.Fprintf(a.stderr, "%s: no run published to %s (perfdag publish DIR after a scheduled run writes its history_v1 row)\n", f.campaign, loc)
	}
	return h, loc.String(), nil
}

func abs(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
