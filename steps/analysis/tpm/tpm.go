// Package tpm rolls an atlas into tokens-per-minute capacity and cost per deployment group:
// for each (model, hardware, quant, TP, strategy, MTP, shape) a peak point — the warm best case
// of the sweep — and an SLA point — the highest output tok/s/GPU meeting TTFT and TPOT
// thresholds, the customer-commitment number — each per GPU, per replica and per node, for
// output and total tokens, with $/1M tokens and tokens per watt.
//
// Formulas (tok/s/GPU as measured; R = $/GPU-hour):
//
//	TPM per GPU      = tok/s/GPU × 60
//	TPM per replica  = TPM per GPU × tensor_parallel
//	TPM per node     = TPM per GPU × gpus_per_node
//	$/1M tokens      = R ÷ (tok/s/GPU × 3600) × 1e6
//
// The rows are consumed one at a time (Accumulator.Add), so an atlas of any size is summarized
// in memory proportional to the number of groups.
package tpm

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/analysis/atlas"
	"github.com/perfdag/perfdag/steps/catalog"
)

// Defaults used when a campaign has no tpm: block (seed 001).
const (
	DefaultTTFTSLAMs   = 2000.0
	DefaultTPOTSLAMs   = 50.0
	DefaultGPUsPerNode = 8
)

// Config holds the SLA thresholds and the campaign's $/GPU-hour overlay.
type Config struct {
	TTFTSLAMs   float64
	TPOTSLAMs   float64
	GPUsPerNode int
	Rates       map[string]float64 // campaign cost: block, by hardware name (case-insensitive)
}

// ConfigFor resolves a campaign's TPM settings: defaults overlaid field by field by tpm: and
// cost: blocks. A nil campaign yields the defaults.
func ConfigFor(c *schema.Campaign) Config {
	cfg := Config{TTFTSLAMs: DefaultTTFTSLAMs, TPOTSLAMs: DefaultTPOTSLAMs, GPUsPerNode: DefaultGPUsPerNode}
	if c == nil {
		return cfg
	}
	if c.TPM != nil {
		if c.TPM.TTFTSLAMs > 0 {
			cfg.TTFTSLAMs = c.TPM.TTFTSLAMs
		}
		if c.TPM.TPOTSLAMs > 0 {
			cfg.TPOTSLAMs = c.TPM.TPOTSLAMs
		}
		if c.TPM.GPUsPerNode > 0 {
			cfg.GPUsPerNode = c.TPM.GPUsPerNode
		}
	}
	if c.Cost != nil {
		cfg.Rates = maps.Clone(c.Cost.USDPerGPUHour)
	}
	return cfg
}

// Rate is a resolved $/GPU-hour and where it came from.
type Rate struct {
	USDPerGPUHour float64
	Estimate      bool
	Source        string
}

// Rate resolves the $/GPU-hour of a hardware: the campaign's cost: block first, then the
// catalog's default table; ok is false when neither knows the hardware.
func (c Config) Rate(hardware string) (Rate, bool) {
	for hw, usd := range c.Rates {
		if strings.EqualFold(hw, hardware) && usd > 0 {
			return Rate{USDPerGPUHour: usd, Source: "campaign cost: block"}, true
		}
	}
	if r, ok := catalog.RateFor(hardware); ok {
		return Rate{USDPerGPUHour: r.USDPerGPUHour, Estimate: r.Estimate, Source: "catalog: " + r.Source}, true
	}
	return Rate{}, false
}

// PerMinute converts tokens per second to tokens per minute (TPM).
func PerMinute(tokPerS float64) float64 { return tokPerS * 60 }

// USDPerMillion is the cost of one million tokens at a $/GPU-hour rate and a per-GPU rate of
// tokens: R ÷ (tok/s/GPU × 3600) × 1e6. Zero throughput has no cost figure (nil).
func USDPerMillion(usdPerGPUHour, tokPerSPerGPU float64) *float64 {
	if tokPerSPerGPU <= 0 || usdPerGPUHour <= 0 {
		return nil
	}
	v := usdPerGPUHour / (tokPerSPerGPU * 3600) * 1e6
	return &v
}

// groupAcc is a group's running state: its best rows so far, never the rows themselves.
type groupAcc struct {
	key        schema.TPMGroupKey
	rows       int
	peak       schema.AtlasRow
	sla        *schema.AtlasRow
	decode     int // rows carrying a TPOT (ITL) value
	decodeTTFT int // of which also carry TTFT
}

// Accumulator builds a TPM summary from atlas rows streamed one at a time.
type Accumulator struct {
	campaign string
	cfg      Config
	groups   map[schema.TPMGroupKey]*groupAcc
	cost     atlas.CostTally
}

