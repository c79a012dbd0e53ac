// Package runshape is the run-shape step kind: the load generator for one concurrency point of
// a cell. It streams the cell's workload (closed loop at the concurrency, or open loop at the
// workload's request rate capped by it), keeps every request's record, computes the point's
// AIPerf-defined metrics, and samples the server's /metrics and DCGM exporter during the
// window for scrape-spec and dcgm-correlate.
//
// A point interrupted midway re-runs whole on resume: its throughput window and its steady
// concurrency cannot be stitched from two sessions without biasing the numbers, so there is no
// per-batch checkpoint inside a point — an auto point (requests_per_point auto) included: its
// batches are looks inside one continuous session, not separate runs.
package runshape

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/perfdag/perfdag/engine/plural"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/measure/endpoint"
	"github.com/perfdag/perfdag/steps/measure/hftok"
	"github.com/perfdag/perfdag/steps/measure/loadgen"
	"github.com/perfdag/perfdag/steps/measure/session"
	"github.com/perfdag/perfdag/steps/measure/shard"
	"github.com/perfdag/perfdag/steps/measure/stats"
	"github.com/perfdag/perfdag/steps/measure/workload"
	"github.com/perfdag/perfdag/steps/telemetry/dcgm"
	"github.com/perfdag/perfdag/steps/telemetry/promscrape"
)

// Kind is the run-shape step kind.
var Kind = engine.Kind{
	Name:          "run-shape",
	Scope:         engine.ScopePoint,
	Version:       "1",
	HoldsEndpoint: true,
	Doc:           "load generator: one concurrency point, AIPerf metrics, per-request records",
	Result:        Result{},
	Inputs:        inputs,
	Check:         check,
	Run:           run,
}

// SampleEvery is how often /metrics and the DCGM exporter are polled during a window.
const SampleEvery = 250 * time.Millisecond

// Result is what gates on run-shape read (campaigndir.PointResult, so the sweep kind reads
// it without importing this one).
type Result = campaigndir.PointResult

// inputs is everything a point's numbers depend on — and nothing else, so relabelling a cell's
// hardware re-runs the atlas, not the benchmark.
func inputs(t *engine.Task) any {
	c := t.Cell
	in := map[string]any{
		"endpoint":        endpointInputs(t.Endpoint, t.BaseDir),
		"workload":        c.PointWorkload(t.Load),
		"dataset":         datasetStamp(t),
		"requests":        requestsInput(c, t.Load.CountBase(), baselineRef(t)),
		"warmup_requests": c.WarmupRequests,
		"concurrency":     t.Load.InFlight(),
		"gpus":            c.GPUs,
	}
	if c.Clients > 1 {
		// one client and several measure the same load, but not by the same clients
		in["clients"] = c.Clients
	}
	if c.SLO != nil {
		// the point states its goodput under the cell's slo (a cell without one keeps the
		// fingerprints it had before slo existed)
		in["slo"] = c.SLO
	}
	return in
}

// endpointInputs is the part of an endpoint a measurement depends on: the env var's name, never
// the key; the token basis when one is set (as points name it), and a tokenizer file's
// content (its SHA-256), so editing the file re-measures.
func endpointInputs(ep *schema.Endpoint, baseDir string) any {
	if ep == nil {
		return nil
	}
	in := map[string]any{"url": ep.URL, "model": ep.Model, "api_key_env": ep.APIKeyEnv, "metrics_url": ep.MetricsURL,
		"dcgm_url": ep.DCGMURL, "timeout_s": ep.TimeoutS, "sim": ep.Sim, "reasoning": ep.ReasoningHint}
	basis := ep.Basis(baseDir)
	if schema.IsTokenizerBasis(basis) {
		sum, err := hftok.FileDigest(hftok.Path(baseDir, ep.Tokenizer))
		if err != nil {
			sum = "unreadable" // the step fails when it loads the file
		}
		in["tokenizer_sha256"] = sum
	}
	if basis != "" {
		in["token_basis"] = basis
	}
	return in
}

// datasetStamp changes when a replay dataset changes (size and modification time: hashing a
// large file for every node of every plan would cost more than it saves).
func datasetStamp(t *engine.Task) string {
	if t.Cell.Workload.Dataset == "" {
		return ""
	}
	path := t.Cell.Workload.Dataset
	if !filepath.IsAbs(path) {
		path = filepath.Join(t.BaseDir, path)
	}
	st, err := os.Stat(path)
	if err != nil {
		return "missing"
	}
	return fmt.Sprintf("%d@%d", st.Size(), st.ModTime().UnixNano())
}

