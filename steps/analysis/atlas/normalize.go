package atlas

import (
	"maps"
	"math"
	"slices"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/benchfile"
)

// Backend values of AtlasRow.Backend.
const (
	BackendPerfdag  = "perfdag"
	BackendFixture  = "fixture"
	BackendRoofline = schema.RooflineBackend
)

// Point statuses recorded in a row's extra["point_status"]; missing means no point.json.
const (
	PointOK      = "ok"
	PointPartial = "partial"
	PointFailed  = "failed"
	PointMissing = "missing"
)

// Normalize maps one cell's points (and the telemetry joined onto them) to atlas rows, one per
// requested point in key order (schema.Load.Compare) — a missing or failed point still gets a
// row so the report can draw it gray — and returns the cell status: full when every requested
// point produced an ok point, failed when none is usable, partial otherwise. The cell's
// defaults must already be merged. spec and dcgm may be nil.
func Normalize(campaign string, cell schema.Cell, points []schema.Point, spec map[schema.Load]*schema.SpecWindow, dcgm *schema.DCGMCorrelation) ([]schema.AtlasRow, string) {
	byLoad := make(map[schema.Load]*schema.Point, len(points))
	for i := range points {
		byLoad[points[i].PointLoad()] = &points[i]
	}
	requested := cell.Loads()
	if len(requested) == 0 {
		requested = slices.Collect(maps.Keys(byLoad))
	}
	slices.SortFunc(requested, schema.Load.Compare)
	requested = slices.Compact(requested)

	var dcgmPoints []schema.DCGMPoint
	if dcgm != nil {
		dcgmPoints = dcgm.Points
	}

	rows := make([]schema.AtlasRow, 0, len(requested))
	ok, usable := 0, 0
	for _, l := range requested {
		p := byLoad[l]
		row := identityRow(campaign, cell, l)
		pointStatus := PointMissing
		if p != nil {
			pointStatus = pointStatusOf(p)
			fillPoint(&row, p)
			if im := p.Import; im != nil {
				row.Backend = im.Source
				row.Extra["stats_from"], row.Extra["source_token_basis"] = im.StatsFrom, im.TokenBasis
				if im.SourceVersion != "" {
					row.Extra["source_version"] = im.SourceVersion
				}
				if im.StatsFrom == benchfile.StatsAggregate {
					unstated(&row)
				}
			}
		}
		switch pointStatus {
		case PointOK:
			ok++
			usable++
		case PointPartial:
			usable++
		}
		if w := spec[l]; w != nil {
			row.AcceptanceLength = finite(w.AcceptanceLength)
			row.SpecAcceptRate = finite(w.SpecAcceptRate)
			row.PrefixCacheHitRate = finite(w.PrefixCacheHitRate)
		}
		fillDCGM(&row, dcgm, DCGMPointOf(dcgmPoints, l))
		row.PlotReady = pointStatus != PointFailed && pointStatus != PointMissing && plotReady(&row)
		row.Extra["point_status"] = pointStatus
		rows = append(rows, row)
	}

	status := schema.CellPartial
	switch {
	case len(requested) > 0 && ok == len(requested):
		status = schema.CellFull
	case usable == 0:
		status = schema.CellFailed
	}
	for i := range rows {
		rows[i].CellStatus = status
	}
	return rows, status
}

// DCGMPointOf finds point l's means in a correlation: by its load, or — in a correlation
// written before points were keyed by load, whose points name only their concurrency — by
// its concurrency or in-flight cap. Nil when the correlation has none.
func DCGMPointOf(points []schema.DCGMPoint, l schema.Load) *schema.DCGMPoint {
	var legacy *schema.DCGMPoint
	for i := range points {
		p := &points[i]
		switch {
		case p.PointLoad() == l:
			return p
		case p.Load.IsZero() && p.Concurrency == l.InFlight() && legacy == nil:
			legacy = p
		}
	}
	if l.IsRate() {
		return legacy
	}
	return nil
}

// identityRow fills what a row knows before any measurement: who, what, where.
func identityRow(campaign string, cell schema.Cell, l schema.Load) schema.AtlasRow {
	id := cell.Identity
	gpus := id.GPUs
	if gpus <= 0 {
		gpus = max(id.TensorParallel, 1)
	}
	extra := make(map[string]any, len(cell.Extra)+4)
	maps.Copy(extra, cell.Extra)
	extra["shape"] = cell.Workload.Shape
	mode := cell.Workload.Mode
	if mode == "" {
		mode = "synthetic"
	}
	extra["mode"] = mode
	if l.IsRate() { // as rows said it before they had request_rate: extra map readers keep reading it
		extra["request_rate"] = l.Rate
		extra["arrival"] = cell.Workload.Arrival
	}
	return schema.AtlasRow{
		Schema:              "atlas_v1",
		Campaign:            campaign,
		CellID:              cell.ID,
		Load:                l,
		Concurrency:         l.InFlight(),
		RequestRate:         l.Rate,
		Model:               id.Model,
		Hardware:            id.Hardware,
		Quant:               id.Quant,
		TensorParallel:      id.TensorParallel,
		ParallelStrategy:    id.ParallelStrategy,
		MTP:                 id.MTP != nil && *id.MTP,
		MaxNumBatchedTokens: id.MaxNumBatchedTokens,
		Engine:              id.Engine,
		EngineVersion:       id.EngineVersion,
		Delivery:            id.Delivery,
		Shape:               cell.Workload.Shape,
		CacheMode:           id.CacheMode,
		Arm:                 id.Arm,
		Baseline:            id.Baseline,
		Backend:             BackendPerfdag,
		GPUs:                gpus,
		SolRigor:            schema.RigorL1,
		Extra:               extra,
	}
}