// NewAccumulator starts an empty summary for a campaign.
func NewAccumulator(campaign string, cfg Config) *Accumulator {
	if cfg.GPUsPerNode <= 0 {
		cfg.GPUsPerNode = DefaultGPUsPerNode
	}
	if cfg.TTFTSLAMs <= 0 {
		cfg.TTFTSLAMs = DefaultTTFTSLAMs
	}
	if cfg.TPOTSLAMs <= 0 {
		cfg.TPOTSLAMs = DefaultTPOTSLAMs
	}
	return &Accumulator{campaign: campaign, cfg: cfg, groups: map[schema.TPMGroupKey]*groupAcc{}}
}

// KeyOf is the TPM group a row belongs to.
func KeyOf(r *schema.AtlasRow) schema.TPMGroupKey {
	return schema.TPMGroupKey{Model: r.Model, Hardware: r.Hardware, Quant: r.Quant, TensorParallel: r.TensorParallel,
		ParallelStrategy: r.ParallelStrategy, MTP: r.MTP, Shape: r.Shape}
}

// Add folds one row in; rows without a measured output tok/s/GPU are skipped. It never fails
// (the error result fits atlas.AggregateDir's observe signature). The row is copied.
func (a *Accumulator) Add(r *schema.AtlasRow) error {
	a.cost.Add(r)
	if r.OutputTokPerSPerGPU == nil || *r.OutputTokPerSPerGPU <= 0 || r.CellStatus == schema.CellFailed {
		return nil
	}
	k := KeyOf(r)
	g := a.groups[k]
	if g == nil {
		g = &groupAcc{key: k}
		a.groups[k] = g
	}
	g.rows++
	if g.rows == 1 || better(r, &g.peak) {
		g.peak = copyRow(r)
	}
	if r.ITLAvgMs != nil {
		g.decode++
		if r.TTFTAvgMs != nil {
			g.decodeTTFT++
		}
	}
	if meetsSLA(r, a.cfg) && (g.sla == nil || better(r, g.sla)) {
		c := copyRow(r)
		g.sla = &c
	}
	return nil
}

// meetsSLA: TTFT avg ≤ TTFT SLA and TPOT (= ITL avg) ≤ TPOT SLA; both must be measured.
func meetsSLA(r *schema.AtlasRow, cfg Config) bool {
	return r.TTFTAvgMs != nil && r.ITLAvgMs != nil && *r.TTFTAvgMs <= cfg.TTFTSLAMs && *r.ITLAvgMs <= cfg.TPOTSLAMs
}

// better: higher output tok/s/GPU wins; ties go to the earlier row in atlas order.
func better(r, than *schema.AtlasRow) bool {
	return cmp.Or(
		cmp.Compare(*than.OutputTokPerSPerGPU, *r.OutputTokPerSPerGPU),
		cmp.Compare(r.CellID, than.CellID),
		r.PointLoad().Compare(than.PointLoad()),
	) < 0
}

// rateLoad is a rate point's load, zero for a concurrency point (whose rows keep the form
// they had before points were keyed by load).
func rateLoad(r *schema.AtlasRow) schema.Load {
	if l := r.PointLoad(); l.IsRate() {
		return l
	}
	return schema.Load{}
}

// copyRow keeps what the summary reads; pointers into a reused row must not survive it.
func copyRow(r *schema.AtlasRow) schema.AtlasRow {
	c := *r
	c.Flags = slices.Clone(r.Flags)
	c.Extra = nil
	for _, p := range []**float64{&c.TTFTAvgMs, &c.ITLAvgMs, &c.OutputTokPerSPerGPU, &c.TotalTokPerSPerGPU,
		&c.MeanInputTokens, &c.MeanOutputTokens, &c.PowerWattsPerGPU, &c.TokensPerWatt} {
		if *p != nil {
			v := **p
			*p = &v
		}
	}
	return c
}

// Summary builds the summary of every row added so far, groups in key order.
func (a *Accumulator) Summary() schema.TPMSummary {
	s := schema.TPMSummary{
		Schema: schema.SchemaTPMSummary, Campaign: a.campaign, Caveat: Caveat(a.cfg),
		TTFTSLAMs: a.cfg.TTFTSLAMs, TPOTSLAMs: a.cfg.TPOTSLAMs, GPUsPerNode: a.cfg.GPUsPerNode,
		Groups: []schema.TPMGroup{}, MeasurementCost: a.cost.Cost(),
	}
	keys := slices.SortedFunc(maps.Keys(a.groups), compareKeys)
	for _, k := range keys {
		g := a.groups[k]
		out := schema.TPMGroup{TPMGroupKey: k, Rows: g.rows}
		out.Peak, out.PeakCost = a.point(schema.TPMPointPeak, &g.peak)
		switch {
		case g.sla != nil:
			row, cost := a.point(schema.TPMPointSLA, g.sla)
			out.SLA, out.SLACost = &row, &cost
		case g.decode == 0:
			out.SLANote = "no decode metric (TPOT/ITL) in this group's rows: re-run with decode capture for an SLA point"
		case g.decodeTTFT == 0:
			out.SLANote = "no row carries both TTFT and TPOT: no SLA point"
		default:
			out.SLANote = fmt.Sprintf("no row meets TTFT mean <= %g ms and TPOT mean <= %g ms", a.cfg.TTFTSLAMs, a.cfg.TPOTSLAMs)
		}
		s.Groups = append(s.Groups, out)
	}
	return s
}

