package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/analysis/baseline"
)

const baselineLong = `A baseline is one campaign cell's numbers registered under a name, in the
inference_perfbench_v1 schema: per concurrency throughput, TTFT p50/p95/p99, ITL p50,
tokens/s/user, request latency p50 and errors; sweep-wide prefix-cache hit rate, KV-cache
usage peak, running-requests peak and generation throughput from the server's /metrics;
kernel-class GPU shares and CPU spin-poll share (null until a profile is captured).

The registry is a folder: <registry>/inference/<name>/<UTC-ts>/ holds baseline.json (name,
notes, source directory, sha256), source-snapshot.json (the document) and its sha256. Later
runs are diffed against the latest entry of a name with 'perfdag baseline diff', and a
scheduled campaign names its baseline in schedule.baseline.`

func (a *app) baselineCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "baseline",
		Short: "Register a campaign's numbers as a named baseline, diff later runs against it",
		Long:  baselineLong,
		Example: `  perfdag baseline record campaigns/20260519T200000Z-weekly --name weekly-aa --notes "GPQA=71.2"
  perfdag baseline diff --baseline weekly-aa --current campaigns/20260526T200000Z-weekly`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(a.baselineRecordCmd(), a.baselineDiffCmd())
	return cmd
}

func (a *app) baselineRecordCmd() *cobra.Command {
	var name, notes, cell, reg string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "record DIR",
		Short: "Register a campaign directory's numbers under a name",
		Long: `Record reads DIR's atlas, its frozen campaign file and the scrape-spec windows its
steps recorded (refusing a directory whose results no longer match its campaign file: finish
it with 'perfdag resume DIR' first), maps one cell to the inference_perfbench_v1 schema and
registers it under <registry>/inference/<name>/<UTC-ts>/, atomically. It prints the
registry path, the snapshot's sha256 and the headline metrics at concurrency 16 (or the
nearest concurrency measured, said so).

One baseline holds one workload (its metrics are keyed by concurrency only): a campaign
with several cells needs --cell; the usual weekly sweep has one cell and needs none.
Points that never ran are left out; a diff then reports them missing (RED).`,
		Example: `  perfdag baseline record campaigns/20260519T200000Z-weekly --name weekly-aa
  perfdag baseline record DIR --name kimi-aa10k --cell aa-10k --notes "GPQA=71.2 MMLU-Pro=80.1" --json`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if name == "" {
				return exitf(ExitUsage, "--name is required: the name later diffs and schedules refer to (e.g. weekly-aa)\nsee '%s --help'", cmd.CommandPath())
			}
			f, err := a.open(args[0])
			if err != nil {
				return exit(ExitUsage, err)
			}
			e, err := baseline.Record(cmd.Context(), baseline.RecordRequest{
				Campaign: f, Registry: reg, Name: name, Notes: notes, Cell: cell, Version: readBuildInfo(version).Version,
			})
			if err != nil && codeOf(err) == ExitRefused {
				return err
			}
			if err != nil {
				return exit(ExitUsage, err)
			}
			if asJSON {
				return writeJSON(a.stdout, recordJSON(e))
			}
			fmt.Fprintf(a.stdout, "registered baseline %s (cell %s of %s)\n  path    %s\n  sha256  %s\n",
				e.Meta.Measurement, e.Meta.Cell, e.Meta.Source, e.Dir, e.Meta.SHA256)
			baseline.WriteHeadline(a.stdout, e.Doc)
			fmt.Fprintf(a.stdout, "diff a later run: perfdag baseline diff --baseline %s --current DIR --registry %s\n", e.Meta.Measurement, reg)
			return nil
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "baseline name (letters, digits, . _ -); required")
	cmd.Flags().StringVar(&notes, "notes", "", "free text kept with the baseline, e.g. quality scores of the same deployment")
	cmd.Flags().StringVar(&cell, "cell", "", "cell to register when the campaign has several")
	cmd.Flags().StringVar(&reg, "registry", "baselines", "registry folder")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the entry as JSON")
	output(cmd.Flags(), "registry", campaigndir.TargetFolder)
	return cmd
}

// recordOutput is what `baseline record --json` prints.
type recordOutput struct {
	Path     string               `json:"path"`
	SHA256   string               `json:"sha256"`
	Entry    schema.BaselineEntry `json:"entry"`
	Headline *headlineOutput      `json:"headline"`
	Snapshot *schema.PerfBench    `json:"snapshot"`
}

type headlineOutput struct {
	Concurrency int                   `json:"concurrency"`
	Exact       bool                  `json:"exact"` // false: nearest to 16
	Metrics     schema.PerfBenchPoint `json:"metrics"`
}

func recordJSON(e *baseline.Entry) recordOutput {
	out := recordOutput{Path: e.Dir, SHA256: e.Meta.SHA256, Entry: e.Meta, Snapshot: e.Doc}
	if c, p, exact, ok := baseline.Headline(e.Doc, baseline.HeadlineConcurrency); ok {
		out.Headline = &headlineOutput{Concurrency: c, Exact: exact, Metrics: p}
	}
	return out
}