// pointStatusOf trusts the point's own status, but a point without one valid request is failed.
func pointStatusOf(p *schema.Point) string {
	switch {
	case p.RequestCount <= 0 || p.Status == PointFailed:
		return PointFailed
	case p.Status == PointPartial || p.ErrorCount > 0:
		return PointPartial
	}
	return PointOK
}

// fillPoint copies the point metrics; throughput fields stay null when no request was valid.
func fillPoint(row *schema.AtlasRow, p *schema.Point) {
	row.NumPrompts = p.NumPrompts
	row.RequestCount = p.RequestCount
	row.ErrorCount = p.ErrorCount
	row.Intervals = maps.Clone(p.Intervals)
	row.Decision = p.Decision
	row.MeasurementCost = p.MeasurementCost
	if p.GPUs > 0 {
		row.GPUs = p.GPUs
	}
	if p.Shape != "" {
		row.Shape = p.Shape
	}
	if s := stat(p.TTFT); s != nil {
		row.TTFTAvgMs, row.TTFTP50Ms, row.TTFTP90Ms = sv(s, "avg"), sv(s, "p50"), sv(s, "p90")
		row.TTFTP95Ms, row.TTFTP99Ms = sv(s, "p95"), sv(s, "p99")
	}
	if s := stat(p.TTFO); s != nil {
		row.TTFOAvgMs = sv(s, "avg")
	}
	if s := stat(p.ITL); s != nil {
		row.ITLAvgMs, row.ITLP50Ms, row.ITLP99Ms = sv(s, "avg"), sv(s, "p50"), sv(s, "p99")
	}
	if s := stat(p.RequestLatency); s != nil {
		row.RequestLatencyAvgMs, row.RequestLatencyP50Ms, row.RequestLatencyP99Ms = sv(s, "avg"), sv(s, "p50"), sv(s, "p99")
	}
	if s := stat(p.TPSUser); s != nil {
		row.TokPerSPerUser = sv(s, "avg")
	}
	if s := stat(p.ReasoningTok); s != nil && p.Reasoning {
		row.ReasoningTokenAvg = sv(s, "avg")
	}
	if p.ReasoningField != "none" {
		row.ReasoningField = p.ReasoningField
	}
	if p.RequestCount > 0 {
		row.TTFOCoverage = fp(p.TTFOCoverage)
		row.RequestThroughput = positive(p.RequestThroughput)
		row.OutputTokPerS = positive(p.OutputTokenThroughput)
		row.TotalTokPerS = positive(p.TotalTokenThroughput)
		row.OutputTokPerSPerGPU = positive(p.OutputTokPerSPerGPU)
		row.TotalTokPerSPerGPU = positive(p.TotalTokPerSPerGPU)
		row.AAOutputSpeed = positive(p.AAOutputSpeed)
		row.MeanInputTokens = positive(p.MeanISL)
		row.MeanOutputTokens = positive(p.MeanOSL)
	}
	if p.SteadyWindowUndercount || (p.Concurrency > 0 && p.NumPrompts < 2*p.Concurrency) {
		row.Flags = append(row.Flags, schema.FlagSteadyWindowUndercount)
	}
	if p.ReasoningParserSuspect {
		row.Flags = append(row.Flags, schema.FlagReasoningParserSuspect)
	}
	if p.UsageMismatches > 0 {
		row.Flags = append(row.Flags, schema.FlagUsageMismatch)
	}
	row.TokenBasis = p.TokenBasis
	row.SLOAttainment, row.GoodputReqS, row.Goodput = p.SLOAttainment, p.GoodputReqS, p.Goodput
	fillFidelity(row, p)
	if p.UsageDiscrepancy {
		row.Flags = append(row.Flags, schema.FlagUsageDiscrepancy)
	}
	if p.TruncatedPrompts > 0 {
		row.Flags = append(row.Flags, schema.FlagTruncatedPrompts)
	}
	if len(p.Violations) > 0 {
		row.Flags = append(row.Flags, schema.FlagProtocolViolation)
	}
	if p.MetricsFamilies == schema.MetricsFamiliesNone {
		row.Flags = append(row.Flags, schema.FlagNoEngineMetrics)
	}
	if p.ClientBound.Bound() {
		row.Flags = append(row.Flags, schema.FlagClientBound)
	}
	if p.OpenLoop != nil && !p.OpenLoop.RateMet {
		row.Flags = append(row.Flags, schema.FlagRateShort)
	}
}

