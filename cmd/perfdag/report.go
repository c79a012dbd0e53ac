package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/perfdag/perfdag/steps/render"
	"github.com/perfdag/perfdag/steps/report"
	"github.com/perfdag/perfdag/steps/report/smoke"
)

func (a *app) reportCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "report DIR",
		Short: "Re-render a campaign directory's PDF report",
		Long: `Report renders the PDF a stakeholder reads from what DIR holds — the coverage line, the
caveats and the source under test on the cover; scatter panes per max_num_batched_tokens;
heatmap tables; the AA page; TPM and cost; DCGM; the roofline; the champion; spec decode.
A page whose data is missing says so in one line. The file is replaced atomically.`,
		Example: `  perfdag report campaigns/20261202T130455Z-quickstart
  perfdag report DIR --out /tmp/review.pdf`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			in, err := report.Load(dir)
			if err != nil {
				return err
			}
			if c, _, err := compile(filepath.Join(dir, "config.yaml"), nil, ""); err == nil {
				in.Campaign = c.Spec // defaults merged
			}
			if out == "" {
				out = filepath.Join(dir, render.File)
			}
			if err := report.Render(cmd.Context(), in, out); err != nil {
				return err
			}
			for _, p := range report.Contents(in) {
				if !p.HasData {
					fmt.Fprintf(a.stderr, "page %q: %s\n", p.Title, p.Missing)
				}
			}
			fmt.Fprintln(a.stdout, out)
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "where to write the PDF (default DIR/report.pdf)")
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
	return cmd
}
