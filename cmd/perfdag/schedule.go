package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/perfdag/perfdag/engine/plural"

	"github.com/spf13/cobra"

	"github.com/perfdag/perfdag/engine/campaign"
	"github.com/perfdag/perfdag/engine/diag"
	"github.com/perfdag/perfdag/engine/schedule"
	"github.com/perfdag/perfdag/engine/workspace"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/analysis/baseline"
	"github.com/perfdag/perfdag/steps/exec"
	strictpublish "github.com/perfdag/perfdag/steps/strict-publish"
)

type scheduleFlags struct {
	state, root, registry string
	once, list, asJSON    bool
	now                   bool
	count, parallel       int
}

func (a *app) scheduleCmd() *cobra.Command {
	var f scheduleFlags
	cmd := &cobra.Command{
		Use:   "schedule FILE...",
		Short: "Run campaigns on their cron schedules and diff every run against its baseline",
		Long: `Schedule runs every campaign FILE that has a schedule: block on its cron expression
(five fields, in schedule.timezone, an IANA zone; default UTC). Each run gets a fresh
campaign directory under --root, runs like 'perfdag run', and is then diffed against the
baseline named in schedule.baseline (see 'perfdag baseline'); verdict.json goes into the
campaign directory and one line into <state>/history.jsonl. A RED verdict, a failed run or
a diff that cannot be made runs schedule.on_red (argv, env, dir, timeout; default timeout
5m) with PERFDAG_VERDICT, PERFDAG_CAMPAIGN_DIR and PERFDAG_VERDICT_FILE set.

One campaign never runs twice at once. A slot that comes due while its previous run is
still going follows schedule.overlap: skip (default) drops it, queue runs it afterwards (at
most one waits), replace cancels the running campaign and starts the new one. Campaigns
sharing an endpoint URL never run at once: the later one waits.

A per-campaign watermark in the state directory (written atomically, with a fingerprint of
the expression and zone) makes sure no slot runs twice, across restarts. Slots missed while
the scheduler was down run on start when they are within schedule.catchup_window — the
most recent schedule.catchup_max of them (default 1). A slot up to one minute late still
counts as on time. An edited expression or zone does not replay old slots. A scheduler
killed during a run (SIGKILL, power cut) records that slot as FAILED when it starts again:
verdict.json, a history line and on_red, like any failed run.

SIGTERM or Ctrl-C stops the running campaigns (they checkpoint; continue one with 'perfdag
resume DIR'), then the scheduler exits. --once runs what is due now (on time or caught up)
and exits — for system cron and CI. --list prints each campaign's next fire times.

--now fires each FILE once, immediately, through exactly the path a due slot takes (a fresh
directory, the baseline diff, verdict.json, a history line with trigger "manual", on_red),
to test a schedule end to end. It consumes no slot: the state file and its watermark are
left alone, and it may run beside a long-running scheduler of the same state directory. It
never overlaps a run of the same campaign (or of one sharing its endpoint): while one goes,
--now refuses at once (exit 1, naming the run); a slot coming due during a manual fire waits
for it. Read the runs back with 'perfdag history'.

Exit codes: 0 every run GREEN (or nothing due; a missing baseline only warns) · 1 a run was
RED, failed or could not be diffed, or --now found the campaign running · 2 bad usage · 3 an invalid campaign file · 130
interrupted while a run was going.`,
		Example: `  perfdag schedule pipelines/nightly-sweep.yaml
  perfdag schedule --list pipelines/*.yaml
  perfdag schedule --once nightly.yaml --root /data/campaigns --registry /data/baselines   # from system cron
  perfdag schedule --once --json nightly.yaml | jq '.[].verdict'
  perfdag schedule --now nightly.yaml          # one run now: diff, verdict, history, on_red`,
		Args: usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.schedule(cmd.Context(), args, &f)
		},
	}
	cmd.Flags().StringVar(&f.state, "state", "", "scheduler state: watermarks, history.jsonl, lock (default <root>/.schedule)")
	cmd.Flags().StringVar(&f.root, "root", "campaigns", "where each run's campaign directory is created")
	cmd.Flags().StringVar(&f.registry, "registry", "baselines", "baseline registry folder")
	cmd.Flags().BoolVar(&f.once, "once", false, "run every slot due now (including catch-up), then exit")
	cmd.Flags().BoolVar(&f.now, "now", false, "fire each campaign once now, as a due slot runs (trigger manual; no slot consumed), then exit")
	cmd.Flags().BoolVar(&f.list, "list", false, "print each campaign's next fire times in its zone and exit")
	cmd.Flags().IntVar(&f.count, "count", 5, "fire times per campaign for --list")
	cmd.Flags().IntVar(&f.parallel, "parallel", 4, "worker slots for analysis steps of each run")
	bound(cmd.Flags(), "count", 1, maxListed, "fire times listed per campaign")
	bound(cmd.Flags(), "parallel", 1, maxParallel, "worker slots")
	for _, name := range []string{"state", "root", "registry"} {
		output(cmd.Flags(), name, campaigndir.TargetFolder)
	}
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "print JSON: the --list table, or the runs' verdicts (--once, --now)")
	return cmd
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// maxListed bounds schedule --count.
const maxListed = 1000