// fillDCGM joins the cell's DCGM window means for this point and derives tokens per watt.
func fillDCGM(row *schema.AtlasRow, corr *schema.DCGMCorrelation, d *schema.DCGMPoint) {
	if d == nil {
		return
	}
	row.SMActive, row.SMOccupancy = finite(d.SMActive), finite(d.SMOccupancy)
	row.TensorActive, row.DRAMActive = finite(d.TensorActive), finite(d.DRAMActive)
	row.GREngineActive = finite(d.GREngineActive)
	row.NVLinkBytesPerS, row.PCIeBytesPerS = finite(d.NVLinkBytesPerS), finite(d.PCIeBytesPerS)
	row.PowerWattsPerGPU = finite(d.PowerWattsPerGPU)
	row.TokensPerWatt = finite(d.TokensPerWatt)
	if row.TokensPerWatt == nil {
		row.TokensPerWatt = TokensPerWatt(row.OutputTokPerS, row.PowerWattsPerGPU, row.GPUs)
	}
	hasUtil := row.SMActive != nil || row.TensorActive != nil || row.DRAMActive != nil
	switch {
	case corr.DCGMGrounded && hasUtil:
		row.DCGMGrounded = true
		row.SolRigor = schema.RigorL3
		if corr.SolRigor == schema.RigorL4 {
			row.SolRigor = schema.RigorL4
		}
	case hasUtil:
		row.SolRigor = schema.RigorL2
	}
}

// TokensPerWatt is output tok/s ÷ (power per GPU × GPUs): tokens per joule of the whole
// endpoint. Null when power or throughput was not measured.
func TokensPerWatt(outputTokPerS, powerPerGPU *float64, gpus int) *float64 {
	if outputTokPerS == nil || powerPerGPU == nil || *powerPerGPU <= 0 || gpus <= 0 {
		return nil
	}
	return positive(*outputTokPerS / (*powerPerGPU * float64(gpus)))
}

// plotReady says the row carries the latency and throughput numbers the scatter panes draw.
func plotReady(r *schema.AtlasRow) bool {
	return r.TTFTAvgMs != nil && *r.TTFTAvgMs > 0 &&
		r.RequestThroughput != nil && r.OutputTokPerSPerGPU != nil
}

func stat(s *schema.Stat) *schema.Stat {
	if s == nil || s.Count <= 0 || !isFinite(s.Avg) {
		return nil
	}
	return s
}

// sv is a point statistic for a row: null when its source did not state it (or it is not finite).
func sv(s *schema.Stat, name string) *float64 {
	v, ok := s.Value(name)
	if !ok {
		return nil
	}
	return fp(v)
}

func fp(v float64) *float64 {
	if !isFinite(v) {
		return nil
	}
	return &v
}

func positive(v float64) *float64 {
	if !isFinite(v) || v <= 0 {
		return nil
	}
	return &v
}

func finite(p *float64) *float64 {
	if p == nil || !isFinite(*p) {
		return nil
	}
	v := *p
	return &v
}

func isFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// fillFidelity copies what the cover's caveats need from the point: basis fallbacks, usage
// differences, truncation, retries, server messages and client-vs-server TTFT.
func fillFidelity(row *schema.AtlasRow, p *schema.Point) {
	nonzero := func(n int) *int {
		if n == 0 {
			return nil
		}
		return &n
	}
	row.TokenBasisFallbacks = nonzero(p.TokenBasisFallbacks)
	row.TruncatedPrompts = nonzero(p.TruncatedPrompts)
	row.UsagePromptUnknown = nonzero(p.UsagePromptUnknown)
	row.Retries = nonzero(p.Retries)
	row.UsagePromptDiffPct, row.UsageCompletionDiffPct = p.UsagePromptDiffPct, p.UsageCompletionDiffPct
	row.UsageReasoningDiffPct = p.UsageReasoningDiffPct
	if len(p.ErrorMessages) > 0 {
		row.ErrorMessages = p.ErrorMessages
	}
	if s := stat(p.TTFTMinusServerPromptMs); s != nil {
		row.TTFTMinusServerPromptP50Ms = fp(s.P50)
	}
}

// unstated clears the latency statistics an aggregate-only import states as 0: a tool writes
// 0 for a metric without samples (vLLM's TPOT when no request had two tokens), and no measured
// latency is 0 ms. Statistics the file does not state at all are null in point.json already.
func unstated(row *schema.AtlasRow) {
	for _, p := range []**float64{&row.TTFTAvgMs, &row.TTFTP50Ms, &row.TTFTP90Ms, &row.TTFTP95Ms, &row.TTFTP99Ms, &row.TTFOAvgMs,
		&row.ITLAvgMs, &row.ITLP50Ms, &row.ITLP99Ms, &row.RequestLatencyAvgMs, &row.RequestLatencyP50Ms, &row.RequestLatencyP99Ms} {
		if *p != nil && **p == 0 {
			*p = nil
		}
	}
}
