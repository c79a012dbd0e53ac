package benchfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/stats"
)

type aiperfLine struct {
	Metadata *struct {
		SessionNum     int             `json:"session_num"`
		RequestStartNs json.RawMessage `json:"request_start_ns"`
		RequestEndNs   json.RawMessage `json:"request_end_ns"`
		Phase          string          `json:"benchmark_phase"`
		WasCancelled   bool            `json:"was_cancelled"`
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
// the request's start: first token at TTFT, last content at request_latency). Every value
// is checked with the rules the other formats' per-request lists are.
func parseAIPerfRecords(file string, data []byte) ([]schema.RequestRecord, error) {
	var out []schema.RequestRecord
	line := 0
	for rest := data; len(rest) > 0; {
		line++
		raw := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			raw, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		if len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		if msg := notObject(raw); msg != "" {
			return nil, &Error{File: file, Line: line, Field: "(line)", Msg: "this line " + msg + " (one AIPerf record a line)"}
		}
		rec, err := aiperfRecord(file, line, raw)
		if err != nil {
			return nil, err
		}
		out = append(out, rec)
	}
	return out, nil
}

// aiperfRecord reads one line of profile_export.jsonl.
func aiperfRecord(file string, line int, raw []byte) (schema.RequestRecord, error) {
	var rec schema.RequestRecord
	at := func(field, msg string) error { return &Error{File: file, Line: line, Field: field, Msg: msg} }
	var l aiperfLine
	if err := json.Unmarshal(pythonJSON(raw), &l); err != nil {
		return rec, lineError(file, line, raw, err)
	}
	if l.Metadata == nil {
		if bytes.Contains(raw, []byte(`"backend"`)) {
			return rec, at("metadata", "missing: this line is a vLLM/SGLang bench result, not an AIPerf record")
		}
		return rec, at("metadata", "missing")
	}
	md := l.Metadata
	if md.RequestStartNs == nil || string(md.RequestStartNs) == "null" {
		return rec, at("metadata.request_start_ns", "missing")
	}
	start, problem := epochNsOf(md.RequestStartNs)
	if problem != "" {
		return rec, at("metadata.request_start_ns", problem)
	}
	end := start
	if md.RequestEndNs != nil && string(md.RequestEndNs) != "null" {
		if end, problem = epochNsOf(md.RequestEndNs); problem != "" {
			return rec, at("metadata.request_end_ns", problem)
		}
		if end < start {
			return rec, at("metadata.request_end_ns", fmt.Sprintf("holds %s, before request_start_ns %s", shown(md.RequestEndNs), shown(md.RequestStartNs)))
		}
	}
	rec = schema.RequestRecord{Index: md.SessionNum, Phase: md.Phase, StartNs: start, EndNs: end, Status: 200}
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
		return rec, nil
	}
	// num reads a metric's value: a time (unit "time") converted to ms, else in unit.
	num := func(tag, unit string, r rule, required bool) (float64, error) {
		m, ok := l.Metrics[tag]
		if !ok {
			if required {
				return 0, at("metrics."+tag, "missing")
			}
			return 0, nil
		}
		f := 1.0
		if unit == "time" {
			if f, ok = toMs(1, m.Unit); !ok {
				return 0, at("metrics."+tag+".unit", fmt.Sprintf("unit %q is not a time unit (ms, ns, us, s)", m.Unit))
			}
		} else if m.Unit != unit {
			return 0, at("metrics."+tag+".unit", fmt.Sprintf("unit %q, want %q", m.Unit, unit))
		}
		v, problem := scaled(m.Value, f, m.Unit, r)
		if problem != "" {
			return 0, at("metrics."+tag+".value", problem)
		}
		return v, nil
	}
	ttft, err := num("time_to_first_token", "time", ruleMs, true)
	if err != nil {
		return rec, err
	}
	lat, err := num("request_latency", "time", ruleMs, true)
	if err != nil {
		return rec, err
	}
	if ttft > lat {
		return rec, at("metrics.time_to_first_token.value", fmt.Sprintf("holds %s %s, more than the request_latency %s %s: a first token comes within its request",
			shown(l.Metrics["time_to_first_token"].Value), l.Metrics["time_to_first_token"].Unit, shown(l.Metrics["request_latency"].Value), l.Metrics["request_latency"].Unit))
	}
	isl, err := num("input_sequence_length", stats.UnitTokens, ruleTokens, true)
	if err != nil {
		return rec, err
	}
	outTok, err := num("output_token_count", stats.UnitTokens, ruleTokens, true)
	if err != nil {
		return rec, err
	}
	reason, err := num("reasoning_token_count", stats.UnitTokens, ruleTokens, false)
	if err != nil {
		return rec, err
	}
	rec.FirstTokenNs = rec.StartNs + msToNs(ttft)
	rec.LastContentNs = rec.StartNs + msToNs(lat)
	if reason == 0 {
		rec.FirstOutputNs = rec.FirstTokenNs
	}
	rec.InputTokens, rec.OutputTokens, rec.ReasoningTok = int(isl), int(outTok), int(reason)
	if m, ok := l.Metrics["inter_chunk_latency"]; ok {
		f, ok := toMs(1, m.Unit)
		if !ok {
			return rec, at("metrics.inter_chunk_latency.unit", fmt.Sprintf("unit %q is not a time unit (ms, ns, us, s)", m.Unit))
		}
		var gaps []json.RawMessage
		if err := json.Unmarshal(m.Value, &gaps); err != nil {
			return rec, at("metrics.inter_chunk_latency.value", fmt.Sprintf("holds %s, expected a list of gaps", shown(m.Value)))
		}
		ms := make([]float64, len(gaps))
		for i, g := range gaps {
			v, problem := scaled(g, f, m.Unit, ruleMs)
			if problem != "" {
				return rec, at(fmt.Sprintf("metrics.inter_chunk_latency.value[%d]", i), problem)
			}
			ms[i] = v
		}
		rec.ChunkNs = chunkTimes(rec.FirstTokenNs, ms, 1)
	}
	return rec, nil
}

// epochNsOf reads a record's epoch-ns timestamp under ruleEpochNs, exactly when the file
// writes an integer (a float64 turns 1749723330123456789 into …768): the value, or the problem.
func epochNsOf(raw json.RawMessage) (int64, string) {
	v, problem := number(raw, ruleEpochNs)
	if problem != "" {
		return 0, problem
	}
	var ns epochNs
	if err := json.Unmarshal(raw, &ns); err != nil { // within the rule, so a number epochNs reads
		return int64(math.Round(v)), ""
	}
	return int64(ns), ""
}