func check(c *schema.Campaign, _ *schema.PipelineStep, _ any) []error {
	var errs []error
	for i, cell := range c.Cells {
		if err := workload.Check(cell.Workload); err != nil {
			errs = append(errs, &engine.FieldError{Path: fmt.Sprintf("cells[%d].workload", i), Err: fmt.Errorf("cell %s: %w", cell.ID, err),
				Hint: "shape: one of " + strings.Join(workload.Shapes(), ", ") + ", or custom with input_tokens and output_tokens"})
		}
		if err := checkAuto(i, cell, c); err != nil {
			errs = append(errs, err)
		}
		if err := checkClients(i, cell, c); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

func run(ctx context.Context, t *engine.Task) (engine.Result, error) {
	began := time.Now() // the endpoint is held from here (the engine serializes its holders)
	cell, l := t.Cell, t.Load
	conc, w := l.InFlight(), cell.PointWorkload(l)
	s, err := session.Open(ctx, t, w, session.Salt(t, session.PhaseProfiling, l))
	if err != nil {
		return engine.Result{}, err
	}
	defer s.Close()
	pre, err := s.Client.Check(ctx, s.Model)
	if err != nil {
		return engine.Result{}, fmt.Errorf("endpoint %s: %w", t.EndpointKey, err)
	}
	if err := campaigndir.RecordServer(t.Dir, t.EndpointKey, pre.Server); err != nil {
		return engine.Result{}, fmt.Errorf("record server of endpoint %s: %w", t.EndpointKey, err)
	}
	cfg := loadgen.Config{Requests: cell.RequestsPerPoint.For(l.CountBase()), Concurrency: conc,
		Rate: w.RequestRate, Arrival: w.Arrival, Burstiness: w.Burstiness, Seed: w.Seed}
	rule, err := autoLoad(cell, &cfg, baselineRef(t))
	if err != nil {
		return engine.Result{}, err
	}
	if rule != nil && s.Endpoint.Virtual != nil {
		// the deterministic simulator answers at once: what ran ahead of the stopping look
		// would be a race, and its points must be pure functions of the campaign
		cfg.Adaptive.Ahead = -1
	}
	progress := func(p loadgen.Progress) {
		if t.Progress != nil {
			t.Progress(session.ProgressLine(p))
		}
	}
	var records []schema.RequestRecord
	if n := cell.WarmupRequests; n > 0 {
		warm, err := s.Load(ctx, session.PhaseWarmup, loadgen.Config{Requests: n, Concurrency: min(max(conc, 1), n)}, nil)
		if err != nil {
			return engine.Result{}, fmt.Errorf("warm-up: %w", err)
		}
		records = append(records, warm...)
	}
	samplers := startSamplers(ctx, s.Endpoint)
	var profiled []schema.RequestRecord
	var split sharded
	if cell.Clients > 1 {
		split, err = loadSharded(ctx, t, s, w, cfg)
		profiled = split.records
	} else {
		profiled, err = s.Load(ctx, session.PhaseProfiling, cfg, progress)
	}
	if err != nil {
		samplers.stop()
		return engine.Result{}, err
	}
	records = append(records, profiled...)
	files, families, err := samplers.save(t, l)
	if err != nil {
		return engine.Result{}, err
	}
	if files.Records, err = campaigndir.WriteLines(t.Dir, campaigndir.Records(cell.ID, l), records); err != nil {
		return engine.Result{}, err
	}
	warmed, connectNs := s.Warmed().Opened, s.Warmed().ConnectNs
	if split.clients != nil {
		warmed, connectNs = split.warmed, split.connectNs
		for _, sh := range split.clients.Shards {
			files.Shards = append(files.Shards, sh.Records)
		}
	}
	point := stats.Compute(records, stats.Options{Cell: cell.ID, Load: l, Arrival: cfg.Arrival,
		Shape: shapeOf(cell.Workload), Mode: modeOf(cell.Workload), GPUs: cell.GPUs, ReasoningModel: reasoningModel(t.Endpoint),
		TokenBasis: t.Endpoint.Basis(t.BaseDir), WarmConnections: warmed, WarmConnectNs: connectNs, SLO: cell.SLO})
	point.MetricsFamilies = families
	point.ClientBound = s.ClientBound()
	if split.clients != nil {
		point.Clients, point.ClientBound = split.clients, shard.Bound(split.clients)
	}
	rule.record(&point, profiled)
	point.MeasurementCost = measurementCost(t, s.Endpoint.Virtual != nil, records, point.RequestCount, time.Since(began))
	if files.Point, err = campaigndir.WriteJSON(t.Dir, campaigndir.Point(cell.ID, l), point); err != nil {
		return engine.Result{}, err
	}
	res := ResultOf(point, files)
	out := engine.Result{Value: res, Outputs: files.List(), Summary: summary(res)}
	if l := stats.OpenLoopLine(point); l != "" {
		out.Summary += "; " + l
	}
	if l := rule.line(&point); l != "" {
		out.Summary += "; " + l
	}
	if point.Clients != nil {
		out.Summary += "; " + clientsLine(point.Clients)
	}
	if l := session.Line(point.ClientBound); l != "" {
		out.Summary += "; " + l
	}
	if point.Status == "failed" {
		return out, fmt.Errorf("no valid request at %s: %s (%s); records in %s", l.Label(), plural.N(res.ErrorCount, "error"), strings.Join(res.ErrorClasses, ", "), files.Records)
	}
	return out, nil
}

// measurementCost is what the point took: the requests it sent, its settle node's wall time (a
// reused settle's as recorded) and the run's own since it began, times the declared GPUs.
// Against the deterministic simulator (virtual time) the run's seconds are the span its
// records cover and the settle's the pause asked, so its points stay pure functions of the
// campaign.
func measurementCost(t *engine.Task, virtual bool, records []schema.RequestRecord, valid int, ran time.Duration) *schema.MeasurementCost {
	settle := 0.0
	for _, u := range t.Upstream {
		if so, ok := u.Result.(campaigndir.SettleOutput); ok && u.Load == t.Load && u.Cell == t.Cell.ID {
			held, asked := so.Settled()
			if virtual {
				held = asked
			}
			settle += held
		}
	}
	run := ran.Seconds()
	if virtual {
		var first, last int64
		for i, r := range records {
			if i == 0 || r.StartNs < first {
				first = r.StartNs
			}
			last = max(last, r.EndNs)
		}
		run = float64(last-first) / 1e9
	}
	return schema.NewMeasurementCost(len(records), valid, settle, run, t.Cell.DeclaredGPUs())
}

func reasoningModel(ep *schema.Endpoint) bool {
	return ep != nil && (ep.ReasoningHint || (ep.Sim != nil && ep.Sim.Reasoning))
}

func shapeOf(w schema.Workload) string {
	if b, err := workload.Resolve(w); err == nil {
		return b.Shape
	}
	return w.Shape
}

func modeOf(w schema.Workload) string {
	if w.Mode == "" {
		return workload.ModeSynthetic
	}
	return w.Mode
}

func summary(r *Result) string {
	s := fmt.Sprintf("%s: %d/%d ok, TTFT p50 %s, ITL %s, %.1f tok/s/GPU", schema.LoadOf(r.Load, r.Concurrency, r.RequestRate).Key(), r.RequestCount, r.NumPrompts, ms(r.TTFTP50Ms, 1), ms(r.ITLAvgMs, 2), r.OutputTokPerSPerGPU)
	if r.ErrorCount > 0 {
		s += ", " + plural.N(r.ErrorCount, "error")
	}
	if r.SLOAttainment != nil {
		s += fmt.Sprintf(", SLO attainment %.1f %%", 100**r.SLOAttainment)
		if r.GoodputReqS != nil {
			s += fmt.Sprintf(", goodput %.3g req/s", *r.GoodputReqS)
		}
	}
	if r.SteadyWindowUndercount {
		s += ", steady_window_undercount"
	}
	return s
}

// ms words a statistic in milliseconds with prec decimals, "unstated" when the point has none.
func ms(v *float64, prec int) string {
	if v == nil {
		return "unstated"
	}
	return strconv.FormatFloat(*v, 'f', prec, 64) + " ms"
}

// ResultOf is the result a point's statistics and files give, what gates on run-shape read.
func ResultOf(p schema.Point, files campaigndir.PointFiles) *Result {
	// v is a statistic, nil when the point does not state it (no such requests, or an
	// imported aggregate without it): a gate reading it is not evaluated, never fed a 0.
	v := func(s *schema.Stat, name string) *float64 {
		if x, ok := s.Value(name); ok {
			return &x
		}
		return nil
	}
	classes := make([]string, 0, len(p.ErrorsByClass))
	for c, n := range p.ErrorsByClass {
		classes = append(classes, fmt.Sprintf("%s=%d", c, n))
	}
	sort.Strings(classes)
	violations := 0
	for _, n := range p.Violations {
		violations += n
	}
	r := &Result{
		Cell: p.Cell, Load: p.PointLoad(), Concurrency: p.Concurrency, RequestRate: p.RequestRate, NumPrompts: p.NumPrompts, RequestCount: p.RequestCount,
		ErrorCount: p.ErrorCount, Status: p.Status,
		TTFTAvgMs: v(p.TTFT, "avg"), TTFTP50Ms: v(p.TTFT, "p50"), TTFTP99Ms: v(p.TTFT, "p99"), TTFOAvgMs: v(p.TTFO, "avg"),
		TTFOCoverage: p.TTFOCoverage, ITLAvgMs: v(p.ITL, "avg"), ITLP50Ms: v(p.ITL, "p50"),
		RequestLatencyP50Ms: v(p.RequestLatency, "p50"), RequestThroughput: p.RequestThroughput,
		OutputTokPerS: p.OutputTokenThroughput, OutputTokPerSPerGPU: p.OutputTokPerSPerGPU, TokPerSPerUser: v(p.TPSUser, "avg"),
		AAOutputSpeed: p.AAOutputSpeed, MeanISL: p.MeanISL, MeanOSL: p.MeanOSL, WindowS: p.WindowS,
		Reasoning: p.Reasoning, ReasoningField: p.ReasoningField, ReasoningParserSuspect: p.ReasoningParserSuspect,
		SteadyWindowUndercount: p.SteadyWindowUndercount, UsageMismatches: p.UsageMismatches, ErrorClasses: classes,
		TokenBasis: p.TokenBasis, UsageDiscrepancy: p.UsageDiscrepancy, TruncatedPrompts: p.TruncatedPrompts,
		Violations: violations, Retries: p.Retries, SLOAttainment: p.SLOAttainment, GoodputReqS: p.GoodputReqS, Files: files, Decision: p.Decision, MeasurementCost: p.MeasurementCost,
	}
	if ol := p.OpenLoop; ol != nil {
		met, short, achieved := ol.RateMet, ol.RateShortfallPct, ol.AchievedRate
		r.RateMet, r.RateShortfallPct, r.AchievedRate = &met, &short, &achieved
		r.TTFTSchedP50Ms, r.TTFTSchedP99Ms = v(p.TTFTSched, "p50"), v(p.TTFTSched, "p99")
		r.RequestLatencySchedP50Ms = v(p.RequestLatencySched, "p50")
	}
	return r
}

// samplers poll the server's /metrics and the DCGM exporter during the window.
type samplers struct {
	metrics *promscrape.Sampler
	gpus    *dcgm.Sampler
	dcgmURL string
}

func startSamplers(ctx context.Context, res endpoint.Resolved) *samplers {
	s := &samplers{}
	f := &promscrape.Fetcher{}
	if res.MetricsURL != "" {
		s.metrics = promscrape.StartSampler(ctx, f, res.MetricsURL, SampleEvery)
	}
	if res.DCGMURL != "" {
		s.gpus = dcgm.StartSampler(ctx, f, res.DCGMURL, SampleEvery, dcgm.Filter{})
		s.dcgmURL = res.DCGMURL
	}
	return s
}

func (s *samplers) stop() {
	if s.metrics != nil {
		s.metrics.Stop()
	}
	if s.gpus != nil {
		s.gpus.Stop()
	}
}

// save writes the samples and returns the point's files and its metrics_families (the engine
// families the /metrics scrapes recognised, "none" when none; "" without a metrics URL).
func (s *samplers) save(t *engine.Task, l schema.Load) (campaigndir.PointFiles, string, error) {
	files := campaigndir.PointFiles{Cell: t.Cell.ID, Load: l, Concurrency: l.InFlight()}
	var err error
	families := ""
	if s.metrics != nil {
		readings, _ := s.metrics.Stop()
		families = promscrape.FamiliesOf(readings)
		if files.MetricsSamples, err = campaigndir.WriteJSON(t.Dir, campaigndir.MetricsSamples(t.Cell.ID, l), readings); err != nil {
			return files, families, err
		}
	}
	if s.gpus != nil {
		samples, polls := s.gpus.Stop()
		doc := dcgm.NewSamples(t.Cell.ID, l, s.dcgmURL, samples, polls)
		if files.DCGMSamples, err = campaigndir.WriteJSON(t.Dir, campaigndir.DCGMSamples(t.Cell.ID, l), doc); err != nil {
			return files, families, err
		}
	}
	return files, families, nil
}
