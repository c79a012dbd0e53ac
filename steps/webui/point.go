package webui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"sort"
	"strconv"

	"github.com/perfdag/perfdag/engine/redact"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/analysis/baseline"
)

// maxSpans bounds the timeline's bars; a larger point is drawn from an even sample of its
// requests (the page says so).
const maxSpans = 2000

// point is one point's page: point.json's numbers, the TTFT and ITL distributions of its
// requests with point.json's percentiles marked, and the request timeline.
func (s *Server) point(w http.ResponseWriter, r *http.Request) {
	e, v, ok := s.openView(w, r)
	if !ok {
		return
	}
	cell, key := r.PathValue("cell"), r.PathValue("point")
	var l schema.Load
	err := l.UnmarshalText([]byte(key)) // a bare number is a concurrency, as point URLs were written before load keys
	var ref *pointRef
	for i, p := range v.Points {
		if err == nil && p.Files.Cell == cell && p.Load == l {
			ref = &v.Points[i]
		}
	}
	if ref == nil {
		s.fail(w, http.StatusNotFound, fmt.Errorf("campaign %s has no measured point %s/%s", e.ID, cell, key))
		return
	}
	pt, err := v.readPoint(*ref)
	if err != nil {
		s.fail(w, http.StatusConflict, err)
		return
	}
	data := map[string]any{"Title": pt.Cell + " " + ref.Load.Key(), "V": v, "P": pt, "Ref": ref,
		"Stats": statRows(pt), "Percentiles": []template.HTML{
			percentiles("TTFT percentiles (point.json)", "ms", ttftRows(pt)...),
			percentiles("ITL percentiles (point.json)", "ms", statRow{"itl_ms", pt.ITL}),
			percentiles("request latency percentiles (point.json)", "ms", statRow{"request_latency_ms", pt.RequestLatency})},
		"PointURL": campaignURL(v.ID) + "file/" + ref.Files.Point, "Goodput": goodputOf(pt)}
	if ref.Files.Records != "" {
		d, _ := v.Files.Digest(ref.Files.Records)
		b, err := readServed(v.Dir, ref.Files.Records, d)
		if err != nil {
			data["RecordsError"] = redact.String(err.Error())
		} else {
			recs, err := decodeRecords(b)
			if err != nil {
				data["RecordsError"] = redact.String(err.Error())
			}
			ttft, itl, spans, sampled := distributions(recs)
			data["TTFT"] = histogram("TTFT", "ms", ttft)
			data["ITL"] = histogram("ITL", "ms", itl)
			data["Timeline"] = timeline(spans)
			data["Sampled"], data["Requests"] = sampled, len(spans)
			data["RecordsURL"] = campaignURL(v.ID) + "file/" + ref.Files.Records
		}
	}
	s.render(w, "point.html", data)
}

// ttftRows are TTFT, and TTFO when it differs (a reasoning model's answer comes after its
// first reasoning token; otherwise the two curves coincide and one would hide the other).
func ttftRows(p *schema.Point) []statRow {
	rows := []statRow{{"ttft_ms", p.TTFT}}
	if p.TTFO != nil && (p.TTFT == nil || *p.TTFO != *p.TTFT) {
		rows = append(rows, statRow{"ttfo_ms", p.TTFO})
	}
	return rows
}

// statRow is one metric of point.json in the page's table.
type statRow struct {
	Name string
	S    *schema.Stat
}

func statRows(p *schema.Point) []statRow {
	var out []statRow
	for _, r := range []statRow{{"ttft_ms", p.TTFT}, {"ttfo_ms", p.TTFO}, {"itl_ms", p.ITL}, {"inter_chunk_ms", p.ICL},
		{"request_latency_ms", p.RequestLatency}, {"tps_per_user", p.TPSUser}, {"isl", p.ISL}, {"osl", p.OSL}} {
		if r.S != nil {
			out = append(out, r)
		}
	}
	return out
}

// decodeRecords reads records.jsonl (recorded, so whole): a line that does not decode is an
// error, not skipped.
func decodeRecords(b []byte) ([]schema.RequestRecord, error) {
	var out []schema.RequestRecord
	for n, line := range bytes.Split(b, []byte{'\n'}) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var rec schema.RequestRecord
		if err := json.Unmarshal(line, &rec); err != nil {
			return out, fmt.Errorf("records line %d: %w", n+1, err)
		}
		out = append(out, rec)
	}
	return out, nil
}

// distributions are a point's per-request TTFT and ITL (the measured requests, errors
// excluded, as the statistics do) and its timeline. ITL per request is (latency − TTFT) /
// (OSL − 1) with OSL the server's completion count when it sent usage, else the o200k count.
func distributions(recs []schema.RequestRecord) (ttft, itl []float64, spans []reqSpan, sampled bool) {
	var prof []schema.RequestRecord
	for _, r := range recs {
		if r.Phase == "" || r.Phase == "profiling" {
			prof = append(prof, r)
		}
	}
	if len(prof) == 0 {
		return nil, nil, nil, false
	}
	t0 := int64(math.MaxInt64)
	for _, r := range prof {
		t0 = min(t0, r.StartNs)
	}
	ms := func(ns int64) float64 { return float64(ns) / 1e6 }
	for _, r := range prof {
		if r.ErrorClass != "" || r.FirstTokenNs == 0 {
			continue
		}
		ttft = append(ttft, ms(r.FirstTokenNs-r.StartNs))
		osl := r.OutputTokens + r.ReasoningTok
		if r.UsageComplete != nil {
			osl = *r.UsageComplete
		}
		if osl >= 2 && r.LastContentNs > r.FirstTokenNs {
			itl = append(itl, ms(r.LastContentNs-r.FirstTokenNs)/float64(osl-1))
		}
	}
	sort.Slice(prof, func(i, j int) bool { return prof[i].StartNs < prof[j].StartNs })
	step := 1
	if len(prof) > maxSpans {
		step, sampled = (len(prof)+maxSpans-1)/maxSpans, true
	}
	sec := func(ns int64) float64 { return float64(ns-t0) / 1e9 }
	for i := 0; i < len(prof); i += step {
		r := prof[i]
		sp := reqSpan{Index: r.Index, Start: sec(r.StartNs), End: sec(max(r.EndNs, r.StartNs)), LatencyMs: ms(r.LastContentNs - r.StartNs)}
		if r.FirstTokenNs > 0 {
			sp.First, sp.TTFTms = sec(r.FirstTokenNs), ms(r.FirstTokenNs-r.StartNs)
		}
		if r.ErrorClass != "" {
			sp.Error = redact.String(r.ErrorClass + ": " + r.Error)
		}
		spans = append(spans, sp)
	}
	return ttft, itl, spans, sampled
}

var funcs = template.FuncMap{
	"exact": exact,
	"fig":   fig,
	// figcell is a table cell of a figure as fig shows it, the exact value in its title.
	"figcell": func(v float64) template.HTML {
		return template.HTML(`<td class="num" title="` + exact(v) + `">` + fig(v) + `</td>`) // digits, '.', '-', 'e', '+' only
	},
	"secs": func(v float64) string {
		if v <= 0 {
			return "-"
		}
		return strconv.FormatFloat(v, 'f', 1, 64)
	},
	"campaignURL": campaignURL,
	"historyURL":  historyURL,
	"attained":    attained,
	"cells":       baseline.Cells,
	"redact":      redact.String,
	"pct": func(p *float64) string {
		if p == nil {
			return "null"
		}
		return exact(*p)
	},
}
