package benchfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"strings"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/stats"
)

// AIPerf file names inside one artifact directory (one directory = one load setting).
const (
	AIPerfAggregate = "profile_export_aiperf.json"
	AIPerfRecords   = "profile_export.jsonl"
)

// aiperfMetric is one JsonMetricResult; a statistic it lacks (min/max/std are dropped when
// null, run-level metrics carry only avg) is nil, and unstated in its schema.Stat.
type aiperfMetric struct {
	Unit string `json:"unit"`
	schema.NullableStats
}

type aiperfConfig struct {
	Endpoint struct {
		ModelNames          []string `json:"model_names"`
		UseServerTokenCount bool     `json:"use_server_token_count"`
	} `json:"endpoint"`
	Input struct {
		Prompt struct {
			InputTokens struct {
				Mean float64 `json:"mean"`
			} `json:"input_tokens"`
			OutputTokens struct {
				Mean float64 `json:"mean"`
			} `json:"output_tokens"`
		} `json:"prompt"`
	} `json:"input"`
	Tokenizer struct {
		Name string `json:"name"`
	} `json:"tokenizer"`
	Loadgen struct {
		Concurrency json.RawMessage `json:"concurrency"`
		RequestRate json.RawMessage `json:"request_rate"`
		RateMode    string          `json:"request_rate_mode"`
	} `json:"loadgen"`
	Version string `json:"aiperf_version"`
}

// aiperfDoc is a profile_export_aiperf.json read: its metrics by tag, raw.
type aiperfDoc struct {
	file string
	data []byte
	top  map[string]json.RawMessage
}

func (a *aiperfDoc) at(field, msg string) *Error {
	parent, key, nested := strings.Cut(field, ".")
	line := lineOfKey(a.data, 1, parent)
	if nested {
		line = lineOfKeyAfter(a.data, parent, lastKey(key))
	}
	return &Error{File: a.file, Line: line, Field: field, Msg: msg}
}

// avg is a metric's avg as the file holds it (nil when absent).
func (a *aiperfDoc) avg(tag string) []byte {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(a.top[tag], &m)
	return m["avg"]
}

// metric reads one metric: its unit converted (a time to ms: time true), every statistic it
// states checked under r, in the converted unit. Nil when absent and not required.
func (a *aiperfDoc) metric(tag string, time bool, r rule, required bool) (*aiperfMetric, error) {
	raw, ok := a.top[tag]
	if !ok {
		if required {
			return nil, &Error{File: a.file, Line: 1, Field: tag, Msg: "missing"}
		}
		return nil, nil
	}
	var vals map[string]json.RawMessage
	if err := json.Unmarshal(raw, &vals); err != nil || vals == nil {
		return nil, a.at(tag, fmt.Sprintf("holds %s, expected a metric object (unit, avg, ...)", shown(raw)))
	}
	var unit string
	_ = json.Unmarshal(vals["unit"], &unit)
	f := 1.0
	if time {
		if f, ok = toMs(1, unit); !ok {
			return nil, a.at(tag+".unit", fmt.Sprintf("unit %q is not a time unit (ms, ns, us, s)", unit))
		}
	}
	for _, k := range []string{"avg", "min", "max", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "std"} {
		v, ok := vals[k]
		if !ok || string(v) == "null" {
			if k == "avg" {
				return nil, a.at(tag+".avg", "missing: every metric states its avg")
			}
			continue
		}
		if _, problem := scaled(v, f, unit, r); problem != "" {
			return nil, a.at(tag+"."+k, problem)
		}
	}
	var m aiperfMetric
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, a.at(tag, err.Error())
	}
	m.Scale(f)
	return &m, nil
}

