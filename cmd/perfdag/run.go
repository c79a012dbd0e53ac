package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/perfdag/perfdag/engine/plural"

	"github.com/spf13/cobra"

	"github.com/perfdag/perfdag/engine/campaign"
	"github.com/perfdag/perfdag/engine/events"
	"github.com/perfdag/perfdag/engine/load"
	enginerun "github.com/perfdag/perfdag/engine/run"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/measure/shard"
)

// maxParallel bounds --parallel: more worker slots than steps a machine can run at once only
// queue.
const maxParallel = 1024

type runFlags struct {
	out      string
	root     string
	parallel int
	only     []string
	onlyList string
	slice    bool
	force    []string
	dryRun   bool
	asJSON   bool
	// clientsAt lists the listening clients (perfdag shard --listen) of a point split over clients
	clientsAt string
}

func (f *runFlags) register(cmd *cobra.Command, withOut bool) {
	if withOut {
		cmd.Flags().StringVar(&f.out, "out", "", "campaign directory (default: <root>/<UTC-ts>-<slug>; an existing one is resumed with the edited file)")
		cmd.Flags().StringVar(&f.root, "root", "campaigns", "where new campaign directories are created")
	}
	cmd.Flags().IntVar(&f.parallel, "parallel", 4, "worker slots for analysis steps (steps that hold an endpoint always run one at a time per endpoint)")
	bound(cmd.Flags(), "parallel", 1, maxParallel, "worker slots")
	if withOut {
		output(cmd.Flags(), "out", campaigndir.TargetCampaign)
		output(cmd.Flags(), "root", campaigndir.TargetFolder)
	}
	cmd.Flags().StringArrayVar(&f.only, "only", nil, "run only nodes matching this glob, and what they need (repeatable; * matches anything; a glob matching no node is an error)")
	cmd.Flags().StringVar(&f.onlyList, "only-list", "", "newline-separated node globs, each as --only (how an exported Argo task names its slice)")
	if withOut {
		cmd.Flags().StringVar(&f.clientsAt, "clients-at", "", "host:port,... of the clients already listening (perfdag shard --listen, with "+shard.TokenEnv+") that measure a point split over clients:, instead of child processes (how an exported Argo task runs its client pods)")
		cmd.Flags().BoolVar(&f.slice, "slice", false, "run as one task of an exported workflow (with --out and --only-list): wait for the directory instead of failing; a slice of one cell shares it with other cells' slices")
	}
	cmd.Flags().StringArrayVar(&f.force, "force", nil, "re-run nodes matching this glob even when reusable (repeatable; a glob matching no node is an error)")
	cmd.Flags().BoolVar(&f.dryRun, "dry-run", false, "print what would run or be reused, and why; write nothing")
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "print the result as JSON on stdout")
}

func (a *app) runCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run FILE",
		Short: "Run a campaign into a new (or given) campaign directory",
		Long: `Run compiles the campaign and walks its DAG. Every node is checkpointed atomically
when it ends; a node whose checkpoint succeeded with the same fingerprint (kind, version,
parameters, inputs, upstream outputs) is reused, not re-run. Steps that hold an endpoint
run one at a time per endpoint; analysis steps run in parallel.

Run into an existing directory (--out DIR) after editing the file, and only the nodes the
edit changed — and their dependents — run again. Ctrl-C (or SIGTERM) stops running nodes
within seconds and records them as interrupted; a second Ctrl-C exits at once. Continue
with 'perfdag resume DIR'.`,
		Example: `  perfdag run pipelines/quickstart.yaml
  perfdag run campaign.yaml --out campaigns/weekly --parallel 2
  perfdag run campaign.yaml --out campaigns/weekly --dry-run
  perfdag run campaign.yaml --out campaigns/weekly --force 'run-shape[aa-1k/*]'`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runFile(cmd.Context(), args[0], &f)
		},
	}
	f.register(cmd, true)
	return cmd
}

func (a *app) resumeCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "resume DIR",
		Short: "Continue a campaign from its directory's frozen config",
		Long: `Resume reads DIR's frozen campaign file (written when the run started) and runs
every node that has not succeeded with a matching fingerprint. A campaign killed at any
moment — even kill -9 — ends with exactly the results an uninterrupted run would have,
re-running only unfinished work.`,
		Example: `  perfdag resume campaigns/20261202T130455Z-quickstart`,
		Args:    usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			svc, err := a.service()
			if err != nil {
				return err
			}
			dir := args[0]
			if f.dryRun {
				c, _, err := svc.Frozen(dir)
				if err != nil {
					return a.invalid(err, campaigndir.Config(dir), fileOf(c))
				}
				return a.dryRun(svc, c, dir, &f)
			}
			return a.execute(cmd.Context(), svc, &f, func(ctx context.Context, o campaign.RunOptions) (*campaign.Outcome, error) {
				return svc.Resume(ctx, dir, o)
			}, campaigndir.Config(dir))
		},
	}
	f.register(cmd, false)
	return cmd
}

