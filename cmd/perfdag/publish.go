package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/perfdag/perfdag/engine/plural"

	"github.com/spf13/cobra"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/engine/gate"
	"github.com/perfdag/perfdag/engine/workspace"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/lake"
	strictpublish "github.com/perfdag/perfdag/steps/strict-publish"
)

// publishOutput is `perfdag publish --json`.
type publishOutput struct {
	Result  strictpublish.Result   `json:"result"`
	Gates   []gate.Verdict         `json:"gates"`
	Receipt *schema.PublishReceipt `json:"receipt"` // null when refused
	File    string                 `json:"receipt_file,omitempty"`
}

func (a *app) publishCmd() *cobra.Command {
	var noStrict, asJSON bool
	var lakeURL string
	cmd := &cobra.Command{
		Use:   "publish DIR",
		Short: "Publish a finished campaign to the lake; strict gates refuse weak evidence",
		Long: `Publish reads a finished campaign directory (its frozen config.yaml, atlas.jsonl,
tpm_summary.json, roofline sweeps and champion.json), evaluates the strict gates and
writes the lake tables atlas_v1, campaign_v1, tpm_v1, cost_v1 and roofline_v1, and, for a
scheduled run whose verdict.json is written, history_v1 (read by 'perfdag history --lake').

Strict gates are expr rules over the campaign's facts (dcgm_grounded, sol_rigor,
plot_ready_points, roofline_present, steady_window_undercount_cells, failed_cells,
acknowledged, ...). The defaults refuse a campaign that is not DCGM-grounded, a throughput
or mixed campaign with plot-ready points but no roofline page, and a cell with
steady_window_undercount unless publish.acknowledge lists it. publish.gates overrides a
default by id or adds gates. --no-strict publishes anyway and records every failed gate,
with its message, and the sol_rigor on the campaign_v1 row.

Publishing is idempotent: one transaction deletes the campaign's rows (campaign_id = the
directory name) in every table and inserts the new ones, so publishing twice leaves one
copy, and a failure or a kill leaves the lake as it was. The lake is publish.lake, or
--lake: sqlite://path (a relative path resolves against the campaign file's directory;
with --lake, against the current directory) or postgres://user@host:5432/db, with the
password in PGPASSWORD (never on the command line, where ps shows it). publish.json in
DIR is the receipt: lake URL without a password, rows per table, gates, gaps, time.

Exit codes: 0 published · 1 the publish failed (the lake is unchanged) · 2 bad usage ·
3 invalid config.yaml · 4 refused by a strict gate (nothing written) · 130 interrupted.`,
		Example: `  perfdag publish campaigns/20261202T130455Z-kimi-k26-aa
  perfdag publish DIR --no-strict            # publish anyway, record the gaps
  PGPASSWORD=... perfdag publish DIR --lake postgres://bench@lake.internal:5432/perf
  perfdag publish DIR --json | jq '.result.failed_gates'`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.publish(cmd.Context(), args[0], lakeURL, noStrict, asJSON)
		},
	}
	cmd.Flags().BoolVar(&noStrict, "no-strict", false, "publish even when a strict gate fails, recording every gap on the campaign_v1 row")
	cmd.Flags().StringVar(&lakeURL, "lake", "", "lake URL overriding publish.lake (sqlite://path or postgres://user@host/db)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result, gate verdicts and receipt as JSON")
	return cmd
}

func (a *app) publish(ctx context.Context, dir, lakeURL string, noStrict, asJSON bool) error {
	f, err := a.open(dir)
	if err != nil {
		return err
	}
	if lakeURL != "" {
		cwd, err := os.Getwd()
		if err != nil {
			return err
		}
		loc, err := lake.ParseURL(lakeURL, cwd)
		if err != nil {
			return exit(ExitUsage, fmt.Errorf("--lake: %w", err))
		}
		if loc.Driver == lake.DriverSQLite {
			// the database's folder (created when missing) may not be in a campaign directory
			if err := campaigndir.CheckTarget(filepath.Dir(loc.Path), campaigndir.TargetFolder); err != nil {
				return exit(ExitUsage, fmt.Errorf("--lake %s: %w", loc.Path, err))
			}
			lakeURL = "sqlite://" + loc.Path
		}
	}
	unlock, err := workspace.Lock(dir)
	if err != nil {
		return exit(ExitFailed, fmt.Errorf("%w: publish after it ends", err))
	}
	defer unlock()
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	var strict *bool
	if noStrict {
		f := false
		strict = &f
	}
	out, err := strictpublish.Publish(ctx, strictpublish.Request{Dir: dir, Files: f.Files, Evidence: f.Evidence,
		Verdicts: f.Verdicts, BaseDir: f.BaseDir, Campaign: f.Spec, Lake: lakeURL, Strict: strict})
	var refusal *engine.Refusal
	switch {
	case ctx.Err() != nil:
		return exit(ExitInterrupted, errors.New("interrupted: nothing was published, the lake is as it was"))
	case errors.As(err, &refusal):
	case err != nil:
		return exit(ExitFailed, err)
	}
	if asJSON {
		o := publishOutput{Result: out.Result, Gates: out.Verdicts, Receipt: out.Receipt}
		if out.Receipt != nil {
			o.File = campaigndir.Abs(dir, campaigndir.Receipt())
		}
		if err := writeJSON(a.stdout, o); err != nil {
			return err
		}
	} else {
		printPublish(a, dir, out)
	}
	if refusal != nil {
		return exitf(ExitRefused, "refused by strict gates: %s", strings.Join(out.Result.FailedGates, ", "))
	}
	return nil
}

func printPublish(a *app, dir string, out *strictpublish.Outcome) {
	r := out.Result
	if r.Refused {
		fmt.Fprintf(a.stdout, "refused: campaign %s failed strict gates; nothing was published to %s\n", r.CampaignID, r.Lake)
		for _, v := range out.Verdicts {
			if !v.Passed && v.Severity == gate.Fail {
				fmt.Fprintf(a.stdout, "  %s: %s\n", v.Gate, v.Message)
			}
		}
		fmt.Fprintln(a.stdout, "fix the evidence and publish again, or publish anyway with --no-strict: every gap is then recorded on the campaign_v1 row")
		return
	}
	mode := "strict"
	if !r.Strict {
		mode = "not strict"
	}
	fmt.Fprintf(a.stdout, "published %s to %s (%s; sol_rigor %s, dcgm_grounded %t)\n", r.CampaignID, r.Lake, mode, r.SolRigor, r.DCGMGrounded)
	tw := tabwriter.NewWriter(a.stdout, 2, 4, 2, ' ', 0)
	for _, t := range out.Receipt.Tables {
		fmt.Fprintf(tw, "  %s\t%s\t(replaced %d)\n", t.Table, plural.N(t.Rows, "row"), t.Replaced)
	}
	tw.Flush()
	var marks []string
	for _, v := range out.Verdicts {
		mark := "pass"
		if !v.Passed {
			mark = "FAIL"
			if v.Severity == gate.Warn {
				mark = "warn"
			}
		}
		marks = append(marks, v.Gate+":"+mark)
	}
	fmt.Fprintf(a.stdout, "gates: %s\n", strings.Join(marks, " "))
	if len(r.Gaps) > 0 {
		fmt.Fprintln(a.stdout, "gaps recorded on campaign_v1:")
		for _, g := range r.Gaps {
			fmt.Fprintf(a.stdout, "  - %s\n", g)
		}
	}
	fmt.Fprintf(a.stdout, "receipt: %s\n", campaigndir.Abs(dir, campaigndir.Receipt()))
}
