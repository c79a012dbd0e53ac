package tpm

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"strconv"
	"strings"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/analysis/atlas"
)

// SummarizeAtlas streams a recorded atlas into a summary.
func SummarizeAtlas(ctx context.Context, r campaigndir.Reader, rel, campaign string, cfg Config) (schema.TPMSummary, error) {
	a := NewAccumulator(campaign, cfg)
	if err := atlas.Scan(ctx, r, rel, a.Add); err != nil {
		return schema.TPMSummary{}, fmt.Errorf("tpm summary: %w", err)
	}
	return a.Summary(), nil
}

// Write writes the summary's JSON, CSV and Markdown forms into dir atomically and returns
// their paths relative to dir. Each opens with the summary's caveat (the CSV as a "# " line).
func Write(dir string, s schema.TPMSummary) ([]string, error) {
	js, err := campaigndir.EncodeJSON(s)
	if err != nil {
		return nil, fmt.Errorf("encode the TPM summary: %w", err)
	}
	cs, err := CSV(s)
	if err != nil {
		return nil, err
	}
	files := []struct {
		name string
		data []byte
	}{{campaigndir.TPMJSON(), js}, {campaigndir.TPMCSV(), cs}, {campaigndir.TPMMarkdown(), []byte(Markdown(s))}}
	var names []string
	for _, f := range files {
		if err := campaigndir.WriteFile(campaigndir.Abs(dir, f.name), f.data); err != nil {
			return names, err
		}
		names = append(names, f.name)
	}
	return names, nil
}

// csvHeader names the CSV columns: one line per group and point (peak, sla).
var csvHeader = []string{
	"model", "hardware", "quant", "tensor_parallel", "parallel_strategy", "mtp", "shape", "point",
	"cell_id", "concurrency", "cache_mode", "mean_isl", "mean_osl", "ttft_avg_ms", "tpot_avg_ms",
	"output_tok_s_per_gpu", "total_tok_s_per_gpu",
	"output_tpm_per_gpu", "output_tpm_per_replica", "output_tpm_per_node",
	"total_tpm_per_gpu", "total_tpm_per_replica", "total_tpm_per_node",
	"usd_per_gpu_hour", "rate_estimate", "usd_per_1m_output", "usd_per_1m_total",
	"power_watts_per_gpu", "tokens_per_watt", "flags", "note",
}

// CSV renders the summary as CSV; null values are "n/a", an unset SLA point is a row saying why.
func CSV(s schema.TPMSummary) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString("# " + s.Caveat + "\n")
	w := csv.NewWriter(&buf)
	_ = w.Write(csvHeader)
	for _, g := range s.Groups {
		_ = w.Write(csvLine(g.TPMGroupKey, &g.Peak, &g.PeakCost, ""))
		if g.SLA != nil {
			_ = w.Write(csvLine(g.TPMGroupKey, g.SLA, g.SLACost, ""))
		} else {
			_ = w.Write(csvLine(g.TPMGroupKey, nil, nil, g.SLANote))
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return nil, fmt.Errorf("encode the TPM summary as CSV: %w", err)
	}
	return buf.Bytes(), nil
}

func csvLine(k schema.TPMGroupKey, t *schema.TPMRow, c *schema.CostRow, note string) []string {
	line := []string{k.Model, k.Hardware, k.Quant, strconv.Itoa(k.TensorParallel), k.ParallelStrategy,
		strconv.FormatBool(k.MTP), k.Shape}
	if t == nil {
		line = append(line, schema.TPMPointSLA)
		for len(line) < len(csvHeader)-1 {
			line = append(line, "n/a")
		}
		return append(line, note)
	}
	return append(line, t.Point, t.CellID, strconv.Itoa(t.Concurrency), t.CacheMode,
		num(t.MeanISL), num(t.MeanOSL), num(t.TTFTAvgMs), num(t.TPOTAvgMs),
		num(&t.OutputTokPerSPerGPU), num(t.TotalTokPerSPerGPU),
		num(&t.OutputTPMPerGPU), num(&t.OutputTPMPerReplica), num(&t.OutputTPMPerNode),
		num(t.TotalTPMPerGPU), num(t.TotalTPMPerReplica), num(t.TotalTPMPerNode),
		num(c.USDPerGPUHour), strconv.FormatBool(c.RateEstimate), num(c.USDPer1MOutput), num(c.USDPer1MTotal),
		num(c.PowerWattsPerGPU), num(c.TokensPerWatt), strings.Join(t.Flags, ";"), note)
}

