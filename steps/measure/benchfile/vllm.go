package benchfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/stats"
)

// serveDoc is one vLLM/SGLang result object with its keys kept raw.
type serveDoc struct {
	file string
	data []byte // the whole file, for positions
	line int    // the line the object starts on
	keys map[string]json.RawMessage
}

func (d *serveDoc) pos(field, msg string) *Error {
	return &Error{File: d.file, Line: lineOfKey(d.data, d.line, lastKey(field)), Field: field, Msg: msg}
}

func (d *serveDoc) num(key string, required bool) (float64, bool, error) {
	raw, ok := d.keys[key]
	if !ok || string(raw) == "null" {
		if required {
			return 0, false, &Error{File: d.file, Line: d.line, Field: key, Msg: "missing"}
		}
		return 0, false, nil
	}
	var v float64
	if err := json.Unmarshal(raw, &v); err != nil {
		return 0, false, d.pos(key, "not a number: "+string(raw))
	}
	return v, true, nil
}

func (d *serveDoc) str(key string) string {
	var s string
	_ = json.Unmarshal(d.keys[key], &s)
	return s
}

var (
	pctKey       = regexp.MustCompile(`^(mean|median|std|p[0-9.]+)_([a-z0-9_]+)_ms$`)
	wrongUnitKey = regexp.MustCompile(`^(mean|median|std|p[0-9.]+)_(ttft|tpot|itl|e2el|e2e_latency)_(s|us|ns)$`)
)

// aggStats collects the mean/median/std/pN keys of each metric, converted to ms; a key
// ending in _s or _us (a wrong unit) is an error. What the file does not state is null, not 0.
func (d *serveDoc) aggStats(count int) (map[string]*schema.Stat, error) {
	out := map[string]*schema.Stat{}
	for k, raw := range d.keys {
		if m := wrongUnitKey.FindStringSubmatch(k); m != nil {
			return nil, d.pos(k, fmt.Sprintf("unit %q: this format writes latency statistics in ms (*_ms)", m[3]))
		}
		m := pctKey.FindStringSubmatch(k)
		if m == nil {
			continue
		}
		var v float64
		if err := json.Unmarshal(raw, &v); err != nil {
			if string(raw) == "null" {
				continue
			}
			return nil, d.pos(k, "not a number: "+string(raw))
		}
		name := m[2]
		if name == "e2e_latency" {
			name = "e2el"
		}
		st := out[name]
		if st == nil {
			st = &schema.Stat{Unit: stats.UnitMs, Count: count}
			st.UnstateAll()
			out[name] = st
		}
		if stat := serveStatName(m[1]); stat != "" {
			st.Set(stat, v)
		}
	}
	return out, nil
}

// serveStatName is the schema.Stat statistic a mean/median/std/pN key prefix states; "" for a
// percentile a Stat has no field for.
func serveStatName(prefix string) string {
	switch prefix {
	case "mean":
		return "avg"
	case "median":
		return "p50"
	case "std":
		return "std"
	}
	q, _ := strconv.ParseFloat(prefix[1:], 64)
	switch q {
	case 1, 5, 10, 25, 50, 75, 90, 95, 99:
		return "p" + strconv.FormatFloat(q, 'f', -1, 64)
	}
	return ""
}

// aggregatePoint builds the point a serve result states, without per-request arrays.
func (d *serveDoc) aggregatePoint() (schema.Point, error) {
	var p schema.Point
	completed, _, err := d.num("completed", true)
	if err != nil {
		return p, err
	}
	dur, _, err := d.num("duration", true)
	if err != nil {
		return p, err
	}
	failed, _, err := d.num("failed", false)
	if err != nil {
		return p, err
	}
	in, _, err := d.num("total_input_tokens", true)
	if err != nil {
		return p, err
	}
	outTok, _, err := d.num("total_output_tokens", true)
	if err != nil {
		return p, err
	}
	if _, _, err := d.num("request_throughput", true); err != nil {
		return p, err
	}
	st, err := d.aggStats(int(completed))
	if err != nil {
		return p, err
	}
	if st["ttft"] == nil {
		return p, &Error{File: d.file, Line: d.line, Field: "mean_ttft_ms", Msg: "missing"}
	}
	p.RequestCount, p.ErrorCount = int(completed), int(failed)
	p.NumPrompts = p.RequestCount + p.ErrorCount
	p.WindowS = dur // seconds
	if dur > 0 {
		p.RequestThroughput = completed / dur
		p.OutputTokenThroughput = outTok / dur
		p.TotalTokenThroughput = (in + outTok) / dur
	}
	if completed > 0 {
		p.MeanISL, p.MeanOSL = in/completed, outTok/completed
	}
	p.TTFT, p.ITL, p.ICL, p.RequestLatency = st["ttft"], st["tpot"], st["itl"], st["e2el"]
	p.TTFOCoverage = 1
	return p, nil
}