// ReadAIPerf reads an AIPerf artifact directory: the aggregate JSON (required) and the
// per-request JSONL when present.
func ReadAIPerf(dir string, e Expect, o stats.Options) (*Result, error) {
	file := filepath.Join(dir, AIPerfAggregate)
	data, err := readFile(file)
	if err != nil {
		return nil, fmt.Errorf("aiperf import: %w", err)
	}
	if msg := notObject(data); msg != "" {
		return nil, &Error{File: file, Line: 1, Field: "(document)", Msg: msg + " (an AIPerf profile export)"}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &Error{File: file, Line: 1, Field: "(document)", Msg: "empty file: want an AIPerf profile export"}
	}
	a := &aiperfDoc{file: file, data: data}
	if err := json.Unmarshal(data, &a.top); err != nil {
		return nil, jsonError(file, data, 0, err)
	}
	if _, ok := a.top["backend"]; ok {
		return nil, a.at("backend", "this is a vLLM/SGLang bench result, not an AIPerf profile export")
	}
	if rec, ok := a.top["records"]; ok { // older builds nest metrics under records
		var nested map[string]json.RawMessage
		if err := json.Unmarshal(rec, &nested); err == nil {
			for k, v := range nested {
				a.top[k] = v
			}
		}
	}
	r := &Result{Source: SourceAIPerf, File: file, data: data, line: 1, concurrencyField: "input_config.loadgen.concurrency"}
	var cfg aiperfConfig
	if raw, ok := a.top["input_config"]; ok {
		if err := json.Unmarshal(raw, &cfg); err != nil {
			return nil, a.at("input_config", err.Error())
		}
	} else {
		return nil, &Error{File: file, Line: 1, Field: "input_config", Msg: "missing (not an AIPerf profile export?)"}
	}
	if len(cfg.Endpoint.ModelNames) > 0 {
		r.Model = cfg.Endpoint.ModelNames[0]
	}
	r.SourceVersion = cfg.Version
	concAt := &Error{File: file, Line: lineOfKeyAfter(data, "input_config", "loadgen"), Field: r.concurrencyField}
	rate, problem := requestRate(cfg.Loadgen.RequestRate) // --request-rate: a rate point, --concurrency its cap
	if problem != "" {
		return nil, &Error{File: file, Line: lineOfKeyAfter(data, "loadgen", "request_rate"), Field: "input_config.loadgen.request_rate", Msg: problem}
	}
	if c := cfg.Loadgen.Concurrency; (c == nil || string(c) == "null") && math.IsInf(rate, 1) {
		concAt.Msg = "missing: one AIPerf directory must be one --concurrency or --request-rate run"
		return nil, concAt
	} else if c != nil && string(c) != "null" {
		n, problem := number(c, ruleConcurrency)
		if problem != "" {
			concAt.Line, concAt.Msg = lineOfKeyAfter(data, "loadgen", "concurrency"), problem
			return nil, concAt
		}
		r.Concurrency = int(n)
	}
	r.Load = schema.Conc(r.Concurrency)
	if !math.IsInf(rate, 1) {
		r.Load, r.rateField, r.Arrival = schema.RateAt(rate, r.Concurrency), "input_config.loadgen.request_rate", schema.ArrivalPoisson
		if cfg.Loadgen.RateMode == schema.ArrivalConstant {
			r.Arrival = schema.ArrivalConstant
		}
	}
	r.TokenBasis = aiperfCounted(cfg)
	agg := schema.Point{}
	count, err := a.metric("request_count", false, ruleCount, true)
	if err != nil {
		return nil, err
	}
	dur, err := a.metric("benchmark_duration", true, ruleDurationMs, true)
	if err != nil {
		return nil, err
	}
	agg.RequestCount = int(*count.Avg)
	agg.NumPrompts = agg.RequestCount
	ec, err := a.metric("error_request_count", false, ruleCount, false)
	if err != nil {
		return nil, err
	}
	if ec != nil {
		agg.ErrorCount = int(*ec.Avg)
		agg.NumPrompts += agg.ErrorCount
	}
	agg.WindowS = *dur.Avg / 1e3
	for _, m := range []struct {
		tag  string
		dst  **schema.Stat
		time bool
		unit string
		r    rule
	}{
		{"time_to_first_token", &agg.TTFT, true, stats.UnitMs, ruleMs},
		{"inter_token_latency", &agg.ITL, true, stats.UnitMs, ruleMs},
		{"inter_chunk_latency", &agg.ICL, true, stats.UnitMs, ruleMs},
		{"request_latency", &agg.RequestLatency, true, stats.UnitMs, ruleMs},
		{"output_token_throughput_per_user", &agg.TPSUser, false, stats.UnitTPSUser, ruleRate},
		{"input_sequence_length", &agg.ISL, false, stats.UnitTokens, ruleMeanTokens},
		{"output_sequence_length", &agg.OSL, false, stats.UnitTokens, ruleMeanTokens},
		{"output_token_count", &agg.OutputTokens, false, stats.UnitTokens, ruleMeanTokens},
		{"reasoning_token_count", &agg.ReasoningTok, false, stats.UnitTokens, ruleMeanTokens},
	} {
		v, err := a.metric(m.tag, m.time, m.r, m.tag == "request_latency")
		if err != nil {
			return nil, err
		}
		if v == nil {
			continue
		}
		if !m.time && v.Unit != m.unit {
			return nil, a.at(m.tag+".unit", fmt.Sprintf("unit %q, want %q", v.Unit, m.unit))
		}
		*m.dst = v.Stat(m.unit, agg.RequestCount)
	}
	var totalISL, totalOSL float64
	tisl, err := a.metric("total_isl", false, ruleTotalTokens, false)
	if err != nil {
		return nil, err
	}
	if tisl != nil {
		totalISL = *tisl.Avg
	}
	tosl, err := a.metric("total_osl", false, ruleTotalTokens, false)
	if err != nil {
		return nil, err
	}
	if tosl != nil {
		totalOSL = *tosl.Avg
	}
	agg.RequestThroughput = float64(agg.RequestCount) / agg.WindowS
	agg.OutputTokenThroughput = totalOSL / agg.WindowS
	agg.TotalTokenThroughput = (totalISL + totalOSL) / agg.WindowS
	if agg.RequestCount > 0 {
		agg.MeanISL, agg.MeanOSL = totalISL/float64(agg.RequestCount), totalOSL/float64(agg.RequestCount)
	}
	if agg.TTFT != nil {
		agg.TTFOCoverage = 1
	}
	r.lengths = [2]lengthSource{
		{total: "total_isl.avg", count: "request_count.avg", totalRaw: a.avg("total_isl"), countRaw: a.avg("request_count"), list: "input_sequence_length"},
		{total: "total_osl.avg", count: "request_count.avg", totalRaw: a.avg("total_osl"), countRaw: a.avg("request_count"), list: "output_token_count"},
	}
	isl, osl := cfg.Input.Prompt.InputTokens.Mean, cfg.Input.Prompt.OutputTokens.Mean
	if err := r.check(e, "input_config.endpoint.model_names", isl, osl,
		"input_config.input.prompt.input_tokens.mean", "input_config.input.prompt.output_tokens.mean"); err != nil {
		return nil, err
	}
	if g, err := a.metric("goodput", false, ruleRate, false); err != nil {
		return nil, err
	} else if g != nil && g.Avg != nil {
		r.SourceGoodput = g.Avg
	}
	recFile := filepath.Join(dir, AIPerfRecords)
	rd, err := readFile(recFile)
	switch {
	case errors.Is(err, fs.ErrNotExist): // no per-request records: the aggregate's statistics stand
	case err != nil: // an unreadable or oversized records file is an error, not an aggregate-only import
		return nil, fmt.Errorf("aiperf import: %w", err)
	default:
		recs, err := parseAIPerfRecords(recFile, rd)
		if err != nil {
			return nil, err
		}
		r.Records = recs
		if err := a.checkRecords(recs, tisl != nil, totalISL); err != nil {
			return nil, err
		}
	}
	r.finish(o, agg)
	r.aiperfClock(a.top)
	return r, nil
}

