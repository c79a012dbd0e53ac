// Package report renders a campaign into the PDF a stakeholder reads: a cover with the coverage
// line, caveats and the source under test, scatter panes per max_num_batched_tokens, heatmap
// tables at fixed concurrencies, the AA, TPM, DCGM, roofline, champion and spec-decode pages,
// and a measured-vs-imported comparison when a campaign holds both at the same point.
// A page whose data is missing says so in one line instead of vanishing. The same page builders
// also write the report as one self-contained HTML file (RenderHTML) with interactive SVG charts.
package report

import (
	"slices"

	"github.com/perfdag/perfdag/steps/analysis/history"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// FlagEvicted marks an atlas row measured while the server evicted (preempted) request context
// from its KV cache, so the latencies include recomputation; the report footnotes such rows.
const FlagEvicted = "evicted"

// Input is everything the report reads; every part but the atlas may be absent (nil or empty).
type Input struct {
	Dir      string                   // campaign directory it was loaded from; "" when built in memory
	Campaign *schema.Campaign         // the frozen campaign, defaults merged
	Atlas    []schema.AtlasRow        // every cell's rows
	TPM      *schema.TPMSummary       // the TPM and cost rollup
	DCGM     []schema.DCGMCorrelation // per-cell DCGM correlations
	Spec     []schema.SpecWindow      // per-point server-metric windows
	Roofline []schema.RooflineSweep   // imported roofline sweeps
	Champion *schema.Champion         // champion-select's decision
	Run      *campaigndir.Info        // the run's record: perfdag version, host, endpoints, servers
	Gates    []schema.GateVerdict     // the quality-gate verdicts of the campaign's nodes
	Sweeps   []schema.SweepResult     // cells' run-time sweeps: SLO searches and stopped lists
	// Calibration is the client machine's overhead (calibration.json from perfdag calibrate):
	// the cover's TTFT error bar. CalibrationErr says why a calibration.json present was not used.
	Calibration    *schema.Calibration
	CalibrationErr string
	// Trend is a scheduled run's campaign over its last runs, ending at this one: read by the
	// caller from the scheduler's state once the run is judged, never by the report itself.
	Trend *Trend
}

// Trend is what the trend page draws: the window's history (change points marked) and which
// of its runs this report is about.
type Trend struct {
	History *history.History
	Run     string // the run's id (history.Run.ID)
	// Note says why a scheduled run has no trend (its state could not be read).
	Note string
}

// Page titles: every page starts with one (continuation pages add "(continued)").
const (
	TitleCover    = "Campaign report"
	TitleScatter  = "Latency and throughput by max_num_batched_tokens"
	TitleHeatmap  = "Heatmaps at fixed concurrency"
	TitleAA       = "Artificial Analysis metrics by shape and concurrency"
	TitleTPM      = "TPM supported across hardware types"
	TitleDCGM     = "DCGM utilization per point"
	TitleRoofline = "Prefill/decode roofline"
	TitleChampion = "Champion selection"
	TitleSpec     = "Speculative decoding acceptance"
	TitleCompare  = "Measured vs imported"
	TitleFrontier = "SLO frontier"
	TitleGoodput  = "Goodput under per-request SLOs"
	TitleTrend    = "Trend over the last scheduled runs"
)

// missingCompare is the side-by-side page's line when no measured and imported points match.
const missingCompare = "No measured and imported points at the same endpoint, shape and concurrency in this campaign."

// PageInfo says whether a report page has data, so a caller can log which pages are empty.
type PageInfo struct {
	Title   string
	HasData bool
	Missing string // the one line the page shows when it has no data
	// Optional pages belong to a feature the campaign may not use (an SLO search): without
	// data they are left out of the contents instead of listed as missing.
	Optional bool
}

// Listed reports whether the cover's contents (and a list of missing pages) names the page.
func (p PageInfo) Listed() bool { return p.HasData || !p.Optional }

// Contents lists the report's pages in order with whether each has data.
func Contents(in Input) []PageInfo {
	v := newView(in)
	return []PageInfo{
		{Title: TitleCover, HasData: true},
		{Title: TitleScatter, HasData: v.plotReady > 0, Missing: "No plot-ready points in this campaign."},
		{Title: TitleHeatmap, HasData: len(v.rows) > 0, Missing: "No atlas rows in this campaign."},
		{Title: TitleAA, HasData: len(aaRows(v.rows)) > 0, Missing: "No AA-shaped cells (aa-1k, aa-10k, aa-100k) in this campaign."},
		{Title: TitleTPM, HasData: in.TPM != nil && len(in.TPM.Groups) > 0, Missing: "No TPM summary (tpm_summary.json) in this campaign."},
		{Title: TitleDCGM, HasData: len(dcgmTable(in, v)) > 0, Missing: "No DCGM data in this campaign."},
		{Title: TitleRoofline, HasData: hasRoofline(in.Roofline), Missing: "No roofline sweep in this campaign."},
		{Title: TitleChampion, HasData: in.Champion != nil, Missing: "No champion selection (champion.json) in this campaign."},
		{Title: TitleSpec, HasData: len(specCells(in, v)) > 0, Missing: "No speculative-decoding data in this campaign."},
		{Title: TitleCompare, HasData: len(compareGroups(in)) > 0, Missing: missingCompare},
		{Title: TitleFrontier, HasData: len(in.Sweeps) > 0, Missing: "No SLO search or early-stopping sweep in this campaign.", Optional: true},
		{Title: TitleGoodput, HasData: len(goodputRows(v.rows)) > 0, Missing: missingGoodput, Optional: true},
		{Title: TitleTrend, HasData: hasTrend(in), Missing: missingTrend(in), Optional: in.Campaign == nil || in.Campaign.Schedule == nil},
	}
}

// options are the report layout choices after defaults.
type options struct {
	title     string
	labels    []int
	heatmapCs []int
}

// optionsOf fills the layout choices from the campaign's report block, defaulting to the
// concurrencies the campaign measured: the top three for heatmaps, first/middle/last for labels.
// A configured concurrency that was never measured is dropped (it would only show grey).
func optionsOf(c *schema.Campaign, measured []int) options {
	o := options{title: "perfdag campaign", labels: defaultLabels(measured), heatmapCs: defaultHeatmap(measured)}
	if c == nil {
		return o
	}
	if c.Campaign != "" {
		o.title = c.Campaign
	}
	if r := c.Report; r != nil {
		if r.Title != "" {
			o.title = r.Title
		}
		if l := onlyMeasured(r.LabelConcurrencies, measured); len(l) > 0 {
			o.labels = l
		}
		if h := onlyMeasured(r.HeatmapConcurrencies, measured); len(h) > 0 {
			o.heatmapCs = h
		}
	}
	return o
}

// measuredConcurrencies is the sorted distinct concurrencies of the atlas' closed-loop rows (a
// rate point's in-flight cap is no concurrency it was measured at).
func measuredConcurrencies(rows []schema.AtlasRow) []int {
	var out []int
	for i := range rows {
		if !rows[i].PointLoad().IsRate() {
			out = append(out, rows[i].Concurrency)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func defaultHeatmap(measured []int) []int {
	if len(measured) <= 3 {
		return slices.Clone(measured)
	}
	return slices.Clone(measured[len(measured)-3:])
}

func defaultLabels(measured []int) []int {
	if len(measured) <= 3 {
		return slices.Clone(measured)
	}
	return []int{measured[0], measured[len(measured)/2], measured[len(measured)-1]}
}

func onlyMeasured(want, measured []int) []int {
	var out []int
	for _, c := range want {
		if slices.Contains(measured, c) {
			out = append(out, c)
		}
	}
	return out
}
