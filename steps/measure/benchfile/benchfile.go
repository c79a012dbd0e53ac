// Package benchfile reads benchmark outputs written by other tools (AIPerf artifact
// directories, vLLM `bench serve --save-result` JSON, SGLang bench_serving JSONL) into
// perfdag points. Per-request records are turned into schema.RequestRecord values and the
// statistics recomputed with steps/measure/stats (perfdag's definitions); a file without
// them yields a point built from its aggregate keys. Every time is converted to ms and
// every problem is a *Error naming the file, line and field.
package benchfile

import (
	"bytes"
	"fmt"
	"math"
	"strings"

	"github.com/perfdag/perfdag/engine/bounded"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/stats"
)

// Sources a result can come from.
const (
	SourceAIPerf = "aiperf"
	SourceVLLM   = "vllm-bench"
	SourceSGLang = "sglang-bench"
)

// Where the statistics of a point came from.
const (
	StatsPerRequest = "per-request"
	StatsAggregate  = "aggregate"
)

// ErrorImported classes a request the source tool recorded as failed.
const ErrorImported = "imported_error"

// MaxFileBytes bounds every file an import reads (an AIPerf aggregate or records JSONL, a
// vLLM or SGLang result): a regular file of at most 256 MiB, else a not_regular_file or
// too_large error (engine/bounded) before anything is parsed — a FIFO named as an output
// would otherwise block the import for ever, a huge file eat the memory.
const MaxFileBytes = 256 << 20

// readFile reads one imported file within MaxFileBytes, without a leading UTF-8 byte-order
// mark (JSON forbids one; some Windows tools write it).
func readFile(path string) ([]byte, error) {
	b, err := bounded.ReadFile("benchmark output", path, MaxFileBytes)
	return bytes.TrimPrefix(b, utf8BOM), err
}

// Error is a positioned problem in an imported file.
type Error struct {
	File  string
	Line  int
	Field string
	Msg   string
}