// readServeRun reads a vLLM/SGLang result file and picks the run an import at concurrency
// conc reads (pickRun).
func readServeRun(file string, conc int) (*serveDoc, error) {
	docs, err := readServeDocs(file)
	if err != nil {
		return nil, err
	}
	return pickRun(docs, conc), nil
}

// fixedRun sets r.Concurrency from the run's max_concurrency (an import needs a
// fixed-concurrency run) and returns the point the run's aggregates state.
func (d *serveDoc) fixedRun(r *Result) (schema.Point, error) {
	c, ok, err := d.num("max_concurrency", false)
	if err != nil {
		return schema.Point{}, err
	}
	if !ok {
		return schema.Point{}, &Error{File: d.file, Line: lineOfKey(d.data, d.line, "max_concurrency"), Field: "max_concurrency", Msg: "missing or null: an import needs a fixed-concurrency run"}
	}
	r.Concurrency = int(c)
	return d.aggregatePoint()
}

// ReadVLLM reads a `vllm bench serve --save-result` JSON file (with --append-result, one
// object per run: the last one at e.Concurrency, else the last one).
func ReadVLLM(file string, e Expect, o stats.Options) (*Result, error) {
	d, err := readServeRun(file, e.Concurrency)
	if err != nil {
		return nil, err
	}
	if _, ok := d.keys["model_id"]; !ok {
		if _, sg := d.keys["random_input_len"]; sg {
			return nil, &Error{File: file, Line: d.line, Field: "model_id", Msg: "missing: this looks like an SGLang bench_serving result (import it as sglang-bench)"}
		}
		return nil, &Error{File: file, Line: d.line, Field: "model_id", Msg: "missing (not a vLLM bench serve result?)"}
	}
	r := &Result{Source: SourceVLLM, File: file, Model: d.str("model_id")}
	r.TokenBasis = vllmCounted(d)
	if v := d.str("vllm_version"); v != "" {
		r.SourceVersion = v
	}
	agg, err := d.fixedRun(r)
	if err != nil {
		return nil, err
	}
	recs, err := d.vllmRecords()
	if err != nil {
		return nil, err
	}
	r.Records = recs
	if err := r.check(e, d.data, d.line, "model_id", "max_concurrency", agg.MeanISL, 0, "total_input_tokens", "total_output_tokens"); err != nil {
		return nil, err
	}
	r.finish(o, agg)
	r.serveClock(d)
	return r, nil
}