// checkRecords compares the aggregate's counts and input total with the records they count.
func (a *aiperfDoc) checkRecords(recs []schema.RequestRecord, hasISL bool, totalISL float64) error {
	var sumISL float64
	valid, failed := 0, 0
	for _, rec := range recs {
		switch {
		case rec.Phase != stats.PhaseProfiling:
		case rec.ErrorClass == "":
			sumISL += float64(rec.InputTokens)
			valid++
		default:
			failed++
		}
	}
	count, errs, isl := a.avg("request_count"), a.avg("error_request_count"), a.avg("total_isl")
	parse := func(raw []byte) float64 { v, _ := number(raw, ruleTotalTokens); return v }
	if !hasISL {
		isl = nil
	}
	return checkTotals(a.at,
		stated{"request_count.avg", count, parse(count), float64(valid), fmt.Sprintf("%s holds %d valid profiling records", AIPerfRecords, valid)},
		stated{"error_request_count.avg", errs, parse(errs), float64(failed), fmt.Sprintf("%s holds %d failed profiling records", AIPerfRecords, failed)},
		stated{"total_isl.avg", isl, parse(isl), sumISL, fmt.Sprintf("the valid records' input_sequence_length sum to %g", sumISL)},
	)
}

// chunkTimes rebuilds chunk arrival times from the first token and the gaps (in ms × f).
func chunkTimes(first int64, gaps []float64, f float64) []int64 {
	ts := make([]int64, 0, len(gaps)+1)
	ts = append(ts, first)
	acc := 0.0
	for _, g := range gaps {
		acc += g * f
		ts = append(ts, first+msToNs(acc))
	}
	return ts
}

// jsonError positions a decode error of a whole-file JSON document.
func jsonError(file string, data []byte, base int, err error) error {
	if se, ok := err.(*json.SyntaxError); ok {
		off := min(int(se.Offset), len(data))
		return &Error{File: file, Line: base + 1 + bytes.Count(data[:off], []byte{'\n'}), Field: "(syntax)", Msg: err.Error()}
	}
	if te, ok := err.(*json.UnmarshalTypeError); ok {
		off := min(int(te.Offset), len(data))
		return &Error{File: file, Line: base + 1 + bytes.Count(data[:off], []byte{'\n'}), Field: te.Field, Msg: err.Error()}
	}
	return &Error{File: file, Line: base + 1, Field: "(document)", Msg: err.Error()}
}

// lineError positions a decode error of one JSONL line.
func lineError(file string, line int, raw []byte, err error) error {
	if e := jsonError(file, raw, line-1, err); e != nil {
		pe := e.(*Error)
		pe.Line = line
		if pe.Field == "(syntax)" && !json.Valid(raw) {
			pe.Field, pe.Msg = "(line)", "truncated or malformed JSON: "+err.Error()
		}
		return pe
	}
	return nil
}
