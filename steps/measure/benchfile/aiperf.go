package benchfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
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
		Concurrency int `json:"concurrency"`
	} `json:"loadgen"`
	Version string `json:"aiperf_version"`
}

// ReadAIPerf reads an AIPerf artifact directory: the aggregate JSON (required) and the
// per-request JSONL when present.
func ReadAIPerf(dir string, e Expect, o stats.Options) (*Result, error) {
	file := filepath.Join(dir, AIPerfAggregate)
	data, err := readFile(file)
	if err != nil {
		return nil, fmt.Errorf("aiperf import: %w", err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, jsonError(file, data, 0, err)
	}
	if _, ok := top["backend"]; ok {
		return nil, &Error{File: file, Line: lineOfKey(data, 1, "backend"), Field: "backend", Msg: "this is a vLLM/SGLang bench result, not an AIPerf profile export"}
	}
	if rec, ok := top["records"]; ok { // older builds nest metrics under records
		var nested map[string]json.RawMessage
		if err := json.Unmarshal(rec, &nested); err == nil {
			for k, v := range nested {
				top[k] = v
			}
		}
	}
	r := &Result{Source: SourceAIPerf, File: file}
	var cfg aiperfConfig
	if raw, ok := top["input_config"]; ok {
		if err := json.Unmarshal(raw, &cfg); err != nil {
			return nil, &Error{File: file, Line: lineOfKey(data, 1, "input_config"), Field: "input_config", Msg: err.Error()}
		}
	} else {
		return nil, &Error{File: file, Line: 1, Field: "input_config", Msg: "missing (not an AIPerf profile export?)"}
	}
	if len(cfg.Endpoint.ModelNames) > 0 {
		r.Model = cfg.Endpoint.ModelNames[0]
	}
	r.Concurrency, r.SourceVersion = cfg.Loadgen.Concurrency, cfg.Version
	if r.Concurrency == 0 {
		return nil, &Error{File: file, Line: lineOfKeyAfter(data, "input_config", "loadgen"), Field: "input_config.loadgen.concurrency", Msg: "missing: one AIPerf directory must be one --concurrency run"}
	}
	r.TokenBasis = aiperfCounted(cfg)
	metric := func(tag string, time bool, required bool) (*aiperfMetric, error) {
		raw, ok := top[tag]
		if !ok {
			if required {
				return nil, &Error{File: file, Line: 1, Field: tag, Msg: "missing"}
			}
			return nil, nil
		}
		var m aiperfMetric
		if err := json.Unmarshal(raw, &m); err != nil || m.Avg == nil {
			return nil, &Error{File: file, Line: lineOfKey(data, 1, tag), Field: tag + ".avg", Msg: "missing or not a number"}
		}
		if time {
			f, ok := toMs(1, m.Unit)
			if !ok {
				return nil, &Error{File: file, Line: lineOfKeyAfter(data, tag, "unit"), Field: tag + ".unit", Msg: fmt.Sprintf("unit %q is not a time unit (ms, ns, us, s)", m.Unit)}
			}
			m.Scale(f)
		}
		return &m, nil
	}
	agg := schema.Point{}
	count, err := metric("request_count", false, true)
	if err != nil {
		return nil, err
	}
	dur, err := metric("benchmark_duration", true, true)
	if err != nil {
		return nil, err
	}
	agg.RequestCount = int(*count.Avg)
	agg.NumPrompts = agg.RequestCount
	if ec, _ := metric("error_request_count", false, false); ec != nil {
		agg.ErrorCount = int(*ec.Avg)
		agg.NumPrompts += agg.ErrorCount
	}
	agg.WindowS = *dur.Avg / 1e3
	for _, m := range []struct {
		tag  string
		dst  **schema.Stat
		time bool
		unit string
	}{
		{"time_to_first_token", &agg.TTFT, true, stats.UnitMs},
		{"inter_token_latency", &agg.ITL, true, stats.UnitMs},
		{"inter_chunk_latency", &agg.ICL, true, stats.UnitMs},
		{"request_latency", &agg.RequestLatency, true, stats.UnitMs},
		{"output_token_throughput_per_user", &agg.TPSUser, false, stats.UnitTPSUser},
		{"input_sequence_length", &agg.ISL, false, stats.UnitTokens},
		{"output_sequence_length", &agg.OSL, false, stats.UnitTokens},
		{"output_token_count", &agg.OutputTokens, false, stats.UnitTokens},
		{"reasoning_token_count", &agg.ReasoningTok, false, stats.UnitTokens},
	} {
		v, err := metric(m.tag, m.time, m.tag == "request_latency")
		if err != nil {
			return nil, err
		}
		if v == nil {
			continue
		}
		if !m.time && v.Unit != m.unit {
			return nil, &Error{File: file, Line: lineOfKeyAfter(data, m.tag, "unit"), Field: m.tag + ".unit", Msg: fmt.Sprintf("unit %q, want %q", v.Unit, m.unit)}
		}
		*m.dst = v.Stat(m.unit, agg.RequestCount)
	}
	var totalISL, totalOSL float64
	if m, _ := metric("total_isl", false, false); m != nil {
		totalISL = *m.Avg
	}
	if m, _ := metric("total_osl", false, false); m != nil {
		totalOSL = *m.Avg
	}
	if agg.WindowS > 0 {
		agg.RequestThroughput = float64(agg.RequestCount) / agg.WindowS
		agg.OutputTokenThroughput = totalOSL / agg.WindowS
		agg.TotalTokenThroughput = (totalISL + totalOSL) / agg.WindowS
	}
	if agg.RequestCount > 0 {
		agg.MeanISL, agg.MeanOSL = totalISL/float64(agg.RequestCount), totalOSL/float64(agg.RequestCount)
	}
	if agg.TTFT != nil {
		agg.TTFOCoverage = 1
	}
	isl, osl := cfg.Input.Prompt.InputTokens.Mean, cfg.Input.Prompt.OutputTokens.Mean
	if err := r.check(e, data, 1, "input_config.endpoint.model_names", "input_config.loadgen.concurrency", isl, osl,
		"input_config.input.prompt.input_tokens.mean", "input_config.input.prompt.output_tokens.mean"); err != nil {
		return nil, err
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
		var sumISL float64
		valid := 0
		for _, rec := range recs {
			if rec.Phase == stats.PhaseProfiling && rec.ErrorClass == "" {
				sumISL += float64(rec.InputTokens)
				valid++
			}
		}
		if valid != agg.RequestCount {
			return nil, &Error{File: file, Line: lineOfKey(data, 1, "request_count"), Field: "request_count.avg",
				Msg: fmt.Sprintf("%d, but %s holds %d valid profiling records", agg.RequestCount, AIPerfRecords, valid)}
		}
		if totalISL > 0 && sumISL != totalISL {
			return nil, &Error{File: file, Line: lineOfKey(data, 1, "total_isl"), Field: "total_isl.avg",
				Msg: fmt.Sprintf("%g, but the records sum to %g", totalISL, sumISL)}
		}
	}
	r.finish(o, agg)
	r.aiperfClock(top)
	return r, nil
}

type aiperfLine struct {
	Metadata *struct {
		SessionNum     int     `json:"session_num"`
		RequestStartNs epochNs `json:"request_start_ns"`
		RequestEndNs   epochNs `json:"request_end_ns"`
		Phase          string  `json:"benchmark_phase"`
		WasCancelled   bool    `json:"was_cancelled"`
	} `json:"metadata"`
	Metrics map[string]struct {
		Value json.RawMessage `json:"value"`
		Unit  string          `json:"unit"`
	} `json:"metrics"`
	Error *struct {
		Code    *int   `json:"code"`
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

// parseAIPerfRecords turns profile_export.jsonl into request records (times in ns from
// the request's start: first token at TTFT, last content at request_latency).
func parseAIPerfRecords(file string, data []byte) ([]schema.RequestRecord, error) {
	var out []schema.RequestRecord
	for i, raw := range bytes.Split(data, []byte{'\n'}) {
		line := i + 1
		if len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		var l aiperfLine
		if err := json.Unmarshal(pythonJSON(raw), &l); err != nil {
			return nil, lineError(file, line, raw, err)
		}
		if l.Metadata == nil {
			if bytes.Contains(raw, []byte(`"backend"`)) {
				return nil, &Error{File: file, Line: line, Field: "metadata", Msg: "missing: this line is a vLLM/SGLang bench result, not an AIPerf record"}
			}
			return nil, &Error{File: file, Line: line, Field: "metadata", Msg: "missing"}
		}
		md := l.Metadata
		if md.RequestStartNs <= 0 {
			return nil, &Error{File: file, Line: line, Field: "metadata.request_start_ns", Msg: "missing or not positive"}
		}
		rec := schema.RequestRecord{Index: md.SessionNum, Phase: md.Phase, StartNs: int64(md.RequestStartNs), EndNs: int64(md.RequestEndNs), Status: 200}
		if rec.Phase == "" {
			rec.Phase = stats.PhaseProfiling
		}
		if l.Error != nil || md.WasCancelled {
			rec.ErrorClass = ErrorImported
			if md.WasCancelled {
				rec.ErrorClass = schema.ErrorCancelled
			}
			if l.Error != nil {
				rec.Error = strings.TrimSpace(l.Error.Type + " " + l.Error.Message)
				if l.Error.Code != nil {
					rec.Status = *l.Error.Code
				}
			}
			out = append(out, rec)
			continue
		}
		num := func(tag, unit string, required bool) (float64, error) {
			m, ok := l.Metrics[tag]
			if !ok {
				if required {
					return 0, &Error{File: file, Line: line, Field: "metrics." + tag, Msg: "missing"}
				}
				return 0, nil
			}
			var v float64
			if err := json.Unmarshal(m.Value, &v); err != nil {
				return 0, &Error{File: file, Line: line, Field: "metrics." + tag + ".value", Msg: "not a number"}
			}
			if unit == "time" {
				ms, ok := toMs(v, m.Unit)
				if !ok {
					return 0, &Error{File: file, Line: line, Field: "metrics." + tag + ".unit", Msg: fmt.Sprintf("unit %q is not a time unit (ms, ns, us, s)", m.Unit)}
				}
				return ms, nil
			}
			if m.Unit != unit {
				return 0, &Error{File: file, Line: line, Field: "metrics." + tag + ".unit", Msg: fmt.Sprintf("unit %q, want %q", m.Unit, unit)}
			}
			return v, nil
		}
		ttft, err := num("time_to_first_token", "time", true)
		if err != nil {
			return nil, err
		}
		lat, err := num("request_latency", "time", true)
		if err != nil {
			return nil, err
		}
		isl, err := num("input_sequence_length", stats.UnitTokens, true)
		if err != nil {
			return nil, err
		}
		outTok, err := num("output_token_count", stats.UnitTokens, true)
		if err != nil {
			return nil, err
		}
		reason, err := num("reasoning_token_count", stats.UnitTokens, false)
		if err != nil {
			return nil, err
		}
		rec.FirstTokenNs = rec.StartNs + msToNs(ttft)
		rec.LastContentNs = rec.StartNs + msToNs(lat)
		if reason == 0 {
			rec.FirstOutputNs = rec.FirstTokenNs
		}
		rec.InputTokens, rec.OutputTokens, rec.ReasoningTok = int(isl), int(outTok), int(reason)
		if m, ok := l.Metrics["inter_chunk_latency"]; ok {
			var gaps []float64
			if err := json.Unmarshal(m.Value, &gaps); err != nil {
				return nil, &Error{File: file, Line: line, Field: "metrics.inter_chunk_latency.value", Msg: "not a list of numbers"}
			}
			f, ok := toMs(1, m.Unit)
			if !ok {
				return nil, &Error{File: file, Line: line, Field: "metrics.inter_chunk_latency.unit", Msg: fmt.Sprintf("unit %q is not a time unit (ms, ns, us, s)", m.Unit)}
			}
			rec.ChunkNs = chunkTimes(rec.FirstTokenNs, gaps, f)
		}
		out = append(out, rec)
	}
	return out, nil
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
