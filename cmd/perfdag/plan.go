package main

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/perfdag/perfdag/engine/plan"
	"github.com/perfdag/perfdag/engine/run"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

func (a *app) planCmd() *cobra.Command {
	var format, dir, calibration string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "plan FILE",
		Short: "Show the compiled DAG of a campaign without running anything",
		Long: `Plan compiles a campaign file into its DAG — the default pipeline when the file has
no pipeline:, foreach expanded into concrete nodes such as run-shape[aa-10k/c16], edges
from needs, brackets and per-endpoint ordering — and prints it in topological order.

With --dir, each node also says whether a run into that campaign directory would run it
or reuse its checkpoint, and why. Nothing is written.

A calibration (--calibration FILE, else the calibration.json of --dir) is checked first: a
warning on stderr names each point whose asked load exceeds what one client held on the
calibrated machine (perfdag calibrate's ceilings).

Formats: text (default), dot (Graphviz; dashed edges only order), mermaid, json.`,
		Example: `  perfdag plan pipelines/quickstart.yaml
  perfdag plan --format dot campaign.yaml | dot -Tsvg > dag.svg
  perfdag plan --dir campaigns/20261202T130000Z-demo campaign.yaml`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if asJSON {
				format = "json"
			}
			if !slices.Contains(plan.Formats, format) {
				return exitf(ExitUsage, "--format %q: want one of %s", format, strings.Join(plan.Formats, ", "))
			}
			c, p, err := a.compile(args[0], nil, "")
			if err != nil {
				if reportDiags(a.stderr, err, map[string][]byte{args[0]: sourceOf(c, args[0])}, false) {
					return exit(ExitInvalid, nil)
				}
				return exit(ExitInvalid, err)
			}
			switch {
			case calibration != "":
				a.warnCeilings(c.Spec, calibration)
			case dir != "":
				a.warnCeilings(c.Spec, campaigndir.Abs(dir, campaigndir.Calibration()))
			}
			var note plan.Annotation
			if dir != "" {
				reg, _ := a.registry()
				dec, err := run.New(p, dir, run.Options{Registry: reg}).DryRun()
				if err != nil {
					return err
				}
				note = annotate(dec)
			}
			return p.Write(a.stdout, format, note)
		},
	}
	cmd.Flags().StringVar(&format, "format", "text", "text, dot, mermaid or json")
	cmd.Flags().StringVar(&dir, "dir", "", "campaign directory to explain reuse against (its calibration.json, when there is one, checks every point's load)")
	cmd.Flags().StringVar(&calibration, "calibration", "", "a calibration.json (perfdag calibrate) to check every point's load against: a warning names each point above one client's ceilings")
	cmd.Flags().BoolVar(&asJSON, "json", false, "same as --format json")
	return cmd
}

func annotate(dec []*run.Decision) plan.Annotation {
	m := map[string]*run.Decision{}
	for _, d := range dec {
		m[d.Node] = d
	}
	return func(id string) (string, []string) {
		d := m[id]
		if d == nil {
			return "", nil
		}
		return d.Action, d.Reasons
	}
}