// point turns a chosen atlas row into its tpm_v1 and cost_v1 rows.
func (a *Accumulator) point(kind string, r *schema.AtlasRow) (schema.TPMRow, schema.CostRow) {
	replica := r.TensorParallel
	if replica <= 0 {
		replica = max(r.GPUs, 1)
	}
	out := *r.OutputTokPerSPerGPU
	t := schema.TPMRow{
		Schema: schema.SchemaTPM, Campaign: a.campaign, Point: kind, TPMGroupKey: KeyOf(r),
		CellID: r.CellID, Concurrency: r.Concurrency, Load: rateLoad(r), CacheMode: r.CacheMode, Engine: r.Engine, Delivery: r.Delivery,
		GPUsPerNode: a.cfg.GPUsPerNode, MeanISL: r.MeanInputTokens, MeanOSL: r.MeanOutputTokens,
		TTFTAvgMs: r.TTFTAvgMs, TPOTAvgMs: r.ITLAvgMs, TTFTSLAMs: a.cfg.TTFTSLAMs, TPOTSLAMs: a.cfg.TPOTSLAMs,
		OutputTokPerSPerGPU: out,
		OutputTPMPerGPU:     PerMinute(out),
		OutputTPMPerReplica: PerMinute(out) * float64(replica),
		OutputTPMPerNode:    PerMinute(out) * float64(a.cfg.GPUsPerNode),
		Flags:               slices.Clone(r.Flags),
	}
	total := totalPerGPU(r)
	if total != nil {
		t.TotalTokPerSPerGPU = total
		t.TotalTPMPerGPU = schema.F(PerMinute(*total))
		t.TotalTPMPerReplica = schema.F(PerMinute(*total) * float64(replica))
		t.TotalTPMPerNode = schema.F(PerMinute(*total) * float64(a.cfg.GPUsPerNode))
	}
	c := schema.CostRow{
		Schema: schema.SchemaCost, Campaign: a.campaign, Point: kind, TPMGroupKey: t.TPMGroupKey,
		CellID: r.CellID, Concurrency: r.Concurrency, Load: rateLoad(r),
		PowerWattsPerGPU: r.PowerWattsPerGPU, TokensPerWatt: r.TokensPerWatt,
	}
	if rate, ok := a.cfg.Rate(r.Hardware); ok {
		c.USDPerGPUHour, c.RateEstimate, c.RateSource = schema.F(rate.USDPerGPUHour), rate.Estimate, rate.Source
		c.USDPer1MOutput = USDPerMillion(rate.USDPerGPUHour, out)
		if total != nil {
			c.USDPer1MTotal = USDPerMillion(rate.USDPerGPUHour, *total)
		}
	}
	return t, c
}

// totalPerGPU is the row's total (input+output) tok/s/GPU, or nil when input tokens are unknown.
func totalPerGPU(r *schema.AtlasRow) *float64 {
	if r.TotalTokPerSPerGPU == nil || r.MeanInputTokens == nil || *r.TotalTokPerSPerGPU <= 0 {
		return nil
	}
	return r.TotalTokPerSPerGPU
}

func compareKeys(a, b schema.TPMGroupKey) int {
	return cmp.Or(cmp.Compare(a.Model, b.Model), cmp.Compare(a.Hardware, b.Hardware), cmp.Compare(a.Quant, b.Quant),
		cmp.Compare(a.TensorParallel, b.TensorParallel), cmp.Compare(a.ParallelStrategy, b.ParallelStrategy),
		cmp.Compare(fmt.Sprint(a.MTP), fmt.Sprint(b.MTP)), cmp.Compare(a.Shape, b.Shape))
}

// Caveat is the header every TPM surface carries (server/AGENTS.md methodology hygiene). It
// names the statistic (the SLA compares means, as the TPM rows carry them) and counts devices,
// not GPUs: a CPU or unknown accelerator reads it as rightly as a GPU.
func Caveat(cfg Config) string {
	return fmt.Sprintf("Caveat: peak TPM is the best point of the sweep, a warm-cache best case unless the row says cold, "+
		"measured at that row's ISL/OSL; it is not a capacity commitment. The SLA point (TTFT mean <= %g ms, TPOT mean <= %g ms) is the "+
		"customer-commitment number. Per replica = the tensor_parallel devices serving one copy; per node = %d devices (tpm.gpus_per_node).",
		cfg.TTFTSLAMs, cfg.TPOTSLAMs, cfg.GPUsPerNode)
}

// Summarize is the in-memory form: fold rows into a summary.
func Summarize(campaign string, cfg Config, rows []schema.AtlasRow) schema.TPMSummary {
	a := NewAccumulator(campaign, cfg)
	for i := range rows {
		_ = a.Add(&rows[i])
	}
	return a.Summary()
}
