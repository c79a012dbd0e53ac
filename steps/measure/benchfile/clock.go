package benchfile

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"time"
)

// Layouts of the wall-clock times an import reads and writes.
const (
	// vllmDateLayout is vLLM bench serve's date: datetime.now() of the machine that ran it,
	// strftime %Y%m%d-%H%M%S, local time without zone.
	vllmDateLayout = "20060102-150405"
	// localLayout writes a time whose zone the file does not state: ISO 8601 local time,
	// no offset (not RFC 3339, which needs one, and not "-00:00", which claims UTC is known).
	localLayout = "2006-01-02T15:04:05"
	// microLayout writes an instant known to the microsecond, in UTC.
	microLayout = "2006-01-02T15:04:05.000000Z07:00"
)

// epochNs is a wall-clock instant in epoch nanoseconds as a JSON number: an integer is read
// exactly (a float64 turns 1749723330123456789 into …768), an exponent form as a float.
type epochNs int64

// UnmarshalJSON reads an integer, a float or null (0).
func (e *epochNs) UnmarshalJSON(b []byte) error {
	s := string(b)
	if s == "null" {
		return nil
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		*e = epochNs(n)
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.Abs(f) >= math.MaxInt64 {
		// a type error: encoding/json names the field it was decoding
		what := "number " + s
		if len(s) > 0 && s[0] != '-' && (s[0] < '0' || s[0] > '9') {
			what = map[byte]string{'"': "string", '[': "array", '{': "object", 't': "bool", 'f': "bool"}[s[0]]
		}
		return &json.UnmarshalTypeError{Value: what, Type: reflect.TypeOf(int64(0))}
	}
	*e = epochNs(math.Round(f))
	return nil
}

// serveClock sets a vLLM/SGLang point's times from the wall-clock the file states. Their
// start_times are time.perf_counter() seconds (a monotonic clock of arbitrary origin), so the
// records place requests relative to each other only and the point's instants cannot come
// from them. vLLM's date — the local time its machine stamped when the run ended, to the
// second, zone not stated — becomes ended_at as stated; started_at stays unknown. SGLang
// states no time: both unknown.
func (r *Result) serveClock(d *serveDoc) {
	r.Point.StartedAt, r.Point.EndedAt = "", ""
	var date string
	if err := json.Unmarshal(d.keys["date"], &date); err != nil || date == "" {
		r.Clock = "the file states no wall-clock time (start_times, if any, are a monotonic clock): started_at and ended_at unknown"
		return
	}
	t, err := time.Parse(vllmDateLayout, date)
	if err != nil {
		r.Clock = fmt.Sprintf("the file's date %q is not YYYYmmdd-HHMMSS: started_at and ended_at unknown", date)
		return
	}
	r.Point.EndedAt = t.Format(localLayout)
	r.Clock = "ended_at is the file's date, stamped when the run ended: local time of the machine that ran it, to the second, zone not stated; started_at unknown (start_times are a monotonic clock)"
}

// aiperfClock says where an AIPerf point's times come from. Its records carry epoch-ns
// request_start_ns / request_end_ns, which stats.Compute already turned into UTC instants; an
// aggregate-only import reads min_request_timestamp and max_response_timestamp (epoch ns,
// written as floats: kept to the microsecond, which a float64 of that size still holds).
func (r *Result) aiperfClock(top map[string]json.RawMessage) {
	if len(r.Records) > 0 {
		if r.Point.StartedAt != "" {
			r.Clock = "started_at and ended_at are the records' request_start_ns and request_end_ns (wall-clock epoch ns), in UTC"
		}
		return
	}
	start, okS := aiperfTimestamp(top, "min_request_timestamp")
	end, okE := aiperfTimestamp(top, "max_response_timestamp")
	if !okS || !okE || end.Before(start) {
		r.Point.StartedAt, r.Point.EndedAt = "", ""
		r.Clock = "the file states no usable min_request_timestamp / max_response_timestamp: started_at and ended_at unknown"
		return
	}
	r.Point.StartedAt, r.Point.EndedAt = start.Format(microLayout), end.Format(microLayout)
	r.Clock = "started_at and ended_at are the file's min_request_timestamp and max_response_timestamp (wall-clock epoch ns), in UTC, to the microsecond"
}

// aiperfTimestamp reads a run-level ns timestamp metric ({"unit": "ns", "avg": …}); ok false
// when absent, in another unit or not a positive time.
func aiperfTimestamp(top map[string]json.RawMessage, tag string) (time.Time, bool) {
	var m struct {
		Unit string   `json:"unit"`
		Avg  *epochNs `json:"avg"`
	}
	if raw, ok := top[tag]; !ok || json.Unmarshal(raw, &m) != nil || m.Unit != "ns" || m.Avg == nil || *m.Avg <= 0 {
		return time.Time{}, false
	}
	return time.Unix(0, int64(*m.Avg)).UTC().Round(time.Microsecond), true
}
