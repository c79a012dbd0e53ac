// Package baseline registers a campaign's numbers as a named baseline (seed 002's
// inference_perfbench_v1 schema, in a registry folder with a sha256) and diffs a later run
// against it with per-metric tolerances, so a weekly sweep ends GREEN or RED.
//
// One baseline holds one workload: the schema keys its metrics by point only (a concurrency,
// or a rate point's key), so a campaign with several cells (shapes) gives one baseline per
// cell, chosen with a cell id.
// A campaign with one measured cell (the usual weekly sweep) needs no choice.
package baseline

import (
	"context"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/perfdag/perfdag/engine/redact"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/analysis/atlas"
	"github.com/perfdag/perfdag/steps/measure/workload"
)

// campaignData is what a finished campaign holds for snapshots: its campaign, atlas rows and
// spec windows, as its steps named them.
type campaignData struct {
	dir    string
	spec   *schema.Campaign
	rows   map[string][]schema.AtlasRow // by cell id, points in key order
	files  campaigndir.Reader
	window map[string]map[schema.Load]string // cell → point → spec window file
}

func readCampaign(ctx context.Context, f campaigndir.Finished) (*campaignData, error) {
	d := &campaignData{dir: f.Dir, spec: f.Spec, rows: map[string][]schema.AtlasRow{}, files: f.Files, window: map[string]map[schema.Load]string{}}
	if f.Evidence.Atlas == "" {
		return nil, fmt.Errorf("%s has no atlas: the campaign has not aggregated yet (finish it with 'perfdag resume %s')", f.Dir, f.Dir)
	}
	err := atlas.Scan(ctx, f.Files, f.Evidence.Atlas, func(r *schema.AtlasRow) error {
		row := *r
		d.rows[row.CellID] = append(d.rows[row.CellID], row)
		return nil
	})
	if err != nil {
		return nil, err
	}
	for id := range d.rows {
		slices.SortStableFunc(d.rows[id], func(a, b schema.AtlasRow) int { return a.PointLoad().Compare(b.PointLoad()) })
	}
	for _, w := range f.Evidence.Spec {
		if d.window[w.Cell] == nil {
			d.window[w.Cell] = map[schema.Load]string{}
		}
		d.window[w.Cell][schema.LoadOf(w.Load, w.Concurrency, 0)] = w.Window
	}
	return d, nil
}