func (a *app) schedule(ctx context.Context, files []string, f *scheduleFlags) error {
	if n := btoi(f.once) + btoi(f.list) + btoi(f.now); n > 1 {
		return exitf(ExitUsage, "--once, --list and --now are different modes: give one")
	}
	root, err := filepath.Abs(f.root)
	if err != nil {
		return exit(ExitUsage, err)
	}
	f.root = root // history lines and verdicts name campaign directories absolutely
	if f.state == "" {
		f.state = filepath.Join(f.root, ".schedule")
	}
	camps, err := a.loadScheduled(files)
	if err != nil {
		return err
	}
	jobs := make([]schedule.Job, 0, len(camps))
	for _, c := range camps {
		jobs = append(jobs, c.Job)
	}
	if f.list {
		return a.listSchedules(camps, f)
	}
	h := newVerdictHook(a, camps, f)
	s, err := schedule.New(jobs, schedule.Options{
		StateDir: f.state,
		Runner:   &campaignRunner{a: a, root: f.root, parallel: f.parallel, registry: f.registry, camps: camps},
		Hook:     h,
		Log:      a.stderr,
	})
	if err != nil {
		return exit(ExitUsage, err)
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	var runs []schedule.Run
	switch {
	case f.now:
		for _, c := range camps {
			if _, err := s.Fire(ctx, c.Job.Name); err != nil {
				return exit(ExitFailed, err)
			}
		}
	case f.once:
		runs, err = s.Once(ctx)
	default:
		fmt.Fprintf(a.stderr, "scheduling %s; state in %s; Ctrl-C or SIGTERM to stop\n", plural.N(len(jobs), "campaign"), f.state)
		err = s.Run(ctx)
	}
	if err != nil {
		return exit(ExitFailed, err)
	}
	if (f.once || f.now) && f.asJSON {
		if err := writeJSON(a.stdout, h.Verdicts()); err != nil {
			return err
		}
	}
	if f.once && len(runs) == 0 {
		fmt.Fprintln(a.stderr, "nothing due now")
	}
	return h.exitCode()
}

// loadScheduled compiles every file, keeping those with a schedule: block.
func (a *app) loadScheduled(files []string) ([]*baseline.Scheduled, error) {
	var out []*baseline.Scheduled
	for _, path := range files {
		c, _, err := a.compile(path, nil, "")
		if err != nil {
			return nil, a.invalid(err, path, c)
		}
		sc, err := baseline.NewScheduled(path, c.BaseDir, c.Spec, c.Position)
		var l diag.List
		switch {
		case errors.As(err, &l):
			reportDiags(a.stderr, l, map[string][]byte{path: sourceOf(c, path)}, false)
			return nil, exit(ExitInvalid, nil)
		case err != nil:
			return nil, exit(ExitUsage, err)
		case sc == nil:
			fmt.Fprintf(a.stderr, "%s: no schedule: block, not scheduled\n", path)
			continue
		}
		out = append(out, sc)
	}
	if len(out) == 0 {
		return nil, exitf(ExitUsage, "none of the files has a schedule: block (e.g. schedule: {cron: \"0 3 * * 1\", baseline: weekly-aa})")
	}
	return out, nil
}

// campaignRunner runs a scheduled campaign through the campaign service, into a fresh
// directory, exactly as `perfdag run` does.
type campaignRunner struct {
	a        *app
	root     string
	parallel int
	registry string
	camps    []*baseline.Scheduled
}

func (r *campaignRunner) Run(ctx context.Context, file string) (string, error) {
	svc, err := r.a.service()
	if err != nil {
		return "", err
	}
	var edit func([]byte, *schema.Campaign) ([]byte, error)
	for _, c := range r.camps {
		if c.Job.File == file {
			edit = baseline.RefEdit(r.registry, c.Job.Schedule.Baseline, c.Tol)
		}
	}
	dir := ""
	out, err := svc.RunFile(ctx, file, campaign.RunOptions{Root: r.root, Parallel: r.parallel, Edit: edit,
		Started: func(d string, c *campaign.Compiled) {
			dir = d
			schedule.ReportDir(ctx, d) // a scheduler killed during the run records it as failed, naming d
			fmt.Fprintf(r.a.stderr, "campaign %s → %s (%s)\n", c.Spec().Campaign, d, plural.N(len(c.Plan.Nodes), "node"))
		}})
	if out != nil {
		dir = out.Dir
	}
	return dir, err
}

// listEntry is one campaign of `schedule --list`.
type listEntry struct {
	Campaign      string        `json:"campaign"`
	File          string        `json:"file"`
	Cron          string        `json:"cron"`
	Timezone      string        `json:"timezone"`
	Overlap       string        `json:"overlap"`
	CatchupWindow string        `json:"catchup_window"`
	CatchupMax    int           `json:"catchup_max"`
	Baseline      string        `json:"baseline,omitempty"`
	Next          []string      `json:"next"`
	Watermark     *time.Time    `json:"watermark,omitempty"`
	LastRun       *schedule.Run `json:"last_run,omitempty"`
}

func (a *app) listSchedules(camps []*baseline.Scheduled, f *scheduleFlags) error {
	now := time.Now()
	var entries []listEntry
	for _, c := range camps {
		sc := c.Job.Schedule
		times, err := schedule.Upcoming(c.Job, now, f.count)
		if err != nil {
			return exit(ExitUsage, err)
		}
		e := listEntry{Campaign: c.Job.Name, File: c.Job.File, Cron: sc.Cron, Timezone: firstNonEmpty(sc.Timezone, "UTC"),
			Overlap: firstNonEmpty(sc.Overlap, schedule.OverlapSkip), CatchupWindow: sc.CatchupWindow.String(),
			CatchupMax: max(sc.CatchupMax, 1), Baseline: sc.Baseline}
		if sc.CatchupWindow.IsZero() {
			e.CatchupWindow = "none"
		}
		for _, t := range times {
			e.Next = append(e.Next, t.Format(time.RFC3339))
		}
		if st, found, err := schedule.ReadState(f.state, c.Job.Name); err == nil && found {
			e.Watermark, e.LastRun = &st.Watermark, st.LastRun
		}
		entries = append(entries, e)
	}
	if f.asJSON {
		return writeJSON(a.stdout, entries)
	}
	for i, e := range entries {
		if i > 0 {
			fmt.Fprintln(a.stdout)
		}
		fmt.Fprintf(a.stdout, "%s (%s)\n  cron %q in %s · overlap %s · catch-up %s (max %d) · baseline %s\n",
			e.Campaign, e.File, e.Cron, e.Timezone, e.Overlap, e.CatchupWindow, e.CatchupMax, firstNonEmpty(e.Baseline, "none"))
		if e.LastRun != nil {
			fmt.Fprintf(a.stdout, "  last run: slot %s %s %s\n", e.LastRun.Slot.Format(time.RFC3339), e.LastRun.Outcome, e.LastRun.Dir)
		}
		for j, t := range e.Next {
			label := "  next:"
			if j > 0 {
				label = "       "
			}
			tt, _ := time.Parse(time.RFC3339, t)
			if loc, err := time.LoadLocation(e.Timezone); err == nil {
				tt = tt.In(loc)
			}
			fmt.Fprintf(a.stdout, "%s %s\n", label, tt.Format("Mon 2006-01-02 15:04 MST"))
		}
	}
	return nil
}

// verdictHook reports each scheduled run's verdict as baseline.Hook records it, and turns
// the verdicts into the exit code.
type verdictHook struct {
	*baseline.Hook
	a *app
	f *scheduleFlags
}

func newVerdictHook(a *app, camps []*baseline.Scheduled, f *scheduleFlags) *verdictHook {
	h := &verdictHook{a: a, f: f}
	h.Hook = baseline.NewHook(camps, baseline.HookOptions{Registry: f.registry, StateDir: f.state, Open: a.open, Exec: exec.RunSpec,
		Warn:   func(campaign string, err error) { fmt.Fprintf(a.stderr, "%s: %v\n", campaign, err) },
		Report: h.report, Publish: a.republish,
		Rerender: a.rerenderJudged})
	return h
}

// republish puts a judged run its pipeline published into the lake again, with its verdict.
func (a *app) republish(ctx context.Context, dir string) error {
	if _, err := os.Stat(campaigndir.Abs(dir, campaigndir.Receipt())); err != nil {
		return nil // never published: nothing to bring up to date
	}
	fin, err := a.open(dir)
	if err != nil {
		return fmt.Errorf("publish the judged run again: %w", err)
	}
	unlock, err := workspace.Lock(dir)
	if err != nil {
		return fmt.Errorf("publish the judged run again: %w", err)
	}
	defer unlock()
	out, published, err := strictpublish.Republish(ctx, fin)
	if published {
		fmt.Fprintf(a.stderr, "published %s again to %s with its verdict (history_v1)\n", out.Result.CampaignID, out.Result.Lake)
	}
	return err
}

// report prints one run's verdict: a JSON line in the long-running --json mode (--once
// prints an array at the end), else the diff table and a summary line.
func (h *verdictHook) report(v *schema.Verdict, dir string) {
	if h.f.asJSON {
		if !h.f.once && !h.f.now {
			_ = json.NewEncoder(h.a.stdout).Encode(v)
		}
		return
	}
	if v.Diff != nil {
		baseline.WriteDiff(h.a.stdout, v.Diff)
	}
	for _, d := range v.Drift {
		fmt.Fprintf(h.a.stdout, "drift: %s (beyond the drift rule's %g %%; %d runs at the new level)\n", d.Detail, d.Limit, d.Runs)
	}
	line := fmt.Sprintf("%s slot %s (%s): %s", v.Campaign, v.Slot, v.Trigger, v.Verdict)
	if isTerminal(h.a.stdout) {
		line = fmt.Sprintf("%s slot %s (%s): %s", v.Campaign, v.Slot, v.Trigger, colorVerdict(v.Verdict))
	}
	if dir != "" {
		line += " — " + campaigndir.Abs(dir, campaigndir.Verdict())
	}
	fmt.Fprintln(h.a.stdout, line)
	switch {
	case v.Verdict == baseline.VerdictNoBaseline:
		fmt.Fprintf(h.a.stderr, "warning: %s\n", v.Error)
	case v.Error != "":
		fmt.Fprintf(h.a.stderr, "  %s\n", v.Error)
	}
	if v.Verdict == baseline.VerdictInterrupted && dir != "" {
		fmt.Fprintf(h.a.stderr, "  continue it with 'perfdag resume %s'\n", dir)
	}
}

// exitCode: 1 when any run was RED, failed or could not be diffed; 130 when a run was
// interrupted; else 0.
func (h *verdictHook) exitCode() error {
	code := ExitOK
	for _, v := range h.Verdicts() {
		switch {
		case baseline.Alarming(v.Verdict):
			code = ExitFailed
		case v.Verdict == baseline.VerdictInterrupted && code == ExitOK:
			code = ExitInterrupted
		}
	}
	if code == ExitOK {
		return nil
	}
	return exit(code, nil)
}
