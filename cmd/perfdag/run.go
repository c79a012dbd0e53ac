package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/perfdag/perfdag/engine/load"
	"github.com/perfdag/perfdag/engine/plan"
	"github.com/perfdag/perfdag/engine/run"
	"github.com/perfdag/perfdag/engine/workspace"
)

type runFlags struct {
	out      string
	root     string
	parallel int
	only     []string
	force    []string
	dryRun   bool
	asJSON   bool
}

func (f *runFlags) register(cmd *cobra.Command, withOut bool) {
	if withOut {
		cmd.Flags().StringVar(&f.out, "out", "", "campaign directory (default: <root>/<UTC-ts>-<slug>; an existing one is resumed with the edited file)")
		cmd.Flags().StringVar(&f.root, "root", "campaigns", "where new campaign directories are created")
	}
	cmd.Flags().IntVar(&f.parallel, "parallel", 4, "worker slots for analysis steps (steps that hold an endpoint always run one at a time per endpoint)")
	cmd.Flags().StringArrayVar(&f.only, "only", nil, "run only nodes matching this glob, and what they need (repeatable; * matches anything)")
	cmd.Flags().StringArrayVar(&f.force, "force", nil, "re-run nodes matching this glob even when reusable (repeatable)")
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
		Long: `Resume reads DIR/config.yaml (the campaign file frozen when the run started) and runs
every node that has not succeeded with a matching fingerprint. A campaign killed at any
moment — even kill -9 — ends with exactly the results an uninterrupted run would have,
re-running only unfinished work.`,
		Example: `  perfdag resume campaigns/20261202T130455Z-quickstart`,
		Args:    usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			info, err := workspace.ReadInfo(dir)
			if err != nil {
				return exit(ExitUsage, err)
			}
			src, err := load.ReadSource(filepath.Join(dir, workspace.ConfigFile))
			if err != nil {
				return exit(ExitUsage, fmt.Errorf("read frozen config: %w", err))
			}
			name := filepath.Join(dir, workspace.ConfigFile)
			c, p, err := compile(name, src, info.BaseDir)
			if err != nil {
				return a.invalid(err, name, c)
			}
			return a.execute(cmd.Context(), c, p, dir, info.SourcePath, &f)
		},
	}
	f.register(cmd, false)
	return cmd
}

func (a *app) invalid(err error, path string, c *load.Campaign) error {
	if reportDiags(a.stderr, err, map[string][]byte{path: sourceOf(c, path)}, false) {
		return exit(ExitInvalid, nil)
	}
	return exit(ExitInvalid, err)
}

func (a *app) runFile(ctx context.Context, path string, f *runFlags) error {
	c, p, err := compile(path, nil, "")
	if err != nil {
		return a.invalid(err, path, c)
	}
	dir := f.out
	if dir != "" {
		if _, err := workspace.ReadInfo(dir); err != nil {
			entries, rerr := os.ReadDir(dir)
			if rerr == nil && visible(entries) > 0 {
				return exitf(ExitUsage, "--out %s exists and is not a campaign directory", dir)
			}
			if rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
				return exit(ExitUsage, rerr)
			}
			if !f.dryRun {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					return err
				}
			}
		}
	} else if !f.dryRun {
		dir, err = workspace.Create(f.root, c.Spec.Campaign, time.Now())
		if err != nil {
			return err
		}
	} else {
		dir = filepath.Join(f.root, "(new)")
	}
	abs, _ := filepath.Abs(path)
	return a.execute(ctx, c, p, dir, abs, f)
}

// visible counts entries that are not hidden (a run killed before it froze its config leaves
// only its .lock behind; that directory is still fresh).
func visible(entries []os.DirEntry) int {
	n := 0
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") {
			n++
		}
	}
	return n
}

// execute runs (or dry-runs) a compiled plan in dir.
func (a *app) execute(ctx context.Context, c *load.Campaign, p *plan.Plan, dir, sourcePath string, f *runFlags) error {
	reg, err := registry()
	if err != nil {
		return err
	}
	if f.dryRun {
		dec, err := run.New(p, dir, run.Options{Registry: reg, Only: f.only, Force: f.force}).DryRun()
		if err != nil {
			return err
		}
		format := "text"
		if f.asJSON {
			format = "json"
		}
		return p.Write(a.stdout, format, annotate(dec))
	}
	unlock, err := workspace.Lock(dir)
	if err != nil {
		return exit(ExitFailed, err)
	}
	defer unlock()
	if err := workspace.Freeze(dir, c.Source, workspace.Info{Campaign: c.Spec.Campaign, SourcePath: sourcePath, BaseDir: c.BaseDir, Version: version}); err != nil {
		return err
	}
	host, _ := os.Hostname()
	if err := workspace.WriteSource(dir, c.Spec, version, host); err != nil {
		return err
	}
	ctx, stop := interruptible(ctx, a)
	defer stop()
	prog := newProgress(a.stderr, len(p.Nodes))
	r := run.New(p, dir, run.Options{Parallel: f.parallel, Only: f.only, Force: f.force, Registry: reg, Observe: prog.observe})
	fmt.Fprintf(a.stderr, "campaign %s → %s (%d nodes)\n", c.Spec.Campaign, dir, len(p.Nodes))
	sum, err := r.Run(ctx)
	prog.done()
	if err != nil {
		return err
	}
	if err := run.WriteSummary(dir, c.Spec.Campaign, sum); err != nil {
		return err
	}
	if f.asJSON {
		_ = writeJSON(a.stdout, sum)
	} else {
		printSummary(a.stdout, sum)
	}
	switch {
	case sum.Interrupted:
		fmt.Fprintf(a.stderr, "interrupted: continue with 'perfdag resume %s'\n", dir)
		return exit(ExitInterrupted, nil)
	case sum.Failed():
		return exit(ExitFailed, nil)
	case sum.Refused():
		return exit(ExitRefused, nil)
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
