package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/perfdag/perfdag/engine/run"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/render"
	"github.com/perfdag/perfdag/steps/report"
	"github.com/perfdag/perfdag/steps/report/smoke"
)

func (a *app) reportCmd() *cobra.Command {
	var out, htmlOut string
	cmd := &cobra.Command{
		Use:   "report DIR",
		Short: "Re-render a campaign directory's PDF report",
		Long: `Report renders the PDF a stakeholder reads from what DIR's steps recorded — the coverage
line, the verdict, the caveats and the source under test on the cover; scatter panes per
max_num_batched_tokens; heatmap tables; the AA page; TPM and cost; DCGM; the roofline; the
champion; spec decode; for a judged scheduled run, the trend of its campaign's last 10 runs
(read from the scheduler's state beside DIR). A page whose data is missing says so in one line.

Without --out it re-runs the campaign's render step (after a perfdag upgrade, say), so the
journal records the new report, and then the steps after render the new report puts out of
date (strict-publish publishes it again), so DIR stays a finished campaign that history,
baselines and publishing read; it refuses when anything else would have to run first. With
--out it writes the PDF there and leaves DIR as it is. Either way a directory whose results
no longer match its campaign file is refused: finish it with 'perfdag resume DIR'.

--html FILE writes the same pages as one self-contained HTML file (inline styles, SVG charts
whose points show their exact values on hover, nothing fetched when it is opened), fit to send
as an e-mail attachment; like --out it leaves DIR as it is, and the two can be given together.

Neither writes inside a campaign directory (it holds only what its steps recorded): to
re-render DIR's own report.pdf, leave out --out. Each names a file in a folder that exists.`,
		Example: `  perfdag report campaigns/20261202T130455Z-quickstart
  perfdag report DIR --out /tmp/review.pdf
  perfdag report DIR --html /tmp/review.html`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			if out != "" && filepath.Clean(out) == filepath.Clean(htmlOut) {
				return exitf(ExitUsage, "--out and --html both name %s: the HTML would replace the PDF; name two files", out)
			}
			if out == "" && htmlOut == "" {
				res, err := a.rerender(cmd.Context(), dir)
				if err != nil {
					return err
				}
				for _, n := range res.Summary.Nodes {
					if n.Kind == render.Kind.Name || n.Outcome == run.OutRan {
						fmt.Fprintf(a.stderr, "%s: %s\n", n.Node, n.Summary)
					}
				}
				fmt.Fprintln(a.stdout, campaigndir.Abs(res.Dir, campaigndir.Report()))
				return nil
			}
			f, err := a.open(dir)
			if err != nil {
				return err
			}
			in, err := render.Input(cmd.Context(), f.Files, f.Evidence, f.Spec, f.Verdicts)
			if err != nil {
				return err
			}
			in.Trend = a.trendOf(cmd.Context(), dir, f.Spec)
			if out != "" {
				if err := report.Render(cmd.Context(), in, out); err != nil {
					return err
				}
			}
			if htmlOut != "" {
				if err := report.RenderHTML(cmd.Context(), in, htmlOut); err != nil {
					return err
				}
			}
			for _, p := range report.Contents(in) {
				if !p.HasData && p.Listed() {
					fmt.Fprintf(a.stderr, "page %q: %s\n", p.Title, p.Missing)
				}
			}
			for _, path := range []string{out, htmlOut} {
				if path != "" {
					fmt.Fprintln(a.stdout, path)
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "write the PDF here and leave DIR as it is (default: re-run DIR's render step)")
	cmd.Flags().StringVar(&htmlOut, "html", "", "write the report as one self-contained HTML file here and leave DIR as it is")
	output(cmd.Flags(), "out", campaigndir.TargetFile)
	output(cmd.Flags(), "html", campaigndir.TargetFile)
	return cmd
}

func (a *app) smokeCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "smoke --out FILE",
		Short: "Render the report of the bundled synthetic fixture (no cluster, no campaign)",
		Long: `Smoke renders the report of a synthetic fixture that mirrors the reference layout
exactly — 40 atlas cells, 38 full sweeps, 1 partial, 1 failed, 232 plot-ready points,
20 evicted MTP context cells — so you can see every page before committing cluster time.
The fixture is generated deterministically (steps/report/smoke) and checked in under
testdata/smoke/.`,
		Example: `  perfdag smoke --out /tmp/perfdag-smoke.pdf`,
		Args:    usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return exitf(ExitUsage, "--out FILE is required")
			}
			if err := smoke.Render(cmd.Context(), out); err != nil {
				return err
			}
			fmt.Fprintln(a.stdout, out)
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "where to write the PDF")
	output(cmd.Flags(), "out", campaigndir.TargetFile)
	return cmd
}
