package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/analysis/tpm"
)

func (a *app) tpmCmd() *cobra.Command {
	var (
		ttft, tpot    float64
		gpusPerNode   int
		asJSON        bool
		out           string
		campaignLabel string
	)
	cmd := &cobra.Command{
		Use:   "tpm DIR",
		Short: "Re-derive a campaign's TPM and cost summary, optionally under other SLA thresholds",
		Long: `TPM rolls a finished campaign's atlas into tokens-per-minute capacity and cost per
deployment group (model, hardware, quant, TP, strategy, MTP, shape), exactly as the aggregate
step does, and prints it (Markdown, or --json). No benchmark is re-run, and the campaign
directory is never changed: --out DIR2 writes the summary's JSON, CSV and Markdown files there.

For each group it reports a peak point (the highest output tok/s/GPU of the sweep: a warm
best case, not a commitment) and an SLA point (the highest output tok/s/GPU among points
meeting TTFT mean <= --ttft-sla-ms and TPOT mean <= --tpot-sla-ms: the
customer-commitment number), each per GPU, per replica (tensor_parallel GPUs) and per node
(--gpus-per-node GPUs), for output and for total (input + output) tokens, with $ per 1M
tokens from the campaign's cost: block over the default $/GPU-hour table, and tokens per
watt where DCGM captured power. A
group whose rows carry no TPOT has no SLA point: it is left unset, never invented.

Thresholds come from the campaign's tpm: block (defaults TTFT 2000 ms, TPOT 50 ms, 8 GPUs
per node); each flag overrides one field. To make thresholds part of the campaign, put them
in its tpm: block and run it again (only the aggregate and what reads it re-run).

Exit status: 0 on success, 1 when the campaign's results are stale or unreadable, 2 on bad
usage or a directory that is not a finished campaign.`,
		Example: `  perfdag tpm campaigns/20261202T130455Z-kimi-k26-aa
  perfdag tpm --ttft-sla-ms 500 --tpot-sla-ms 30 DIR
  perfdag tpm --gpus-per-node 4 --json DIR | jq '.groups[].sla.output_tpm_per_gpu'
  perfdag tpm --ttft-sla-ms 500 --out /tmp/tight-sla DIR`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := a.open(args[0])
			if err != nil {
				return err
			}
			if f.Evidence.Atlas == "" {
				return exitf(ExitUsage, "%s has no atlas: finish the campaign (its aggregate step writes it) with 'perfdag resume %s'", f.Dir, f.Dir)
			}
			cfg := tpm.ConfigFor(f.Spec)
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
			if name == "" {
				name = f.Spec.Campaign
			}
			sum, err := tpm.SummarizeAtlas(cmd.Context(), f.Files, f.Evidence.Atlas, name, cfg)
			if err != nil {
				return exit(ExitFailed, err)
			}
			if out != "" {
				names, err := tpm.Write(out, sum)
				if err != nil {
					return exit(ExitFailed, err)
				}
				for _, n := range names {
					fmt.Fprintf(a.stderr, "wrote %s\n", filepath.Join(out, n))
				}
			}
			if asJSON {
				return writeJSON(a.stdout, sum)
			}
			fmt.Fprint(a.stdout, tpm.Markdown(sum))
			return nil
		},
	}
	f := cmd.Flags()
	f.Float64Var(&ttft, "ttft-sla-ms", 0, "TTFT threshold of the SLA point in ms (default: the campaign's tpm: block, else 2000)")
	f.Float64Var(&tpot, "tpot-sla-ms", 0, "TPOT threshold of the SLA point in ms (default: the campaign's tpm: block, else 50)")
	f.IntVar(&gpusPerNode, "gpus-per-node", 0, "GPUs per node for per-node TPM (default: the campaign's tpm: block, else 8)")
	f.BoolVar(&asJSON, "json", false, "print the summary as JSON instead of the markdown tables")
	f.StringVar(&out, "out", "", "also write the summary's JSON, CSV and Markdown files into this directory (never the campaign's)")
	f.StringVar(&campaignLabel, "campaign", "", "campaign name in the summary (default: the campaign's slug)")
	boundAs[schema.TPM](f, "ttft-sla-ms", "TTFTSLAMs", "tpm.ttft_sla_ms")
	boundAs[schema.TPM](f, "tpot-sla-ms", "TPOTSLAMs", "tpm.tpot_sla_ms")
	boundAs[schema.TPM](f, "gpus-per-node", "GPUsPerNode", "tpm.gpus_per_node")
	output(f, "out", campaigndir.TargetFolder)
	return cmd
}
