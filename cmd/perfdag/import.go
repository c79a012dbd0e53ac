package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/measure/benchfile"
	"github.com/perfdag/perfdag/steps/measure/importcell"
)

func (a *app) importCmd() *cobra.Command {
	var (
		o                 importcell.Options
		into              string
		printYAML, asJSON bool
		bundle            bool
		baselineArm       string
	)
	cmd := &cobra.Command{
		Use:   "import PATH...",
		Short: "Turn existing AIPerf, vLLM or SGLang benchmark outputs into campaign cells",
		Long: `Import reads benchmark outputs another tool wrote and adds a cell that imports them to a
campaign file, so 'perfdag run' treats them like measured points (atlas rows, report pages,
lake rows, baselines), each row marked with its source tool and version.

Each PATH is one concurrency point: an AIPerf artifact directory (profile_export_aiperf.json
and profile_export.jsonl), a vLLM 'bench serve --save-result' JSON file, or an SGLang
bench_serving JSONL file. --format auto (the default) recognises each from its content.
Several PATHs make one cell sweeping their concurrencies; so does one SGLang JSONL (or vLLM
--append-result file) holding several runs: one point per run.

The cell's identity names what the files measured: --model defaults to the model the files
state, --engine to vllm or sglang for their bench outputs; the rest (--hardware, --quant,
--tp, --cache-mode, ...) fall back to the campaign's defaults. The workload is the prompt and
output length the files state. Every file is then checked against the cell exactly as the
import step will check it: a mismatched model, concurrency or token length is an error naming
file, line and field, and nothing is written.

With --bundle, the one PATH is a variant A/B bundle: one sub-directory per arm holding that
arm's outputs, engine-tagged by its name (vllm, sglang-0.4, ...) or by a bundle.yaml manifest
(arms: [{arm, engine, engine_version, path, format}], baseline: ARM). Each arm becomes a cell
ARM-sweep tagged arm: and engine:, so champion-select picks the winner.

--into FILE appends the cell(s) to FILE's cells: list, keeping the rest of the file as it is,
after validating the result (paths are written relative to FILE); a FILE that does not exist
is created as a campaign of imported cells (no endpoint needed). Without --into, or with
--print, the cells are printed as YAML instead (--json: as JSON), once they pass the checks
--into would apply to a new campaign file (exit 3 otherwise). --into then lists where each
point's statistics come from: recomputed from the file's per-request records (AIPerf
records, vLLM --save-detailed, SGLang --output-details), or the file's aggregates, naming
the statistics those leave unknown (the run line of each import point says the same).

Exit status: 0 on success, 1 when an output file is unreadable or does not match its cell,
2 on bad usage, 3 when the campaign file would be invalid.`,
		Example: `  perfdag import artifacts/*-concurrency4 --into campaign.yaml --cell aiperf-h100 --hardware H100 --cache-mode warm
  perfdag import --format vllm-bench results/c1.json results/c8.json results/c32.json --print
  perfdag import --bundle ab-bundle --into pipelines/variant-ab.yaml --baseline-arm vllm --tp 1
  perfdag import bench_serving.jsonl --json | jq .import`,
		Args: usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if asJSON && printYAML {
				return exitf(ExitUsage, "--json and --print both print the cells: choose one")
			}
			if bundle && len(args) != 1 {
				return exitf(ExitUsage, "--bundle takes one directory, got %d paths", len(args))
			}
			if !bundle && baselineArm != "" {
				return exitf(ExitUsage, "--baseline-arm names a bundle's baseline arm: use it with --bundle (a single cell takes --arm and --baseline)")
			}
			if into != "" {
				o.BaseDir = filepath.Dir(into)
			}
			var (
				cells []schema.Cell
				notes []string // where each kind of point's statistics come from
			)
			if bundle {
				cs, err := importcell.BuildBundle(args[0], importcell.BundleOptions{Options: o, Baseline: baselineArm})
				if err != nil {
					return exit(ExitFailed, err)
				}
				cells = cs
			} else {
				c, points, err := importcell.Build(args, o)
				if err != nil {
					return exit(ExitFailed, err)
				}
				cells, notes = []schema.Cell{c}, importcell.StatsNotes(points)
			}
			if asJSON || printYAML || into == "" { // printed cells are refused where --into would refuse them
				if err := a.validateCells(cells); err != nil {
					return err
				}
			}
			switch {
			case asJSON:
				return writeJSON(a.stdout, cells)
			case printYAML || into == "":
				b, err := importcell.Snippet(cells, 0)
				if err != nil {
					return err
				}
				_, err = a.stdout.Write(b)
				return err
			}
			return a.appendCells(into, cells, notes)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Format, "format", importcell.FormatAuto, "format of the outputs: "+strings.Join(benchfile.Formats(), ", ")+" or auto")
	f.StringVar(&into, "into", "", "campaign `FILE` to append the cell(s) to")
	f.BoolVar(&printYAML, "print", false, "print the cell(s) as YAML instead of writing --into")
	f.BoolVar(&asJSON, "json", false, "print the cell(s) as JSON instead of writing --into")
	f.StringVar(&o.Cell, "cell", "", "cell `ID` (default: the file's name, or the format for several files)")
	f.StringVar(&o.Endpoint, "endpoint", "", "campaign endpoint the outputs were measured on (default: the only one)")
	f.StringVar(&o.SourceVersion, "source-version", "", "the tool's `VERSION`, for files that do not state it")
	f.StringVar(&o.Identity.Model, "model", "", "model the outputs measured (default: the one the files state)")
	f.StringVar(&o.Identity.Hardware, "hardware", "", "GPU type: H100, H200, B200, GB300, ...")
	f.StringVar(&o.Identity.Quant, "quant", "", "weight quantization: BF16, FP8, NVFP4, ...")
	f.IntVar(&o.Identity.TensorParallel, "tp", 0, "tensor-parallel degree (GPUs per replica)")
	f.IntVar(&o.Identity.GPUs, "gpus", 0, "GPUs serving the endpoint (default: --tp)")
	boundAs[schema.Identity](f, "tp", "TensorParallel", "cells[].tensor_parallel")
	boundAs[schema.Identity](f, "gpus", "GPUs", "cells[].gpus")
	output(f, "into", campaigndir.TargetFile)
	f.StringVar(&o.Identity.ParallelStrategy, "parallel-strategy", "", "EP or TP")
	f.StringVar(&o.Identity.Engine, "engine", "", "engine: vllm, sglang, dynamo, ... (default: implied by a vLLM or SGLang output)")
	f.StringVar(&o.Identity.EngineVersion, "engine-version", "", "engine version or commit")
	f.StringVar(&o.Identity.Delivery, "delivery", "", "code-under-test identity the results are evidence for")
	f.StringVar(&o.Identity.CacheMode, "cache-mode", "", "prefix cache during the run: warm or cold")
	f.StringVar(&o.Identity.Arm, "arm", "", "champion-select arm of the cell")
	f.BoolVar(&o.Identity.Baseline, "baseline", false, "the cell's arm is the champion baseline")
	f.BoolVar(&bundle, "bundle", false, "PATH is a variant A/B bundle: one cell per arm")
	f.StringVar(&baselineArm, "baseline-arm", "", "with --bundle: the baseline `ARM` (default: the manifest's baseline)")
	return cmd
}