// vllmRecords rebuilds request records from the detailed arrays (nil when not saved).
func (d *serveDoc) vllmRecords() ([]schema.RequestRecord, error) {
	need := []string{"start_times", "ttfts", "latencies", "input_lens", "output_lens"}
	for _, k := range need {
		if _, ok := d.keys[k]; !ok {
			return nil, nil
		}
	}
	var (
		starts, ttfts, lats []float64
		ins, outs           []int
		itls                [][]float64
		errs                []string
	)
	for _, a := range []struct {
		key string
		dst any
	}{{"start_times", &starts}, {"ttfts", &ttfts}, {"latencies", &lats}, {"input_lens", &ins}, {"output_lens", &outs}} {
		if err := json.Unmarshal(d.keys[a.key], a.dst); err != nil {
			return nil, d.pos(a.key, "not a list of numbers")
		}
	}
	if raw, ok := d.keys["itls"]; ok {
		if err := json.Unmarshal(raw, &itls); err != nil {
			return nil, d.pos("itls", "not a list of lists of numbers")
		}
	}
	if raw, ok := d.keys["errors"]; ok {
		if err := json.Unmarshal(raw, &errs); err != nil {
			return nil, d.pos("errors", "not a list of strings")
		}
	}
	n := len(starts)
	for _, a := range []struct {
		key string
		n   int
	}{{"ttfts", len(ttfts)}, {"latencies", len(lats)}, {"input_lens", len(ins)}, {"output_lens", len(outs)}} {
		if a.n != n {
			return nil, d.pos(a.key, fmt.Sprintf("%d entries, start_times has %d", a.n, n))
		}
	}
	recs := make([]schema.RequestRecord, 0, n)
	for i := range n {
		// start_times are perf_counter seconds (arbitrary origin): only differences matter.
		st := msToNs(starts[i]*1e3) + 1e9 // +1 s keeps a zero origin positive
		r := schema.RequestRecord{Index: i, Phase: stats.PhaseProfiling, StartNs: st, EndNs: st + msToNs(lats[i]*1e3), Status: 200,
			InputTokens: ins[i], OutputTokens: outs[i]}
		if i < len(errs) && errs[i] != "" {
			r.ErrorClass, r.Error = ErrorImported, errs[i]
			recs = append(recs, r)
			continue
		}
		if ttfts[i] > lats[i] || ttfts[i] < 0 {
			return nil, d.pos(fmt.Sprintf("ttfts[%d]", i), fmt.Sprintf("%g s is not within the request latency %g s (unit must be seconds)", ttfts[i], lats[i]))
		}
		r.FirstTokenNs = st + msToNs(ttfts[i]*1e3)
		r.FirstOutputNs = r.FirstTokenNs
		r.LastContentNs = r.EndNs
		if i < len(itls) {
			r.ChunkNs = chunkTimes(r.FirstTokenNs, itls[i], 1e3)
		}
		recs = append(recs, r)
	}
	return recs, nil
}

// readServeDocs reads one JSON object, or several (one a line, --append-result / SGLang),
// accepting Python's bare Infinity / NaN tokens.
func readServeDocs(file string) ([]*serveDoc, error) {
	data, err := readFile(file)
	if err != nil {
		return nil, fmt.Errorf("bench import: %w", err)
	}
	clean := pythonJSON(data)
	var docs []*serveDoc
	var single map[string]json.RawMessage
	if json.Unmarshal(clean, &single) == nil {
		return []*serveDoc{{file: file, data: data, line: 1, keys: single}}, nil
	}
	for i, raw := range bytes.Split(clean, []byte{'\n'}) {
		if len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(raw, &keys); err != nil {
			return nil, lineError(file, i+1, raw, err)
		}
		if _, ok := keys["metadata"]; ok {
			return nil, &Error{File: file, Line: i + 1, Field: "metadata", Msg: "this is an AIPerf profile_export.jsonl record, not a bench serve result"}
		}
		docs = append(docs, &serveDoc{file: file, data: data, line: i + 1, keys: keys})
	}
	if len(docs) == 0 {
		return nil, &Error{File: file, Line: 1, Field: "(document)", Msg: "empty file"}
	}
	return docs, nil
}

// pythonJSON replaces the bare tokens Infinity, -Infinity and NaN outside strings (Python's
// json.dumps writes them) by quoted strings, so encoding/json can read the document.
func pythonJSON(data []byte) []byte {
	if !bytes.Contains(data, []byte("Infinity")) && !bytes.Contains(data, []byte("NaN")) {
		return data
	}
	out := make([]byte, 0, len(data)+16)
	inStr, esc := false, false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inStr {
			out = append(out, c)
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		if c == '"' {
			inStr = true
			out = append(out, c)
			continue
		}
		replaced := false
		for _, tok := range []string{"-Infinity", "Infinity", "NaN"} {
			if bytes.HasPrefix(data[i:], []byte(tok)) {
				out = append(out, '"')
				out = append(out, tok...)
				out = append(out, '"')
				i += len(tok) - 1
				replaced = true
				break
			}
		}
		if !replaced {
			out = append(out, c)
		}
	}
	return out
}