func (e *Error) Error() string {
	where := e.File
	if e.Line > 0 {
		where = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	if e.Field == "" || strings.HasPrefix(e.Field, "(") { // "(document)", "(directory)": no field to name
		return fmt.Sprintf("%s: %s", where, e.Msg)
	}
	return fmt.Sprintf("%s: %s: %s", where, e.Field, e.Msg)
}

// Expect is what the campaign cell says the file measured; zero values are not checked.
type Expect struct {
	Model string
	// Load is the point the cell names (c4, r2.5-cap16); when zero, Concurrency names a
	// closed-loop point. Neither set: the load is not checked.
	Load        schema.Load
	Concurrency int
	ISL, OSL    int // requested prompt / output tokens of the cell's shape
	// Arrival and Burstiness are the cell's arrival process, checked on a rate point ("":
	// poisson).
	Arrival    string
	Burstiness float64
}

// Want is the point the cell names: Load, else the closed loop at Concurrency (zero: any).
func (e Expect) Want() schema.Load {
	if !e.Load.IsZero() {
		return e.Load
	}
	if e.Concurrency > 0 {
		return schema.Conc(e.Concurrency)
	}
	return schema.Load{}
}

// Result is one imported point.
type Result struct {
	Source        string
	SourceVersion string // tool version when the file states it
	File          string // the main file read
	StatsFrom     string // per-request or aggregate
	TokenBasis    string // what the source's token counts are (schema.Counted*); the point names schema.ImportedBasis
	Clock         string // where the point's started_at / ended_at come from, or why they are unknown
	Model         string // as the file states it
	// Load is the point the run measured: a closed loop at its concurrency, or (vLLM, SGLang
	// with a finite request_rate) a request rate with its max concurrency as the cap.
	Load schema.Load
	// Concurrency is what the run kept or allowed in flight: Load.InFlight() (0: a rate
	// without a cap).
	Concurrency int
	// Arrival and Burstiness say how a rate run's arrivals were drawn: poisson, or gamma of
	// that shape (vLLM's --burstiness); empty on a closed loop.
	Arrival    string
	Burstiness float64
	// ISL and OSL are the prompt and output lengths the file states its run asked for (or,
	// without one, its mean prompt length); 0 when it states none.
	ISL, OSL float64
	Records  []schema.RequestRecord // nil when the file holds only aggregates
	Point    schema.Point
	// SourceGoodput is the tool's own goodput (vLLM's request_goodput, AIPerf's goodput) in
	// requests/s, when the file states one (it ran with --goodput); shown beside perfdag's
	// when the cell declares an slo.
	SourceGoodput *float64

	data             []byte // the result object's text (AIPerf: the whole aggregate file), for positions
	line             int    // the line it starts on
	concurrencyField string
	rateField        string          // where the file states its request rate ("" when it states none)
	lengths          [2]lengthSource // where the mean prompt and output lengths come from
}

// lengthSource names where a run's mean prompt or output length comes from, and what the
// file holds there, for a refusal that blames the right field.
type lengthSource struct {
	total, count       string // the stated total and request-count fields
	totalRaw, countRaw []byte // their values as the file holds them (nil: absent)
	list               string // the per-request field the records' lengths come from
}

// Workload returns the prompt and output lengths a cell importing r is named by: the
// lengths the file says its run asked for, else the means it measured. A length below one
// token is an error at the field it comes from, quoting what the file holds there.
func (r *Result) Workload() (isl, osl float64, err error) {
	isl, osl = r.ISL, r.OSL
	if isl <= 0 {
		isl = r.Point.MeanISL
	}
	if osl <= 0 {
		osl = r.Point.MeanOSL
	}
	for i, v := range []float64{isl, osl} {
		if v >= 1 {
			continue
		}
		src, what := r.lengths[i], [2]string{"prompt", "output"}[i]
		const cannot = "the cell's workload (prompt and output length) cannot be named"
		switch {
		case r.Point.RequestCount == 0:
			return 0, 0, r.At(src.count, fmt.Sprintf("no request succeeded, so the mean %s length is unknown: %s", what, cannot))
		case r.Records != nil:
			return 0, 0, r.At(src.list, fmt.Sprintf("the %d successful requests average %.3g %s tokens, below one: %s", r.Point.RequestCount, v, what, cannot))
		case src.totalRaw == nil:
			return 0, 0, r.At(src.total, fmt.Sprintf("missing, and the file states no %s length its run asked for: %s", what, cannot))
		case v == 0:
			return 0, 0, r.At(src.total, fmt.Sprintf("holds %s: no %s tokens, so %s", shown(src.totalRaw), what, cannot))
		}
		return 0, 0, r.At(src.count, fmt.Sprintf("holds %s: %s %s tokens (%s) over that many requests is %.3g a request, below one: is %s right? %s",
			shown(src.countRaw), shown(src.totalRaw), what, src.total, v, src.count, cannot))
	}
	return isl, osl, nil
}

// At positions a problem with a field of the file the result was read from (the model,
// concurrency or token fields named by ModelField, ConcurrencyField, ...).
func (r *Result) At(field, msg string) *Error {
	return &Error{File: r.File, Line: max(r.line, 1) + lineOfKey(r.data, 1, lastKey(field)) - 1, Field: field, Msg: msg}
}

// Slim is r without its per-request records and the run's text, for a caller keeping the
// results of many runs: an import of a file of ten thousand runs keeps each run's point, not
// its requests. Its problems (At) are placed at the run's first line.
func (r *Result) Slim() *Result {
	s := *r
	s.Records, s.data = nil, nil
	return &s
}

// ConcurrencyField names the field the file states its concurrency in.
func (r *Result) ConcurrencyField() string { return r.concurrencyField }

// NoPerRequestGoodput is why an aggregate-only import's goodput is unknown.
const NoPerRequestGoodput = "the file states aggregates only: whether each request met the targets needs its per-request times (vLLM --save-detailed, AIPerf's profile_export.jsonl, SGLang's per-request lists)"

// sourceGoodput puts the file's own goodput beside perfdag's on a point with an slo.
func (r *Result) sourceGoodput() {
	if r.Point.Goodput != nil && r.SourceGoodput != nil {
		v := *r.SourceGoodput
		r.Point.Goodput.SourceGoodputReqS = &v
	}
}

// finish builds the point: recomputed from records when there are any, else agg as given.
func (r *Result) finish(o stats.Options, agg schema.Point) {
	o.Load, o.Concurrency, o.RequestRate, o.Arrival = r.Load, r.Concurrency, r.Load.Rate, r.Arrival
	o.TokenBasis = r.pointBasis() // the source counted every token: no basis of perfdag's applies
	defer r.sourceGoodput()
	if len(r.Records) > 0 {
		r.StatsFrom = StatsPerRequest
		r.Point = stats.Compute(r.Records, o)
		return
	}
	if o.SLO != nil {
		// whether a request met the targets needs its own times
		agg.Goodput = &schema.Goodput{SLO: *o.SLO, Unknown: NoPerRequestGoodput}
	}
	r.StatsFrom = StatsAggregate
	agg.Schema, agg.Cell, agg.Load, agg.Concurrency, agg.Shape, agg.Mode, agg.GPUs = "point_v1", o.Cell, r.Load, r.Concurrency, o.Shape, o.Mode, o.GPUs
	agg.RequestRate, agg.Arrival, agg.TokenBasis = o.RequestRate, o.Arrival, o.TokenBasis
	if agg.ReasoningField == "" {
		agg.ReasoningField = "none"
	}
	if o.GPUs > 0 {
		agg.OutputTokPerSPerGPU = agg.OutputTokenThroughput / float64(o.GPUs)
		agg.TotalTokPerSPerGPU = agg.TotalTokenThroughput / float64(o.GPUs)
	}
	agg.SteadyWindowUndercount = agg.NumPrompts < 2*r.Concurrency
	switch {
	case agg.RequestCount == 0:
		agg.Status = "failed"
	case agg.ErrorCount > 0:
		agg.Status = "partial"
	default:
		agg.Status = "ok"
	}
	r.Point = agg
}

// check compares what the file states with what the cell expects; r.data and r.line are set.
func (r *Result) check(e Expect, modelField string, isl, osl float64, islField, oslField string) error {
	r.ISL, r.OSL = isl, osl
	if e.Model != "" && r.Model != "" && r.Model != e.Model {
		return r.At(modelField, fmt.Sprintf("file measured model %q, the cell names %q", r.Model, e.Model))
	}
	if want := e.Want(); !want.IsZero() && r.Load != want {
		field := r.concurrencyField
		if r.Load.Rate != want.Rate && r.rateField != "" {
			field = r.rateField
		}
		return r.At(field, fmt.Sprintf("file measured %s, the cell names %s", loadWords(r.Load), loadWords(want)))
	}
	if want := e.Want(); want.IsRate() && r.Arrival != "" {
		arrival, b := e.Arrival, e.Burstiness
		if arrival == "" {
			arrival = schema.ArrivalPoisson
		}
		if arrival != r.Arrival || (arrival == schema.ArrivalGamma && b != r.Burstiness) {
			return r.At("burstiness", fmt.Sprintf("file's arrivals were %s, the cell's workload names %s", ArrivalWords(r.Arrival, r.Burstiness), ArrivalWords(arrival, b)))
		}
	}
	for _, c := range []struct {
		want  int
		got   float64
		field string
	}{{e.ISL, isl, islField}, {e.OSL, osl, oslField}} {
		if c.want > 0 && c.got > 0 && math.Abs(c.got-float64(c.want)) > 0.1*float64(c.want) {
			return r.At(c.field, fmt.Sprintf("file states %g tokens, the cell's shape asks %d (more than 10%% apart)", c.got, c.want))
		}
	}
	return nil
}

// lastKey is the last dotted component of a field path, without an index.
func lastKey(field string) string {
	if i := strings.LastIndexByte(field, '.'); i >= 0 {
		field = field[i+1:]
	}
	if i := strings.IndexByte(field, '['); i >= 0 {
		field = field[:i]
	}
	return field
}

// lineOfKey returns the 1-based line of the first `"key":` at or after line from; from
// when the key is absent (a missing field is reported at its object's line).
func lineOfKey(data []byte, from int, key string) int {
	start := 0
	for l := 1; l < from; l++ {
		i := bytes.IndexByte(data[start:], '\n')
		if i < 0 {
			return from
		}
		start += i + 1
	}
	i := bytes.Index(data[start:], []byte(`"`+key+`"`))
	if i < 0 {
		return from
	}
	return from + bytes.Count(data[start:start+i], []byte{'\n'})
}

// lineOfKeyAfter is lineOfKey searching from the first occurrence of parent.
func lineOfKeyAfter(data []byte, parent, key string) int {
	i := bytes.Index(data, []byte(`"`+parent+`"`))
	if i < 0 {
		return 1
	}
	j := bytes.Index(data[i:], []byte(`"`+key+`"`))
	if j < 0 {
		return 1 + bytes.Count(data[:i], []byte{'\n'})
	}
	return 1 + bytes.Count(data[:i+j], []byte{'\n'})
}

// toMs converts a duration in unit to milliseconds; ok false for a unit that is not a time.
func toMs(v float64, unit string) (float64, bool) {
	switch unit {
	case "ms":
		return v, true
	case "ns":
		return v / 1e6, true
	case "us":
		return v / 1e3, true
	case "s", "sec":
		return v * 1e3, true
	}
	return 0, false
}

// msToNs converts milliseconds to whole nanoseconds.
func msToNs(v float64) int64 { return int64(math.Round(v * 1e6)) }

// Unknown names what an aggregate-only point cannot know because its file does not state
// it, by the point's JSON names: a metric the file states nothing of ("osl"), or the mean or
// a gated percentile it leaves out ("ttft_ms p90"). Nil for a point recomputed from
// per-request records, where every statistic is computed.
func (r *Result) Unknown() []string {
	if r.StatsFrom == StatsPerRequest {
		return nil
	}
	p := r.Point
	var out []string
	for _, m := range []struct {
		name string
		st   *schema.Stat
	}{{"ttft_ms", p.TTFT}, {"itl_ms", p.ITL}, {"inter_chunk_ms", p.ICL}, {"request_latency_ms", p.RequestLatency},
		{"tps_per_user", p.TPSUser}, {"isl", p.ISL}, {"osl", p.OSL}} {
		if m.st == nil {
			out = append(out, m.name)
			continue
		}
		for _, s := range []string{"avg", "p50", "p90", "p95", "p99"} {
			if !m.st.Stated(s) {
				out = append(out, m.name+" "+s)
			}
		}
	}
	return out
}

// StatsNote says where the point's statistics came from, for a run line: "per-request
// stats", or "aggregate stats; unknown: ttft_ms p90, osl".
func (r *Result) StatsNote() string {
	if r.StatsFrom == StatsPerRequest {
		return "per-request stats"
	}
	if u := r.Unknown(); len(u) > 0 {
		return "aggregate stats; unknown: " + strings.Join(u, ", ")
	}
	return "aggregate stats"
}