func num(p *float64) string {
	if p == nil {
		return "n/a"
	}
	return strconv.FormatFloat(*p, 'g', 10, 64)
}

// Markdown renders the summary for a human: the caveat, then one table for TPM and one for cost.
func Markdown(s schema.TPMSummary) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# TPM supported across hardware types — %s\n\n> %s\n\n", s.Campaign, s.Caveat)
	if len(s.Groups) == 0 {
		b.WriteString("No atlas row carries a measured output tok/s/GPU: nothing to summarize.\n")
		return b.String()
	}
	b.WriteString("## Tokens per minute\n\n")
	b.WriteString("| model | hardware | quant | TP | strategy | MTP | shape | point | cell @ c | cache | ISL/OSL | TTFT mean (ms) | TPOT mean (ms) | out TPM/GPU | out TPM/replica | out TPM/node | total TPM/GPU | total TPM/replica | total TPM/node |\n")
	b.WriteString("|---|---|---|--:|---|---|---|---|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, g := range s.Groups {
		for _, t := range []*schema.TPMRow{&g.Peak, g.SLA} {
			k := g.TPMGroupKey
			prefix := fmt.Sprintf("| %s | %s | %s | %d | %s | %s | %s |", k.Model, k.Hardware, k.Quant, k.TensorParallel,
				k.ParallelStrategy, onOff(k.MTP), k.Shape)
			if t == nil {
				fmt.Fprintf(&b, "%s sla | — | | | | | *%s* | | | | | |\n", prefix, g.SLANote)
				continue
			}
			where := t.CellID + " @ " + t.PointLoad().Key()
			if len(t.Flags) > 0 {
				where += " (" + strings.Join(t.Flags, ", ") + ")"
			}
			fmt.Fprintf(&b, "%s %s | %s | %s | %s/%s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
				prefix, t.Point, where, orDash(t.CacheMode), group(t.MeanISL, 0), group(t.MeanOSL, 0),
				group(t.TTFTAvgMs, 0), group(t.TPOTAvgMs, 1),
				group(&t.OutputTPMPerGPU, 0), group(&t.OutputTPMPerReplica, 0), group(&t.OutputTPMPerNode, 0),
				group(t.TotalTPMPerGPU, 0), group(t.TotalTPMPerReplica, 0), group(t.TotalTPMPerNode, 0))
		}
	}
	b.WriteString("\n## Cost and energy\n\n")
	b.WriteString("| model | hardware | shape | point | $/GPU-hour | $/1M output | $/1M total | W/GPU | tokens/W | rate source |\n")
	b.WriteString("|---|---|---|---|--:|--:|--:|--:|--:|---|\n")
	for _, g := range s.Groups {
		for _, c := range []*schema.CostRow{&g.PeakCost, g.SLACost} {
			if c == nil {
				continue
			}
			rate := "n/a"
			if c.USDPerGPUHour != nil {
				rate = "$" + strconv.FormatFloat(*c.USDPerGPUHour, 'f', 2, 64)
				if c.RateEstimate {
					rate += " (ESTIMATE)"
				}
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", c.Model, c.Hardware, c.Shape, c.Point,
				rate, dollars(c.USDPer1MOutput), dollars(c.USDPer1MTotal), group(c.PowerWattsPerGPU, 0),
				group(c.TokensPerWatt, 3), orDash(c.RateSource))
		}
	}
	b.WriteString("\nn/a: not measured (total TPM needs input token counts; $ needs a rate; tokens/W needs DCGM power).\n")
	return b.String()
}

// group formats a number with thousands separators ("1,234,567.8"); nil is "n/a".
func group(p *float64, decimals int) string {
	if p == nil {
		return "n/a"
	}
	s := strconv.FormatFloat(*p, 'f', decimals, 64)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	intPart, frac, hasFrac := strings.Cut(s, ".")
	var out []byte
	for i, ch := range []byte(intPart) {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, ch)
	}
	res := string(out)
	if hasFrac {
		res += "." + frac
	}
	if neg {
		res = "-" + res
	}
	return res
}

func dollars(p *float64) string {
	if p == nil {
		return "n/a"
	}
	return "$" + group(p, 3)
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