func (a *app) baselineDiffCmd() *cobra.Command {
	var ref, current, cell, reg string
	var tolerances []string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "diff --baseline REF --current DIR",
		Short: "Diff a campaign against a baseline: GREEN (exit 0) or RED (exit 1)",
		Long: `Diff snapshots the current campaign directory the way record does and compares it with
the baseline REF (a name — its latest entry — or an entry directory), per concurrency and
metric: delta, delta % and a verdict under the metric's tolerance and regression direction.

  metric                          tolerance   regression when
  throughput_toks_per_s           3 %         current < baseline
  ttft_p50_ms / p95 / p99         5 / 10 / 15 %   current > baseline
  itl_p50_ms                      3 %         current > baseline
  tps_per_user                    3 %         current < baseline
  request_latency_p50_ms          5 %         current > baseline
  errors                          0           current > baseline
  prefix_cache_hit_rate_post      2 pts       current < baseline
  gpu_cache_usage_perc_peak       5 pts       current > baseline
  kernel_class_gpu_pct.<class>    3 pts       current > baseline
  cpu_spinpoll_pct                5 pts       current > baseline

Rates are compared in absolute percentage points, never percent-of-percent. A change in
the good direction is GREEN however large; equal to the tolerance is within it. A null on
either side is a NULL_LEGACY_BASELINE row (unmeasured, never RED). A concurrency of the
baseline that the current run did not measure is RED. The verdict is RED when any row is.
When both points carry a 95 % interval of the metric, a row beyond its tolerance is RED only
if its change's interval (CHANGE 95% CI) lies wholly beyond the tolerance too; otherwise it
is NOTE, within noise, which never makes the verdict RED. Without intervals on both sides the
tolerance alone decides and a RED row says "no interval: tolerance only" (docs/schedule.md).
Override a tolerance with --tolerance METRIC=VALUE (kernel_class_gpu_pct=VALUE applies to
every class). Campaigns of a different model or workload band are refused.

Exit codes: 0 GREEN · 1 RED · 2 the diff could not be made (bad flags, unknown baseline,
not comparable).`,
		Example: `  perfdag baseline diff --baseline weekly-aa --current campaigns/20260526T200000Z-weekly
  perfdag baseline diff --baseline baselines/inference/weekly-aa/20260519T200000Z --current DIR \
      --tolerance ttft_p50_ms=8 --tolerance prefix_cache_hit_rate_post=3pts --json`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if ref == "" || current == "" {
				return exitf(ExitUsage, "--baseline and --current are both required\nsee '%s --help'", cmd.CommandPath())
			}
			tol := baseline.Tolerances{}
			for _, s := range tolerances {
				m, v, err := baseline.ParseTolerance(s)
				if err != nil {
					return exit(ExitUsage, err)
				}
				tol[m] = v
			}
			e, err := baseline.Resolve(reg, ref)
			if err != nil {
				return exit(ExitUsage, err)
			}
			f, err := a.open(current)
			if err != nil {
				return exit(ExitUsage, err)
			}
			d, err := baseline.DiffDir(cmd.Context(), e, f, cell, tol)
			if err != nil {
				return exit(ExitUsage, err)
			}
			if asJSON {
				if err := writeJSON(a.stdout, d); err != nil {
					return err
				}
			} else {
				baseline.WriteDiff(a.stdout, d)
				if isTerminal(a.stdout) {
					fmt.Fprintln(a.stdout, colorVerdict(d.Verdict))
				}
			}
			if d.Verdict == baseline.Red {
				return exit(ExitFailed, nil)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&ref, "baseline", "", "baseline name (its latest entry) or entry directory")
	cmd.Flags().StringVar(&current, "current", "", "campaign directory to compare")
	cmd.Flags().StringVar(&cell, "cell", "", "cell of the current campaign (default: the baseline's cell, else the only one)")
	cmd.Flags().StringArrayVar(&tolerances, "tolerance", nil, "override a tolerance: METRIC=VALUE, e.g. ttft_p50_ms=8 (repeatable)")
	cmd.Flags().StringVar(&reg, "registry", "baselines", "registry folder")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the diff as JSON")
	return cmd
}

// isTerminal reports whether w is a terminal (live progress line, coloured verdicts).
func isTerminal(w io.Writer) bool {
	if r, ok := w.(interface{ Underlying() io.Writer }); ok {
		w = r.Underlying() // Main's redacting writer around os.Stdout
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// colorVerdict renders the verdict in green or red for a terminal.
func colorVerdict(v string) string {
	code := "32"
	if v != baseline.Green {
		code = "31"
	}
	return "\x1b[1;" + code + "m" + v + "\x1b[0m"
}
