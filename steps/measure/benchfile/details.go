package benchfile

import (
	"encoding/json"
	"fmt"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/stats"
)

// details are the per-request lists of a vLLM (--save-detailed) or SGLang (--output-details)
// run: one entry per request sent, failed ones included (their error text non-empty, their
// output length 0). Times are seconds. vLLM adds each request's send time (start_times,
// perf_counter) and latency; SGLang writes neither.
type details struct {
	n            int
	inputs       []int
	outputs      []int
	ttfts        []float64
	itls         [][]float64
	errs         []string
	starts, lats []float64 // nil when the run does not carry them
}

// perRequestKeys are the lists both tools write together; a run holding ttfts without the
// others is refused, naming the first one missing.
var perRequestKeys = []string{"ttfts", "itls", "input_lens", "output_lens", "errors"}

// readDetails reads the run's per-request lists; nil when it carries none (no ttfts).
func (d *serveDoc) readDetails() (*details, error) {
	if _, ok := d.keys["ttfts"]; !ok {
		return nil, nil
	}
	for _, k := range perRequestKeys {
		if _, ok := d.keys[k]; !ok {
			return nil, d.pos(k, "missing: the run holds ttfts (per-request lists) but not "+k)
		}
	}
	var (
		x   details
		err error
	)
	if x.ttfts, err = d.floats("ttfts", ruleSeconds); err != nil {
		return nil, err
	}
	x.n = len(x.ttfts)
	if x.inputs, err = d.ints("input_lens", ruleTokens); err != nil {
		return nil, err
	}
	if x.outputs, err = d.ints("output_lens", ruleTokens); err != nil {
		return nil, err
	}
	if x.itls, err = d.gaps("itls"); err != nil {
		return nil, err
	}
	if x.errs, err = d.texts("errors"); err != nil {
		return nil, err
	}
	_, hasStarts := d.keys["start_times"]
	_, hasLats := d.keys["latencies"]
	if hasStarts && hasLats { // vLLM's send times and latencies (--save-detailed, recent builds)
		if x.starts, err = d.floats("start_times", ruleClock); err != nil {
			return nil, err
		}
		if x.lats, err = d.floats("latencies", ruleSeconds); err != nil {
			return nil, err
		}
	}
	for _, l := range []struct {
		key string
		n   int
		has bool
	}{{"input_lens", len(x.inputs), true}, {"output_lens", len(x.outputs), true}, {"itls", len(x.itls), true}, {"errors", len(x.errs), true},
		{"start_times", len(x.starts), x.starts != nil}, {"latencies", len(x.lats), x.lats != nil}} {
		if l.has && l.n != x.n {
			return nil, d.pos(l.key, fmt.Sprintf("holds %d entries, ttfts holds %d: every per-request list has one entry per request", l.n, x.n))
		}
	}
	return &x, nil
}

// check compares the run's stated totals with its lists: completed is the requests without
// an error text, failed the others, the token totals the successful requests' lengths.
func (x *details) check(d *serveDoc, t serveTotals) error {
	ok, in, out := 0, 0, 0
	for i := range x.n {
		if x.errs[i] == "" {
			ok++
			in += x.inputs[i]
			out += x.outputs[i]
		}
	}
	return checkTotals(d.pos,
		stated{"completed", d.keys["completed"], t.completed, float64(ok), fmt.Sprintf("errors lists %d requests without an error text (of %d)", ok, x.n)},
		stated{"failed", d.keys["failed"], t.failed, float64(x.n - ok), fmt.Sprintf("errors lists %d requests with an error text (of %d)", x.n-ok, x.n)},
		stated{"total_input_tokens", d.keys["total_input_tokens"], t.input, float64(in), fmt.Sprintf("input_lens of the %d successful requests sum to %d", ok, in)},
		stated{"total_output_tokens", d.keys["total_output_tokens"], t.output, float64(out), fmt.Sprintf("output_lens of the %d successful requests sum to %d", ok, out)},
	)
}

