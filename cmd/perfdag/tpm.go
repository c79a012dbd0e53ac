package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/goccy/go-yaml"
	"github.com/spf13/cobra"

	"github.com/perfdag/perfdag/engine/load"
	"github.com/perfdag/perfdag/engine/workspace"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/analysis/atlas"
	"github.com/perfdag/perfdag/steps/analysis/tpm"
)

func (a *app) tpmCmd() *cobra.Command {
	var (
		ttft, tpot    float64
		gpusPerNode   int
		asJSON, dry   bool
		campaignLabel string
	)
	cmd := &cobra.Command{
		Use:   "tpm DIR",
		Short: "Re-derive a campaign's TPM and cost summary, optionally under other SLA thresholds",
		Long: `TPM rolls a campaign directory's atlas.jsonl into tokens-per-minute capacity and cost per
deployment group (model, hardware, quant, TP, strategy, MTP, shape), exactly as the aggregate
step does, and rewrites DIR/tpm_summary.{json,csv,md}. No benchmark is re-run.

For each group it reports a peak point (the highest output tok/s/GPU of the sweep: a warm
best case, not a commitment) and an SLA point (the highest output tok/s/GPU among points
meeting TTFT <= --ttft-sla-ms and TPOT <= --tpot-sla-ms: the customer-commitment number),
each per GPU, per replica (tensor_parallel GPUs) and per node (--gpus-per-node GPUs), for
output and for total (input + output) tokens, with $ per 1M tokens from the campaign's cost:
block over the default $/GPU-hour table, and tokens per watt where DCGM captured power. A
group whose rows carry no TPOT has no SLA point: it is left unset, never invented.

Thresholds come from the campaign's tpm: block in DIR/config.yaml (defaults TTFT 2000 ms,
TPOT 50 ms, 8 GPUs per node); each flag overrides one field. The files written here are
replaced the next time the campaign's aggregate step runs, which uses the tpm: block: to
make thresholds permanent, put them there.

Exit status: 0 on success, 1 when the atlas cannot be read or the files cannot be written
(or a run holds DIR), 2 on bad usage or a directory without atlas.jsonl.`,
		Example: `  perfdag tpm campaigns/20261202T130455Z-kimi-k26-aa
  perfdag tpm --ttft-sla-ms 500 --tpot-sla-ms 30 DIR
  perfdag tpm --gpus-per-node 4 --json --no-write DIR | jq '.groups[].sla.output_tpm_per_gpu'`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			path := filepath.Join(dir, atlas.AtlasFile)
			if _, err := os.Stat(path); err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return exitf(ExitUsage, "%s has no %s: run the campaign (its aggregate step writes it) or point at a campaign directory", dir, atlas.AtlasFile)
				}
				return exit(ExitUsage, err)
			}
			spec, note := campaignForTPM(dir)
			if note != "" {
				fmt.Fprintf(a.stderr, "note: %s\n", note)
			}
			cfg := tpm.ConfigFor(spec)
			flags := cmd.Flags()
			if flags.Changed("ttft-sla-ms") {
				if ttft <= 0 {
					return exitf(ExitUsage, "--ttft-sla-ms %g: want a positive threshold in ms, e.g. 2000", ttft)
				}
				cfg.TTFTSLAMs = ttft
			}
			if flags.Changed("tpot-sla-ms") {
				if tpot <= 0 {
					return exitf(ExitUsage, "--tpot-sla-ms %g: want a positive threshold in ms, e.g. 50", tpot)
				}
				cfg.TPOTSLAMs = tpot
			}
			if flags.Changed("gpus-per-node") {
				if gpusPerNode <= 0 {
					return exitf(ExitUsage, "--gpus-per-node %d: want a positive GPU count, e.g. 8", gpusPerNode)
				}
				cfg.GPUsPerNode = gpusPerNode
			}
			name := campaignLabel
			if name == "" && spec != nil {
				name = spec.Campaign
			}
			if name == "" {
				name = filepath.Base(filepath.Clean(dir))
			}
			sum, err := tpm.SummarizeFile(cmd.Context(), path, name, cfg)
			if err != nil {
				return exit(ExitFailed, err)
			}
			if !dry {
				if workspace.Locked(dir) {
					return exitf(ExitFailed, "a run holds %s right now: wait for it, or use --no-write to print without writing", dir)
				}
				if _, err := tpm.Write(dir, sum); err != nil {
					return exit(ExitFailed, err)
				}
			}
			if asJSON {
				if err := writeJSON(a.stdout, sum); err != nil {
					return exit(ExitFailed, err)
				}
			} else {
				fmt.Fprint(a.stdout, tpm.Markdown(sum))
			}
			if !dry {
				fmt.Fprintf(a.stderr, "wrote %s\n", filepath.Join(dir, "tpm_summary.{json,csv,md}"))
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.Float64Var(&ttft, "ttft-sla-ms", 0, "TTFT threshold of the SLA point in ms (default: the campaign's tpm: block, else 2000)")
	f.Float64Var(&tpot, "tpot-sla-ms", 0, "TPOT threshold of the SLA point in ms (default: the campaign's tpm: block, else 50)")
	f.IntVar(&gpusPerNode, "gpus-per-node", 0, "GPUs per node for per-node TPM (default: the campaign's tpm: block, else 8)")
	f.BoolVar(&asJSON, "json", false, "print tpm_summary.json instead of the markdown tables")
	f.BoolVar(&dry, "no-write", false, "print only; leave DIR/tpm_summary.* as they are")
	f.StringVar(&campaignLabel, "campaign", "", "campaign name in the summary (default: the frozen config's slug)")
	return cmd
}

// campaignForTPM reads the campaign a directory froze, for its slug and its tpm: and cost:
// blocks: through the loader when the file still validates, else leniently (a frozen file may
// name environment variables that are not set now). A note says what was assumed.
func campaignForTPM(dir string) (*schema.Campaign, string) {
	path := filepath.Join(dir, workspace.ConfigFile)
	src, err := load.ReadSource(path)
	if err != nil {
		return nil, fmt.Sprintf("no readable %s (%v): using the default SLA and cost table", path, err)
	}
	baseDir := dir
	if info, err := workspace.ReadInfo(dir); err == nil && info.BaseDir != "" {
		baseDir = info.BaseDir
	}
	if reg, err := registry(); err == nil {
		if c, err := load.Bytes(path, baseDir, src, reg, load.Options{}); err == nil {
			return c.Spec, ""
		}
	}
	var lenient struct {
		Campaign string       `yaml:"campaign"`
		TPM      *schema.TPM  `yaml:"tpm"`
		Cost     *schema.Cost `yaml:"cost"`
	}
	if err := yaml.Unmarshal(src, &lenient); err != nil {
		return nil, fmt.Sprintf("%s does not parse (%v): using the default SLA and cost table", path, err)
	}
	return &schema.Campaign{Campaign: lenient.Campaign, TPM: lenient.TPM, Cost: lenient.Cost},
		fmt.Sprintf("%s does not validate as it stands: read its campaign, tpm: and cost: blocks as written", path)
}
