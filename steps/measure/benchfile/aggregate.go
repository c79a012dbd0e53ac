package benchfile

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/stats"
)

var (
	pctKey       = regexp.MustCompile(`^(mean|median|std|p[0-9.]+)_([a-z0-9_]+)_ms$`)
	wrongUnitKey = regexp.MustCompile(`^(mean|median|std|p[0-9.]+)_(ttft|tpot|itl|e2el|e2e_latency)_(s|us|ns)$`)
)

// aggStats collects the mean/median/std/pN keys of each metric in ms; a key ending in _s or
// _us (a wrong unit) and a value that is not a time are errors. What the file does not
// state is null, not 0.
func (d *serveDoc) aggStats(count int) (map[string]*schema.Stat, error) {
	out := map[string]*schema.Stat{}
	for k, raw := range d.keys {
		if !strings.HasSuffix(k, "s") { // every statistic key ends in _ms, _s, _us or _ns
			continue
		}
		if m := wrongUnitKey.FindStringSubmatch(k); m != nil {
			return nil, d.pos(k, fmt.Sprintf("unit %q: this format writes latency statistics in ms (*_ms)", m[3]))
		}
		m := pctKey.FindStringSubmatch(k)
		if m == nil || string(raw) == "null" {
			continue
		}
		v, problem := number(raw, ruleMs)
		if problem != "" {
			return nil, d.pos(k, problem)
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

// serveTotals are the run-level numbers a vLLM/SGLang result states, checked, with their
// text kept so a disagreement with the per-request lists quotes the file.
type serveTotals struct {
	completed, failed, duration, input, output float64
	hasFailed                                  bool
}

// totals reads the run-level numbers every serve result states.
func (d *serveDoc) totals() (serveTotals, error) {
	var t serveTotals
	var err error
	if t.completed, _, err = d.num("completed", ruleCount, true); err != nil {
		return t, err
	}
	if t.duration, _, err = d.num("duration", ruleDuration, true); err != nil {
		return t, err
	}
	if t.failed, t.hasFailed, err = d.num("failed", ruleCount, false); err != nil {
		return t, err
	}
	if t.input, _, err = d.num("total_input_tokens", ruleTotalTokens, true); err != nil {
		return t, err
	}
	if t.output, _, err = d.num("total_output_tokens", ruleTotalTokens, true); err != nil {
		return t, err
	}
	if _, _, err = d.num("request_throughput", ruleRate, true); err != nil {
		return t, err
	}
	return t, nil
}

// aggregatePoint builds the point a serve result states, without per-request lists.
func (d *serveDoc) aggregatePoint(t serveTotals) (schema.Point, error) {
	var p schema.Point
	st, err := d.aggStats(int(t.completed))
	if err != nil {
		return p, err
	}
	if st["ttft"] == nil {
		return p, &Error{File: d.file, Line: d.line, Field: "mean_ttft_ms", Msg: "missing"}
	}
	p.RequestCount, p.ErrorCount = int(t.completed), int(t.failed)
	p.NumPrompts = p.RequestCount + p.ErrorCount
	p.WindowS = t.duration // seconds
	p.RequestThroughput = t.completed / t.duration
	p.OutputTokenThroughput = t.output / t.duration
	p.TotalTokenThroughput = (t.input + t.output) / t.duration
	if t.completed > 0 {
		p.MeanISL, p.MeanOSL = t.input/t.completed, t.output/t.completed
	}
	p.TTFT, p.ITL, p.ICL, p.RequestLatency = st["ttft"], st["tpot"], st["itl"], st["e2el"]
	p.TTFOCoverage = 1
	return p, nil
}

// fixedRun sets r.Load from the run's request_rate and max_concurrency (runLoad: a closed
// loop at its max concurrency, or a rate point capped by it) and reads the run-level totals.
// A burst (every request at once) is refused: it has no steady load to key a point by.
func (d *serveDoc) fixedRun(r *Result) (serveTotals, error) {
	if raw, ok := d.keys["ramp_up_strategy"]; ok && string(raw) != "null" {
		return serveTotals{}, d.pos("ramp_up_strategy", fmt.Sprintf("holds %s: a ramp-up run's rate moved from ramp_up_start_rps to ramp_up_end_rps, no one load to key a point by; import runs at one --request-rate", shown(raw)))
	}
	rateRaw, concRaw := d.keys[rateKey], d.keys[concKey]
	l, field, problem := runLoad(rateRaw, concRaw)
	if problem != "" {
		return serveTotals{}, d.pos(field, problem)
	}
	if l.IsZero() {
		return serveTotals{}, d.pos(concKey, burstProblem(d))
	}
	r.Load, r.Concurrency = l, l.InFlight()
	r.data, r.line, r.concurrencyField = d.text, d.line, concKey
	if rateRaw != nil {
		r.rateField = rateKey
	}
	if l.IsRate() {
		if err := d.arrival(r); err != nil {
			return serveTotals{}, err
		}
	}
	return d.totals()
}

// keysOf decodes a nested object of the run (SGLang's details), positioned inside it.
func (d *serveDoc) keysOf(key string) (*serveDoc, error) {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(d.keys[key], &keys); err != nil || keys == nil {
		return nil, d.pos(key, fmt.Sprintf("holds %s, expected an object of per-request lists", shown(d.keys[key])))
	}
	return &serveDoc{file: d.file, line: d.line, text: d.text, keys: keys, prefix: d.prefix + key + "."}, nil
}

// readServe reads a picked vLLM/SGLang run into r: its concurrency and totals, its
// aggregates (always checked), and its per-request lists when it carries them — top-level,
// or under details as newer SGLang builds nest them — from which every statistic is then
// recomputed. islField/oslField name the prompt/output lengths the run asked for ("" when
// the format states none: vLLM's ISL is then its mean, total_input_tokens / completed).
func (r *Result) readServe(d *serveDoc, e Expect, o stats.Options, modelField, islField, oslField string) error {
	t, err := d.fixedRun(r)
	if err != nil {
		return err
	}
	agg, err := d.aggregatePoint(t)
	if err != nil {
		return err
	}
	lists := d
	if _, ok := d.keys["details"]; ok {
		if lists, err = d.keysOf("details"); err != nil {
			return err
		}
	}
	x, err := lists.readDetails()
	if err != nil {
		return err
	}
	if x != nil {
		if err := x.check(d, t); err != nil {
			return err
		}
		if r.Records, err = x.records(lists); err != nil {
			return err
		}
		if x.starts == nil {
			o.WindowS = t.duration
		}
	}
	r.lengths = [2]lengthSource{
		{total: "total_input_tokens", count: "completed", totalRaw: d.keys["total_input_tokens"], countRaw: d.keys["completed"], list: lists.prefix + "input_lens"},
		{total: "total_output_tokens", count: "completed", totalRaw: d.keys["total_output_tokens"], countRaw: d.keys["completed"], list: lists.prefix + "output_lens"},
	}
	isl, osl := agg.MeanISL, 0.0
	if islField == "" {
		islField, oslField = "total_input_tokens", "total_output_tokens"
	} else {
		if isl, _, err = d.num(islField, ruleTokens, false); err != nil {
			return err
		}
		if osl, _, err = d.num(oslField, ruleTokens, false); err != nil {
			return err
		}
	}
	if err := r.check(e, modelField, isl, osl, islField, oslField); err != nil {
		return err
	}
	if g, ok, err := d.num("request_goodput", ruleRate, false); err != nil {
		return err
	} else if ok {
		r.SourceGoodput = &g
	}
	r.finish(o, agg)
	// start_times (vLLM's) are a monotonic clock and SGLang records no send times: the point's
	// instants are the file's own wall-clock (vLLM's date) or unknown, per-request lists or not.
	r.serveClock(d)
	return nil
}