func (a *app) runFile(ctx context.Context, path string, f *runFlags) error {
	svc, err := a.service()
	if err != nil {
		return err
	}
	if f.dryRun {
		c, err := svc.Compile(path, nil, "")
		if err != nil {
			return a.invalid(err, path, fileOf(c))
		}
		dir := f.out
		if dir == "" {
			dir = filepath.Join(f.root, "(new)")
		}
		return a.dryRun(svc, c, dir, f)
	}
	return a.execute(ctx, svc, f, func(ctx context.Context, o campaign.RunOptions) (*campaign.Outcome, error) {
		return svc.RunFile(ctx, path, o)
	}, path)
}

func fileOf(c *campaign.Compiled) *load.Campaign {
	if c == nil {
		return nil
	}
	return c.File
}

// dryRun prints what a run would do for every node, and why; it writes nothing.
func (a *app) dryRun(svc *campaign.Service, c *campaign.Compiled, dir string, f *runFlags) error {
	dec, err := svc.DryRun(c, dir, campaign.RunOptions{Only: f.globs(), Force: f.force})
	if err != nil {
		return err
	}
	format := "text"
	if f.asJSON {
		format = "json"
	}
	return c.Plan.Write(a.stdout, format, annotate(dec))
}

// execute runs (or resumes) with the terminal's progress line and signal handling, then
// prints the summary; the error carries the exit code.
func (a *app) execute(ctx context.Context, svc *campaign.Service, f *runFlags,
	start func(context.Context, campaign.RunOptions) (*campaign.Outcome, error), file string) error {
	if f.clientsAt != "" {
		addrs, err := shard.ParseAddrs(f.clientsAt)
		if err != nil {
			return exit(ExitUsage, fmt.Errorf("--clients-at: %w (write host:port,host:port)", err))
		}
		tok := os.Getenv(shard.TokenEnv)
		if tok == "" {
			return exit(ExitUsage, fmt.Errorf("--clients-at: %s is empty: set it to the token the listening clients hold", shard.TokenEnv))
		}
		ctx = shard.WithRemote(ctx, shard.Remote{Addrs: addrs, Token: tok})
	}
	ctx, stop := interruptible(ctx, a)
	defer stop()
	var prog *progress
	o := campaign.RunOptions{Out: f.out, Root: f.root, Parallel: f.parallel, Only: f.globs(), Force: f.force, Slice: f.slice,
		Started: func(dir string, c *campaign.Compiled) {
			kinds := make(map[string]string, len(c.Plan.Nodes))
			for _, n := range c.Plan.Nodes {
				kinds[n.ID] = n.Step.Kind.Name
			}
			prog = newProgress(a.stderr, kinds)
			fmt.Fprintf(a.stderr, "campaign %s → %s (%s)\n", c.Spec().Campaign, dir, plural.N(len(c.Plan.Nodes), "node"))
			a.warnCeilings(c.Spec(), campaigndir.Abs(dir, campaigndir.Calibration()))
		},
		Observe: func(e events.Event) {
			if prog != nil {
				prog.observe(e)
			}
			if a.testObserve != nil {
				a.testObserve(ctx, e)
			}
		},
	}
	out, err := start(ctx, o)
	if prog != nil {
		prog.done()
	}
	if out == nil || out.Summary == nil {
		if campaign.CodeOf(err) == campaign.CodeInvalid {
			return a.invalid(err, file, nil)
		}
		return err
	}
	if f.asJSON {
		_ = writeJSON(a.stdout, out.Summary)
	} else {
		printSummary(a.stdout, out.Summary)
	}
	if err != nil && campaign.CodeOf(err) == campaign.CodeInterrupted {
		fmt.Fprintln(a.stderr, err)
		return exit(campaign.CodeInterrupted, nil)
	}
	if err == nil && f.clientsAt != "" {
		return clientsLost(a, out.Summary)
	}
	return err
}

// clientsLost fails a slice driving listening clients when one of its points failed with a
// client: its workflow retries the slice with new client pods (a dead pod stays dead, and
// Argo 3 reports a failed daemon as succeeded), resuming to measure that point again.
func clientsLost(a *app, sum *enginerun.Summary) error {
	for _, n := range sum.Nodes {
		if n.Outcome == enginerun.OutFailed && shard.FailedWithClient(n.Reason) {
			return exitf(ExitFailed, "%s failed with one of its clients: this task fails, for its workflow to retry the slice with new client pods", n.Node)
		}
	}
	return nil
}

// interruptible cancels ctx on the first SIGINT/SIGTERM and exits at once on the second.
func interruptible(ctx context.Context, a *app) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		select {
		case s, ok := <-sig:
			if !ok {
				return
			}
			fmt.Fprintf(a.stderr, "\n%s: stopping running steps and checkpointing (again to exit at once)\n", s)
			cancel()
		case <-ctx.Done():
			return
		}
		if _, ok := <-sig; ok {
			fmt.Fprintln(a.stderr, "second signal: exiting now")
			os.Exit(ExitInterrupted)
		}
	}()
	return ctx, func() {
		signal.Stop(sig)
		close(sig)
		cancel()
	}
}

// globs is --only plus the lines of --only-list.
func (f *runFlags) globs() []string {
	out := append([]string(nil), f.only...)
	for _, l := range strings.Split(f.onlyList, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}
