package stats

import (
	"time"

	"github.com/perfdag/perfdag/schema"
)

// PhaseProfiling is the only phase whose records enter a point's metrics.
const PhaseProfiling = "profiling"

// ErrorInvalid classes a record that claims success but whose timestamps are not sane
// (no first token, or times out of order): AIPerf drops such records from the statistics.
const ErrorInvalid = "invalid_record"

// Units of the point's metrics.
const (
	UnitMs      = "ms"
	UnitTokens  = "tokens"
	UnitTPSUser = "tokens/sec/user"
)

// Options describe the point the records belong to.
type Options struct {
	Cell string
	// Load is the point's load; when zero it is read from Concurrency and RequestRate (a rate
	// capped by the concurrency, as an import states it).
	Load           schema.Load
	Concurrency    int
	RequestRate    float64
	Arrival        string
	Shape          string
	Mode           string
	GPUs           int  // GPUs serving the endpoint, for the per-GPU throughputs (0 = not known)
	ReasoningModel bool // the caller expects reasoning: flags a parser that folds it into content
	// TokenBasis is the endpoint's basis as points name it (schema.Endpoint.Basis): server,
	// o200k_base, tokenizer:<file>, or "" for the default (server when every valid request
	// carried usage, else o200k_base); an import names schema.ImportedBasis, and the records'
	// token counts (the source tool's) are taken as they are.
	TokenBasis string
	// WarmConnections and WarmConnectNs are the connections opened before the window and
	// what each cost (openai.Warmed), recorded on the point beside the window's own connects.
	WarmConnections int
	WarmConnectNs   []int64
	// WindowS, when set, is the window the throughputs are over instead of the records'
	// span: an import whose records carry no send times (SGLang's per-request lists) uses
	// the run's duration as its file states it.
	WindowS float64
	// SLO is the cell's per-request targets: the point states its goodput against them
	// (Point.Goodput); nil when the cell declares none.
	SLO *schema.SLO
}

// Class returns the error class a record counts under, "" when it is a valid measurement.
func Class(r schema.RequestRecord) string {
	if r.ErrorClass != "" {
		return r.ErrorClass
	}
	switch {
	case r.FirstTokenNs == 0:
		return schema.ErrorEmpty
	case r.StartNs <= 0 || r.FirstTokenNs < r.StartNs || r.LastContentNs < r.FirstTokenNs ||
		(r.FirstOutputNs != 0 && (r.FirstOutputNs < r.FirstTokenNs || r.FirstOutputNs > r.LastContentNs)):
		return ErrorInvalid
	}
	return ""
}

// ms converts a nanosecond span to milliseconds.
func ms(ns int64) float64 { return float64(ns) / 1e6 }

