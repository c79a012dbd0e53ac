// Package baseline registers a campaign's numbers as a named baseline (seed 002's
// inference_perfbench_v1 schema, in a registry folder with a sha256) and diffs a later run
// against it with per-metric tolerances, so a weekly sweep ends GREEN or RED.
//
// One baseline holds one workload: the schema keys its metrics by concurrency only, so a
// campaign with several cells (shapes) gives one baseline per cell, chosen with a cell id.
// A campaign with one measured cell (the usual weekly sweep) needs no choice.
package baseline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/perfdag/perfdag/engine/redact"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/analysis/atlas"
	"github.com/perfdag/perfdag/steps/measure/workload"
)

// frozenConfig is the part of a campaign directory's config.yaml a snapshot reads. It is
// decoded leniently (the loader already validated the file when the run started).
type frozenConfig struct {
	Campaign  string `yaml:"campaign"`
	Endpoints map[string]struct {
		URL   string `yaml:"url"`
		Model string `yaml:"model"`
	} `yaml:"endpoints"`
	Cells []struct {
		ID       string          `yaml:"id"`
		Endpoint string          `yaml:"endpoint"`
		Workload schema.Workload `yaml:"workload"`
	} `yaml:"cells"`
	Source *schema.Source `yaml:"source"`
}

// campaignData is what a campaign directory holds for snapshots: its config and atlas rows.
type campaignData struct {
	dir  string
	cfg  frozenConfig
	rows map[string][]schema.AtlasRow // by cell id, ascending concurrency
}

func readCampaign(ctx context.Context, dir string) (*campaignData, error) {
	cfgPath := filepath.Join(dir, "config.yaml")
	src, err := os.ReadFile(cfgPath)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w (is %s a campaign directory?)", cfgPath, err, dir)
	}
	d := &campaignData{dir: dir, rows: map[string][]schema.AtlasRow{}}
	if err := yaml.Unmarshal(src, &d.cfg); err != nil {
		return nil, fmt.Errorf("decode %s: %w", cfgPath, err)
	}
	atlasPath := filepath.Join(dir, atlas.AtlasFile)
	err = atlas.ScanFile(ctx, atlasPath, func(r *schema.AtlasRow) error {
		row := *r
		d.rows[row.CellID] = append(d.rows[row.CellID], row)
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		// No atlas yet (the aggregate step did not run): fall back to the cells' normalized rows.
		ids, lerr := atlas.ListCells(dir)
		if lerr != nil {
			return nil, lerr
		}
		for _, id := range ids {
			rows, _, rerr := atlas.ReadCell(dir, id)
			if rerr != nil {
				return nil, rerr
			}
			d.rows[id] = rows
		}
		if len(ids) == 0 {
			return nil, fmt.Errorf("%s has no %s and no cells/*/%s: the campaign has not aggregated yet (finish it with 'perfdag resume %s')", dir, atlas.AtlasFile, atlas.NormalizedFile, dir)
		}
	} else if err != nil {
		return nil, err
	}
	for id := range d.rows {
		slices.SortStableFunc(d.rows[id], func(a, b schema.AtlasRow) int { return a.Concurrency - b.Concurrency })
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
func Snapshot(ctx context.Context, campaignDir, cell string) (*schema.PerfBench, error) {
	d, err := readCampaign(ctx, campaignDir)
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
	for i := range d.cfg.Cells {
		if d.cfg.Cells[i].ID == cellID {
			wl = &d.cfg.Cells[i].Workload
			endpointName = d.cfg.Cells[i].Endpoint
		}
	}
	if endpointName == "" && len(d.cfg.Endpoints) == 1 {
		for name := range d.cfg.Endpoints {
			endpointName = name
		}
	}
	if ep, ok := d.cfg.Endpoints[endpointName]; ok {
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
	if s := d.cfg.Source; s != nil {
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
		w.ConcurrencySweep = append(w.ConcurrencySweep, r.Concurrency)
		if status, _ := r.Extra["point_status"].(string); status == atlas.PointMissing {
			continue
		}
		w.ConversationNum += r.NumPrompts
		doc.Metrics[strconv.Itoa(r.Concurrency)] = schema.PerfBenchPoint{
			ThroughputToksPerS:  r.OutputTokPerS,
			TTFTP50Ms:           r.TTFTP50Ms,
			TTFTP95Ms:           r.TTFTP95Ms,
			TTFTP99Ms:           r.TTFTP99Ms,
			ITLP50Ms:            r.ITLP50Ms,
			TPSPerUser:          r.TokPerSPerUser,
			RequestLatencyP50Ms: r.RequestLatencyP50Ms,
			Errors:              r.ErrorCount,
		}
		win, err := readSpecWindow(atlas.CellDir(d.dir, cellID), r.Concurrency)
		if err != nil {
			return nil, err
		}
		if win != nil {
			spec = append(spec, *win)
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

// readSpecWindow reads cells/<id>/spec_metrics/c<N>.json; nil when scrape-spec did not run.
func readSpecWindow(cellDir string, conc int) (*schema.SpecWindow, error) {
	path := filepath.Join(cellDir, "spec_metrics", "c"+strconv.Itoa(conc)+".json")
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	var w schema.SpecWindow
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, fmt.Errorf("decode %s: %w", path, err)
	}
	return &w, nil
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