// appendCells adds cells to the campaign file at path, writing it only when the result is a
// valid campaign.
func (a *app) appendCells(path string, cells []schema.Cell, notes []string) error {
	created, err := importcell.AppendInto(path, cells, func(out []byte) error {
		_, _, err := a.compile(path, out, "")
		return err
	})
	var srcErr *importcell.SourceError
	switch {
	case errors.As(err, &srcErr):
		return exitf(ExitUsage, "--into %s: %v", path, srcErr.Err)
	case err != nil:
		return a.invalidCells(err, path+" with the imported cell(s) would not be valid; the file is unchanged:")
	}
	if created {
		fmt.Fprintf(a.stdout, "%s: created campaign %s\n", path, importcell.ID(strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))))
	}
	for _, c := range cells {
		fmt.Fprintf(a.stdout, "%s: added cell %s (%s, %s)\n", path, c.ID, c.Import.Format, importcell.PointsText(c))
	}
	for _, n := range notes {
		fmt.Fprintf(a.stdout, "  %s\n", n)
	}
	fmt.Fprintf(a.stdout, "next: perfdag run %s (into an existing --out DIR, only the new cells and what reads them run)\n", path)
	return nil
}

// validateCells checks printed cells as --into checks the campaign it would create: a cell
// --into refuses is refused here too, with the same problems.
func (a *app) validateCells(cells []schema.Cell) error {
	const name = "imported.yaml"
	err := importcell.Validate(name, cells, func(src []byte) error {
		_, _, err := a.compile(name, src, "")
		return err
	})
	if err != nil {
		return a.invalidCells(err, "the imported cell(s) would not be valid in a campaign (shown as the "+name+" --into would create); nothing is printed:")
	}
	return nil
}

// invalidCells reports cells a campaign would refuse: its positioned problems under header,
// exit 3.
func (a *app) invalidCells(err error, header string) error {
	var invErr *importcell.InvalidError
	switch {
	case !errors.As(err, &invErr):
		return err
	case invErr.Src == nil:
		return exit(ExitInvalid, invErr.Err)
	}
	fmt.Fprintln(a.stderr, header)
	if reportDiags(a.stderr, invErr.Err, map[string][]byte{invErr.Path: invErr.Src}, false) {
		return exit(ExitInvalid, nil)
	}
	return exit(ExitInvalid, invErr.Err)
}