// Compute builds a point from its records: only phase "profiling" counts; invalid records
// are counted by class and left out of every statistic and of the window.
func Compute(records []schema.RequestRecord, o Options) schema.Point {
	l := schema.LoadOf(o.Load, o.Concurrency, o.RequestRate)
	o.Load, o.Concurrency, o.RequestRate = l, l.InFlight(), l.Rate // one spelling of the point below
	p := schema.Point{
		Schema: "point_v1", Cell: o.Cell, Load: l, Concurrency: l.InFlight(), RequestRate: l.Rate,
		Arrival: o.Arrival, Shape: o.Shape, Mode: o.Mode, GPUs: o.GPUs, ReasoningField: "none",
	}
	var (
		valid, profiling                         []schema.RequestRecord
		firstStart, lastEnd                      int64
		ttft, ttfo, itl, icl, lat, tps           []float64
		isl, osl, out, reason                    []float64
		failed                                   int
		failedStarts                             []int64
		sumISL, sumIn, sumOSL                    float64
		aaTokens, aaSeconds                      float64
		winStart, winEnd                         int64
		answered, sameFirst, mismatches, reasonN int
		fieldCount                               = map[string]int{}
	)
	for _, r := range records {
		if r.Phase != PhaseProfiling {
			continue
		}
		p.NumPrompts++
		profiling = append(profiling, r)
		if firstStart == 0 || (r.StartNs > 0 && r.StartNs < firstStart) {
			firstStart = r.StartNs
		}
		lastEnd = max(lastEnd, r.EndNs, r.LastContentNs)
		if c := Class(r); c != "" {
			if p.ErrorsByClass == nil {
				p.ErrorsByClass = map[string]int{}
			}
			p.ErrorsByClass[c]++
			failed++
			failedStarts = append(failedStarts, r.StartNs)
			continue
		}
		valid = append(valid, r)
	}
	p.RequestCount, p.ErrorCount = len(valid), failed
	p.TokenBasis = ResolveBasis(o.TokenBasis, valid)
	counts := make([]tokenCount, len(valid))
	for i, r := range valid {
		counts[i] = countOn(p.TokenBasis, r)
		if counts[i].fallback {
			p.TokenBasisFallbacks++
		}
	}
	if firstStart > 0 {
		p.StartedAt = time.Unix(0, firstStart).UTC().Format(time.RFC3339Nano)
	}
	if lastEnd > 0 {
		p.EndedAt = time.Unix(0, lastEnd).UTC().Format(time.RFC3339Nano)
	}
	for i, r := range valid {
		t := ms(r.FirstTokenNs - r.StartNs)
		l := ms(r.LastContentNs - r.StartNs)
		tc := counts[i]
		n := tc.output + tc.reasoning
		ttft = append(ttft, t)
		lat = append(lat, l)
		if r.FirstOutputNs != 0 {
			answered++
			ttfo = append(ttfo, ms(r.FirstOutputNs-r.StartNs))
		}
		if r.FirstOutputNs == r.FirstTokenNs {
			sameFirst++
		}
		if v, ok := itlOf(t, l, n); ok {
			itl = append(itl, v)
			if v > 0 {
				tps = append(tps, 1000/v)
			}
			if gen := r.LastContentNs - r.FirstTokenNs; gen > 0 {
				aaTokens += float64(n - 1)
				aaSeconds += float64(gen) / 1e9
			}
		}
		// Gaps between content messages, pooled over requests. Messages that arrived in one
		// read share a stamp, so a zero gap is a real observation (coalesced delivery).
		for i := 1; i < len(r.ChunkNs); i++ {
			if g := r.ChunkNs[i] - r.ChunkNs[i-1]; g >= 0 {
				icl = append(icl, ms(g))
			}
		}
		isl = append(isl, float64(r.InputTokens))
		osl = append(osl, float64(n))
		out = append(out, float64(tc.output))
		reason = append(reason, float64(tc.reasoning))
		sumISL += float64(r.InputTokens)
		sumIn += float64(tc.input)
		sumOSL += float64(n)
		if winStart == 0 || r.StartNs < winStart {
			winStart = r.StartNs
		}
		winEnd = max(winEnd, r.LastContentNs)
		if r.UsageMismatch {
			mismatches++
		}
		if r.ReasoningTok > 0 {
			reasonN++
		}
		if r.ReasoningField != "" {
			fieldCount[r.ReasoningField]++
		}
	}
	p.TTFT, p.TTFO, p.ITL, p.ICL = Summarize(ttft, UnitMs), Summarize(ttfo, UnitMs), Summarize(itl, UnitMs), Summarize(icl, UnitMs)
	p.RequestLatency, p.TPSUser = Summarize(lat, UnitMs), Summarize(tps, UnitTPSUser)
	p.ISL, p.OSL = Summarize(isl, UnitTokens), Summarize(osl, UnitTokens)
	p.OutputTokens, p.ReasoningTok = Summarize(out, UnitTokens), Summarize(reason, UnitTokens)
	if p.NumPrompts > 0 {
		p.AdjTTFT, p.AdjRequestLatency = Adjusted(ttft, failed), Adjusted(lat, failed)
	}
	if len(valid) > 0 {
		p.TTFOCoverage = float64(answered) / float64(len(valid))
		p.MeanISL, p.MeanOSL = sumISL/float64(len(valid)), sumOSL/float64(len(valid))
	}
	w := float64(winEnd-winStart) / 1e9
	if o.WindowS > 0 {
		w = o.WindowS
	}
	if len(valid) > 0 && w > 0 {
		p.WindowS = w
		p.RequestThroughput = float64(len(valid)) / w
		p.OutputTokenThroughput = sumOSL / w
		p.TotalTokenThroughput = (sumIn + sumOSL) / w
		if o.GPUs > 0 {
			p.OutputTokPerSPerGPU = p.OutputTokenThroughput / float64(o.GPUs)
			p.TotalTokPerSPerGPU = p.TotalTokenThroughput / float64(o.GPUs)
		}
	}
	p.Intervals = pointIntervals(valid, counts, winEnd, o.WindowS > 0)
	if scheduled(profiling) {
		openLoop(&p, profiling, valid, o)
	}
	if o.SLO != nil {
		goodput(&p, *o.SLO, valid, counts, failedStarts, winEnd, o.WindowS > 0)
	}
	if aaSeconds > 0 {
		p.AAOutputSpeed = aaTokens / aaSeconds
	}
	p.UsageMismatches = mismatches
	fidelity(&p, records, valid)
	p.WarmConnections = o.WarmConnections
	warm := make([]float64, len(o.WarmConnectNs))
	for i, ns := range o.WarmConnectNs {
		warm[i] = ms(ns)
	}
	p.WarmConnectMs = Summarize(warm, UnitMs)
	p.Reasoning = reasonN > 0
	p.ReasoningField = dominantField(fieldCount)
	p.ReasoningParserSuspect = o.ReasoningModel && len(valid) > 0 && sameFirst == len(valid)
	p.SteadyWindowUndercount = p.NumPrompts < 2*o.Concurrency
	switch {
	case len(valid) == 0:
		p.Status = "failed"
	case failed > 0:
		p.Status = "partial"
	default:
		p.Status = "ok"
	}
	return p
}

// dominantField names the reasoning field most requests used ("none" when none did); a tie
// goes to reasoning_content, the vLLM/SGLang parser default.
func dominantField(c map[string]int) string {
	best, n := "none", 0
	for _, f := range []string{"reasoning_content", "reasoning"} {
		if c[f] > n {
			best, n = f, c[f]
		}
	}
	return best
}
