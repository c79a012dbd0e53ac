package main

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/spf13/cobra"

	"github.com/perfdag/perfdag/engine/diag"
	"github.com/perfdag/perfdag/engine/load"
	"github.com/perfdag/perfdag/steps/analysis/baseline"
)

func (a *app) validateCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "validate FILE...",
		Short: "Check campaign files and report every problem at once",
		Long: `Validate decodes each campaign file strictly (unknown keys are errors), checks
references, ids, concurrencies and step parameters, compiles every gate and when: rule
against the typed fields of the step it guards, and compiles the DAG (cycles are named).
Every problem of every file is reported in one run as file:line:col with the source line,
a caret and a hint.

Exit status: 0 when every file is valid, 1 when any is not.`,
		Example: `  perfdag validate pipelines/*.yaml
  perfdag validate --json campaign.yaml | jq '.[].message'`,
		Args: usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			var all diag.List
			sources := map[string][]byte{}
			for _, path := range args {
				src, err := load.ReadSource(path)
				if errors.Is(err, fs.ErrNotExist) {
					all = append(all, &diag.Diagnostic{File: path, Message: "no such file",
						Hint: "check the path: a relative one resolves against the current directory"})
					continue
				}
				if err != nil {
					all = append(all, &diag.Diagnostic{File: path, Message: err.Error()})
					continue
				}
				sources[path] = src
				c, _, err := a.compile(path, nil, "")
				if err == nil && c != nil {
					// what `schedule` refuses (tolerances on unknown metrics) is a problem too
					_, err = baseline.NewScheduled(path, c.BaseDir, c.Spec, c.Position)
				}
				var l diag.List
				switch {
				case errors.As(err, &l):
					all = append(all, l...)
				case err != nil:
					all = append(all, &diag.Diagnostic{File: path, Message: err.Error()})
				}
			}
			if asJSON {
				if all == nil {
					all = diag.List{}
				}
				_ = writeJSON(a.stdout, all)
			} else if len(all) > 0 {
				reportDiags(a.stderr, all, sources, false)
			} else {
				for _, p := range args {
					fmt.Fprintf(a.stdout, "%s: valid\n", p)
				}
			}
			if len(all) > 0 {
				return exit(ExitFailed, nil)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print problems as a JSON array on stdout")
	return cmd
}