// measuredCells are the cells this campaign measured itself (imported roofline cells excluded).
func (d *campaignData) measuredCells() []string {
	var ids []string
	for id, rows := range d.rows {
		if len(rows) > 0 && rows[0].Backend != atlas.BackendRoofline {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// chooseCell picks want when set, else prefer when the campaign has it, else the only measured cell.
func (d *campaignData) chooseCell(want, prefer string) (string, error) {
	cells := d.measuredCells()
	switch {
	case want != "":
		if _, ok := d.rows[want]; !ok {
			return "", fmt.Errorf("%s has no cell %q in its atlas (cells: %s)", d.dir, want, strings.Join(cells, ", "))
		}
		return want, nil
	case prefer != "" && len(d.rows[prefer]) > 0:
		return prefer, nil
	case len(cells) == 1:
		return cells[0], nil
	case len(cells) == 0:
		return "", fmt.Errorf("%s has no measured cell in its atlas", d.dir)
	}
	listed := cells
	if len(listed) > 8 {
		listed = append(slices.Clip(listed[:8]), fmt.Sprintf("… %d more", len(cells)-8))
	}
	return "", fmt.Errorf("%s has %d cells (%s): a baseline holds one workload, choose one with --cell", d.dir, len(cells), strings.Join(listed, ", "))
}

// Snapshot maps one cell of a campaign directory to the inference_perfbench_v1 document. An
// empty cell means the campaign's only measured cell. Points that never ran are left out of
// metrics (a diff reports them missing); failed points keep their error count.
func Snapshot(ctx context.Context, f campaigndir.Finished, cell string) (*schema.PerfBench, error) {
	d, err := readCampaign(ctx, f)
	if err != nil {
		return nil, err
	}
	id, err := d.chooseCell(cell, "")
	if err != nil {
		return nil, err
	}
	return d.snapshot(id)
}

func (d *campaignData) snapshot(cellID string) (*schema.PerfBench, error) {
	rows := d.rows[cellID]
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: cell %s has no atlas rows", d.dir, cellID)
	}
	first := rows[0]
	doc := &schema.PerfBench{
		Schema:    schema.SchemaPerfBench,
		Model:     first.Model,
		ModelPath: first.Model,
		Metrics:   map[string]schema.PerfBenchPoint{},
	}
	var wl *schema.Workload
	endpointName := ""
	for i := range d.spec.Cells {
		if d.spec.Cells[i].ID == cellID {
			wl = &d.spec.Cells[i].Workload
			endpointName = d.spec.Cells[i].Endpoint
			doc.SLO = d.spec.Cells[i].SLO
			if d.spec.Cells[i].Search != nil {
				search, err := d.search(cellID)
				if err != nil {
					return nil, err
				}
				doc.Search = search
			}
		}
	}
	if endpointName == "" && len(d.spec.Endpoints) == 1 {
		for name := range d.spec.Endpoints {
			endpointName = name
		}
	}
	if ep, ok := d.spec.Endpoints[endpointName]; ok {
		if ep.Model != "" {
			doc.Model = ep.Model
		}
		doc.Deployment.Service = safeURL(ep.URL)
	}
	dep := &doc.Deployment
	dep.VLLMVersion = first.EngineVersion
	dep.TensorParallelSize = first.TensorParallel
	dep.Quantization = first.Quant
	dep.SpeculativeDecoding = "none"
	if first.MTP {
		dep.SpeculativeDecoding = "mtp"
	}
	dep.Engine, dep.Hardware, dep.GPUs = first.Engine, first.Hardware, first.GPUs
	dep.ParallelStrategy, dep.MaxNumBatchedTokens = first.ParallelStrategy, first.MaxNumBatchedTokens
	dep.Delivery, dep.CacheMode = first.Delivery, first.CacheMode
	if s := d.spec.Source; s != nil {
		dep.Commit = s.Commit
		if dep.VLLMVersion == "" {
			dep.VLLMVersion = s.EngineVersion
		}
		if dep.Engine == "" {
			dep.Engine = s.Engine
		}
	}

	w := &doc.Workload
	w.Campaign, w.Cell, w.Shape = first.Campaign, cellID, first.Shape
	w.Mode, w.Dataset = workload.ModeSynthetic, "synthetic"
	if wl != nil {
		if wl.Mode == workload.ModeReplay {
			w.Mode, w.Dataset = workload.ModeReplay, wl.Dataset
		}
		if b, err := workload.Resolve(*wl); err == nil {
			w.InputTokens, w.OutputTokens = b.InputTokens, b.OutputTokens
		}
	}
	var spec []schema.SpecWindow
	for _, r := range rows {
		l := r.PointLoad()
		if !l.IsRate() {
			w.ConcurrencySweep = append(w.ConcurrencySweep, r.Concurrency)
		}
		w.LoadSweep = append(w.LoadSweep, l.Key())
		if status, _ := r.Extra["point_status"].(string); status == atlas.PointMissing {
			continue
		}
		w.ConversationNum += r.NumPrompts
		doc.Metrics[schema.MetricsKey(l)] = schema.PerfBenchPoint{
			ThroughputToksPerS:  r.OutputTokPerS,
			TTFTP50Ms:           r.TTFTP50Ms,
			TTFTP95Ms:           r.TTFTP95Ms,
			TTFTP99Ms:           r.TTFTP99Ms,
			ITLP50Ms:            r.ITLP50Ms,
			TPSPerUser:          r.TokPerSPerUser,
			RequestLatencyP50Ms: r.RequestLatencyP50Ms,
			GoodputReqS:         r.GoodputReqS,
			SLOAttainmentPct:    percent(r.SLOAttainment),
			Errors:              r.ErrorCount,
			Intervals:           perfBenchIntervals(r.Intervals),
		}
		if r.Decision != nil && r.Decision.Reference != "" {
			key := schema.MetricsKey(l)
			pt := doc.Metrics[key]
			pt.Decision = r.Decision // decided against a baseline: a diff reads its verdicts
			doc.Metrics[key] = pt
		}
		rel := d.window[cellID][l]
		if rel == "" && l.IsRate() { // a window written before points were keyed by load names only the cap
			rel = d.window[cellID][schema.Conc(r.Concurrency)]
		}
		if rel != "" {
			var win schema.SpecWindow
			if err := d.files.JSON(rel, &win); err != nil {
				return nil, err
			}
			spec = append(spec, win)
		}
	}
	if w.InputTokens == 0 {
		w.InputTokens = meanTokens(rows, func(r *schema.AtlasRow) *float64 { return r.MeanInputTokens })
	}
	if w.OutputTokens == 0 {
		w.OutputTokens = meanTokens(rows, func(r *schema.AtlasRow) *float64 { return r.MeanOutputTokens })
	}
	w.InputTokenBand, w.OutputTokenBand = Band(w.InputTokens), Band(w.OutputTokens)
	doc.ServerMetricsDelta = serverDelta(spec)
	return doc, nil
}

// perfBenchKeys maps the atlas metric names of a row's intervals to the PerfBenchPoint
// field names they bound (the snapshot's metrics renamed, e.g. output_tok_s → throughput_toks_per_s).
var perfBenchKeys = map[string]string{
	"output_tok_s":           "throughput_toks_per_s",
	"ttft_p50_ms":            "ttft_p50_ms",
	"ttft_p95_ms":            "ttft_p95_ms",
	"ttft_p99_ms":            "ttft_p99_ms",
	"itl_p50_ms":             "itl_p50_ms",
	"tok_s_per_user":         "tps_per_user",
	"request_latency_p50_ms": "request_latency_p50_ms",
	"goodput_req_s":          "goodput_req_s",
	"slo_attainment":         "slo_attainment_pct", // ×100: the snapshot states it in percent
}

// percent is a fraction as percent (0–100), nil staying nil.
func percent(v *float64) *float64 {
	if v == nil {
		return nil
	}
	p := 100 * *v
	return &p
}

// perfBenchIntervals keeps the intervals of the metrics a snapshot holds, under its names;
// nil when the row has none of them.
func perfBenchIntervals(in schema.Intervals) schema.Intervals {
	var out schema.Intervals
	for from, to := range perfBenchKeys {
		if iv, ok := in[from]; ok {
			if out == nil {
				out = schema.Intervals{}
			}
			if from == "slo_attainment" {
				iv.Lo, iv.Hi = 100*iv.Lo, 100*iv.Hi
			}
			out[to] = iv
		}
	}
	return out
}

// serverDelta folds the per-point scrape windows (ascending concurrency) into the sweep-wide
// server_metrics_delta: the first window's pre hit rate, the last window's post hit rate,
// peaks over all windows, and generated tokens over the summed window time. Gauges in 0–1
// (vLLM's *_perc names are fractions) become percent.
func serverDelta(ws []schema.SpecWindow) schema.PerfBenchServer {
	var s schema.PerfBenchServer
	if len(ws) == 0 {
		return s
	}
	s.PrefixCacheHitRatePre = pct(ws[0].PrefixCacheHitRatePre)
	s.PrefixCacheHitRatePost = pct(ws[len(ws)-1].PrefixCacheHitRatePost)
	var gen, secs float64
	genSeen := false
	for _, w := range ws {
		if v := pct(w.KVCacheUsagePeak); v != nil && (s.GPUCacheUsagePercPeak == nil || *v > *s.GPUCacheUsagePercPeak) {
			s.GPUCacheUsagePercPeak = v
		}
		if v := w.RunningRequestsPeak; v != nil && finite(*v) {
			n := int(math.Round(*v))
			if s.NumRequestsRunningPeak == nil || n > *s.NumRequestsRunningPeak {
				s.NumRequestsRunningPeak = &n
			}
		}
		if w.GenerationTokens != nil && finite(*w.GenerationTokens) && w.WindowS > 0 {
			gen += *w.GenerationTokens
			secs += w.WindowS
			genSeen = true
		}
	}
	if genSeen && secs > 0 {
		v := gen / secs
		s.AvgGenerationThroughputToksPerS = &v
	}
	return s
}

func pct(p *float64) *float64 {
	if p == nil || !finite(*p) {
		return nil
	}
	v := *p * 100
	return &v
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// meanTokens is the rounded mean of a per-row token mean over the rows that have it.
func meanTokens(rows []schema.AtlasRow, get func(*schema.AtlasRow) *float64) int {
	var sum float64
	n := 0
	for i := range rows {
		if v := get(&rows[i]); v != nil && finite(*v) {
			sum += *v
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return int(math.Round(sum / float64(n)))
}

// Band names a token budget the way the seed does: 1000 → "1k", 1500 → "1.5k", 100000 →
// "100k"; below 1000 the count itself; 0 → "".
func Band(tokens int) string {
	switch {
	case tokens <= 0:
		return ""
	case tokens < 1000:
		return strconv.Itoa(tokens)
	}
	k := math.Round(float64(tokens)/100) / 10
	return strconv.FormatFloat(k, 'f', -1, 64) + "k"
}

// safeURL drops credentials, query and fragment from an endpoint URL before it is recorded.
func safeURL(raw string) string {
	u, err := url.Parse(redact.URL(raw))
	if err != nil {
		return ""
	}
	u.User, u.RawQuery, u.Fragment, u.RawFragment = nil, "", "", ""
	return u.String()
}

// search reads a searched cell's sweep_probes.json (as its sweep node recorded it).
func (d *campaignData) search(cellID string) (*schema.PerfBenchSearch, error) {
	var r schema.SweepResult
	if err := d.files.JSON(campaigndir.Sweep(cellID), &r); err != nil {
		return nil, fmt.Errorf("%s: cell %s searched, but its probes are unreadable: %w", d.dir, cellID, err)
	}
	if r.KneeUnknown != "" {
		return nil, fmt.Errorf("%s: cell %s's search stopped with its knee unknown (%s): resume the campaign once the endpoint answers, then take the snapshot", d.dir, cellID, r.KneeUnknown)
	}
	if r.Over == schema.SearchOverRate {
		s := &schema.PerfBenchSearch{SLO: r.SLO, Over: r.Over, FromRate: r.FromRate, ToRate: r.ToRate, ResolutionPct: r.ResolutionPct,
			KneeRate: r.KneeRate, AtTop: r.KneeAtTop, Probes: []int{}}
		if r.KneeRateLo != r.KneeRateHi {
			s.KneeRateLo, s.KneeRateHi = r.KneeRateLo, r.KneeRateHi
		}
		for _, p := range r.Probes {
			s.ProbeLoads = append(s.ProbeLoads, p.PointLoad().Key())
		}
		return s, nil
	}
	s := &schema.PerfBenchSearch{SLO: r.SLO, From: r.From, To: r.To, Knee: r.Knee, AtTop: r.KneeAtTop}
	if lo, hi := r.KneeBand(); lo != hi {
		s.KneeLo, s.KneeHi = lo, hi
	}
	for _, p := range r.Probes {
		s.Probes = append(s.Probes, p.Concurrency)
	}
	return s, nil
}