// records turns the lists into request records. A request with an error text is an
// imported_error; one without a first token (ttft 0, no gaps) an empty response. Without
// send times every request starts at one origin (1 s): only the offsets from a request's
// own start are measurements, and the point's window is then the file's duration.
func (x *details) records(d *serveDoc) ([]schema.RequestRecord, error) {
	recs := make([]schema.RequestRecord, 0, x.n)
	for i := range x.n {
		st := int64(1e9) // +1 s keeps a zero origin positive
		if x.starts != nil {
			st += msToNs(x.starts[i] * 1e3) // perf_counter seconds (arbitrary origin): only differences matter
		}
		r := schema.RequestRecord{Index: i, Phase: stats.PhaseProfiling, StartNs: st, EndNs: st, Status: 200,
			InputTokens: x.inputs[i], OutputTokens: x.outputs[i]}
		if x.lats != nil {
			r.EndNs = st + msToNs(x.lats[i]*1e3)
		}
		if x.errs[i] != "" {
			r.ErrorClass, r.Error = ErrorImported, x.errs[i]
			recs = append(recs, r)
			continue
		}
		if x.ttfts[i] == 0 && len(x.itls[i]) == 0 { // no content arrived: both tools leave ttft at 0
			recs = append(recs, r)
			continue
		}
		r.FirstTokenNs = st + msToNs(x.ttfts[i]*1e3)
		r.FirstOutputNs = r.FirstTokenNs
		r.ChunkNs = chunkTimes(r.FirstTokenNs, x.itls[i], 1e3)
		if x.lats != nil {
			if x.ttfts[i] > x.lats[i] {
				return nil, d.pos(fmt.Sprintf("ttfts[%d]", i), fmt.Sprintf("holds %s, more than the request's latency %s: a first token comes within its request (both in seconds)",
					d.elem("ttfts", i), d.elem("latencies", i)))
			}
			r.LastContentNs = r.EndNs
		} else { // SGLang: the last content arrived after the first token and every gap
			r.LastContentNs = r.ChunkNs[len(r.ChunkNs)-1]
			r.EndNs = r.LastContentNs
		}
		recs = append(recs, r)
	}
	return recs, nil
}

// floats decodes the list at key, each entry under r; a bad entry is named key[i] with its
// text. The fast path decodes numbers; the raw entries are read only to name a problem.
func (d *serveDoc) floats(key string, r rule) ([]float64, error) {
	var vs []float64
	if json.Unmarshal(d.keys[key], &vs) == nil && vs != nil {
		bad := -1
		for i, v := range vs {
			if !r.ok(v) {
				bad = i
				break
			}
		}
		if bad < 0 {
			return vs, nil
		}
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(d.keys[key], &raws); err != nil || raws == nil {
		return nil, d.pos(key, fmt.Sprintf("holds %s, expected a list with one number per request", shown(d.keys[key])))
	}
	for i, raw := range raws {
		if _, problem := number(raw, r); problem != "" {
			return nil, d.pos(fmt.Sprintf("%s[%d]", key, i), problem)
		}
	}
	return nil, d.pos(key, "not a list of numbers") // unreachable: some entry failed above
}

// ints is floats for whole numbers (token counts).
func (d *serveDoc) ints(key string, r rule) ([]int, error) {
	vs, err := d.floats(key, r)
	if err != nil {
		return nil, err
	}
	out := make([]int, len(vs))
	for i, v := range vs {
		out[i] = int(v)
	}
	return out, nil
}

// gaps decodes a list of per-request gap lists (itls, seconds).
func (d *serveDoc) gaps(key string) ([][]float64, error) {
	var vs [][]float64
	if json.Unmarshal(d.keys[key], &vs) == nil && vs != nil {
		good := true
		for _, g := range vs {
			for _, v := range g {
				good = good && ruleSeconds.ok(v)
			}
		}
		if good {
			return vs, nil
		}
	}
	var rows []json.RawMessage
	if err := json.Unmarshal(d.keys[key], &rows); err != nil || rows == nil {
		return nil, d.pos(key, fmt.Sprintf("holds %s, expected one list of gaps (seconds) per request", shown(d.keys[key])))
	}
	for i, row := range rows {
		var g []json.RawMessage
		if json.Unmarshal(row, &g) != nil {
			return nil, d.pos(fmt.Sprintf("%s[%d]", key, i), fmt.Sprintf("holds %s, expected the request's list of gaps in seconds", shown(row)))
		}
		for j, raw := range g {
			if _, problem := number(raw, ruleSeconds); problem != "" {
				return nil, d.pos(fmt.Sprintf("%s[%d][%d]", key, i, j), problem)
			}
		}
	}
	return nil, d.pos(key, "not a list of lists of numbers") // unreachable
}

// texts decodes the errors list: one text per request, "" (or null) when it succeeded.
func (d *serveDoc) texts(key string) ([]string, error) {
	var raws []json.RawMessage
	if err := json.Unmarshal(d.keys[key], &raws); err != nil || raws == nil {
		return nil, d.pos(key, fmt.Sprintf("holds %s, expected a list with one error text per request", shown(d.keys[key])))
	}
	out := make([]string, len(raws))
	for i, raw := range raws {
		if string(raw) == "null" {
			continue
		}
		if err := json.Unmarshal(raw, &out[i]); err != nil {
			return nil, d.pos(fmt.Sprintf("%s[%d]", key, i), fmt.Sprintf("holds %s: an error is a text (\"\" when the request succeeded)", shown(raw)))
		}
	}
	return out, nil
}

// elem is entry i of the list at key as the file holds it.
func (d *serveDoc) elem(key string, i int) string {
	var raws []json.RawMessage
	if json.Unmarshal(d.keys[key], &raws) != nil || i >= len(raws) {
		return "?"
	}
	return shown(raws[i])
}
