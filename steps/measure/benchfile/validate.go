package benchfile

// One validation for every format: each number a reader converts goes through a rule, each
// stated total is compared with the per-request data it sums, and a document that is not a
// result object is named for what it holds. A refusal names the file, the line, the field and
// the value as the file holds it (its JSON text, never a converted or overflowed number).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"

	"github.com/perfdag/perfdag/schema"
)

// Bounds of what an imported file may state. Beyond them a value is a unit mistake or
// garbage, and converting it would overflow (a time in int64 nanoseconds, a count in an int).
const (
	// MaxSeconds is the longest time a file may state — a run, a request, a gap — 1e6 s
	// (11.6 days).
	MaxSeconds = 1e6
	// MaxRequests bounds a run's request counts.
	MaxRequests = 1e9
	// MaxTokens bounds one request's token count.
	MaxTokens = 1e9
	// MaxTotalTokens bounds a run's token totals: 2^53, the largest whole number a float64
	// holds exactly.
	MaxTotalTokens = 1 << 53
	// maxEpochNs bounds an absolute time in epoch ns (year 2096): an int64 holds it.
	maxEpochNs = 4e18
	// maxClockS bounds a monotonic clock reading in s (vLLM's start_times, perf_counter):
	// 31 years of uptime, still an int64 in ns.
	maxClockS = 1e9
)

// maxConcurrency is the largest concurrency a campaign cell takes (cells[].concurrencies'
// range): an imported run at a concurrency no cell can name is refused here, at its line.
var maxConcurrency = func() float64 {
	f, _ := reflect.TypeFor[schema.Cell]().FieldByName("Concurrencies")
	_, hi, _ := schema.Range(f.Tag)
	return hi
}()

// rule is what one kind of number may be.
type rule struct {
	what   string // "a concurrency", "a time"
	whole  bool
	lo, hi float64
	loOpen bool   // lo itself is excluded (a duration is more than 0)
	upTo   string // the upper bound as messages say it ("11.6 days"); "" prints hi, "-" none
}

// days is MaxSeconds as a person reads it.
const days = "11.6 days"

var (
	ruleConcurrency = rule{what: "a concurrency", whole: true, lo: 1, hi: maxConcurrency}
	ruleCount       = rule{what: "a request count", whole: true, hi: MaxRequests}
	ruleTokens      = rule{what: "a request's token count", whole: true, hi: MaxTokens}
	ruleTotalTokens = rule{what: "a token total", whole: true, hi: MaxTotalTokens, upTo: "2^53"}
	ruleMeanTokens  = rule{what: "a token statistic", hi: MaxTokens}
	ruleSeconds     = rule{what: "a time", hi: MaxSeconds, upTo: days}
	ruleMs          = rule{what: "a time", hi: MaxSeconds * 1e3, upTo: days}
	ruleDuration    = rule{what: "a run's duration", loOpen: true, hi: MaxSeconds, upTo: days}
	ruleDurationMs  = rule{what: "a run's duration", loOpen: true, hi: MaxSeconds * 1e3, upTo: days}
	ruleRate        = rule{what: "a rate", hi: math.MaxFloat64, upTo: "-"}
	ruleClock       = rule{what: "a clock reading", hi: maxClockS, upTo: "1e9 s (31 years)"}
	ruleEpochNs     = rule{what: "a timestamp", loOpen: true, hi: maxEpochNs, upTo: "4e18 ns (the year 2096)"}
)

// want says what the rule accepts: "a concurrency is a whole number from 1 to 100000",
// "a time is a finite number from 0 up to 11.6 days".
func (r rule) want() string {
	kind := "a finite number"
	if r.whole {
		kind = "a whole number"
	}
	from := "from " + schema.FormatBound(r.lo)
	if r.loOpen {
		from = "above " + schema.FormatBound(r.lo)
	}
	switch r.upTo {
	case "-":
		return fmt.Sprintf("%s is %s %s", r.what, kind, from)
	case "":
		return fmt.Sprintf("%s is %s %s to %s", r.what, kind, from, strconv.FormatFloat(r.hi, 'g', -1, 64))
	}
	return fmt.Sprintf("%s is %s %s up to %s", r.what, kind, from, r.upTo)
}

// ok reports whether v is one of the rule's numbers.
func (r rule) ok(v float64) bool {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0), v > r.hi, v < r.lo, r.loOpen && v == r.lo:
		return false
	case r.whole && v != math.Trunc(v):
		return false
	}
	return true
}

// number reads raw (a JSON value as the file holds it) under r: the value, or the problem
// ("holds 4.5: a concurrency is a whole number from 1 to 100000").
func number(raw []byte, r rule) (float64, string) {
	s := shown(raw)
	if !isJSONNumber(raw) {
		if s == "NaN" || s == "Infinity" || s == "-Infinity" {
			return 0, fmt.Sprintf("holds %s: %s", s, r.want())
		}
		return 0, fmt.Sprintf("holds %s, not a number: %s", s, r.want())
	}
	v, err := strconv.ParseFloat(string(bytes.TrimSpace(raw)), 64)
	if err != nil || !r.ok(v) { // beyond float64 (1e400), or beyond the rule
		return 0, fmt.Sprintf("holds %s: %s", s, r.want())
	}
	return v, ""
}

// isJSONNumber reports whether raw (a valid JSON value) is a number, not a string, null,
// boolean, array or object.
func isJSONNumber(raw []byte) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && (raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9')
}

// shown is a JSON value as the file holds it: Python's bare NaN and Infinity, which the
// reader quotes to decode them (pythonJSON), are shown bare again; long values are cut.
func shown(raw []byte) string {
	s := string(bytes.TrimSpace(raw))
	switch s {
	case `"NaN"`, `"Infinity"`, `"-Infinity"`:
		return s[1 : len(s)-1]
	}
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}

// notObject describes a valid JSON document that is not a result object ("holds null,
// expected a result object"); "" for an object, or for text that is not JSON at all.
func notObject(doc []byte) string {
	t := bytes.TrimSpace(doc)
	if len(t) == 0 || t[0] == '{' || !json.Valid(t) {
		return ""
	}
	kind := "a number"
	switch t[0] {
	case 'n':
		kind = "null"
	case '[':
		kind = "an array"
	case '"':
		kind = "a string"
	case 't', 'f':
		kind = "a boolean"
	}
	return "holds " + kind + ", expected a result object"
}

// utf8BOM is the byte-order mark some editors and Windows tools put before JSON text; JSON
// forbids it, so readers drop it (it only ever precedes line 1: positions do not move).
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// stated is a total a file states beside the per-request data it sums: the import refuses
// the file when the two disagree, naming the total's field and both values.
type stated struct {
	field   string // as Error.Field names it
	raw     []byte // the total as the file holds it
	want    float64
	counted float64
	what    string // the per-request side: "errors[] lists 7 requests without an error"
}

// checkTotals compares each stated total with its per-request count; at says where a field is.
func checkTotals(at func(field, msg string) *Error, totals ...stated) error {
	for _, t := range totals {
		if t.raw == nil || t.want == t.counted {
			continue
		}
		return at(t.field, fmt.Sprintf("holds %s, but %s", shown(t.raw), t.what))
	}
	return nil
}

// scaled reads raw, a number in the file's unit, as f × raw under r (r in the converted
// unit, as a time in ms): the refusal quotes the number and unit the file states.
func scaled(raw []byte, f float64, unit string, r rule) (float64, string) {
	x, problem := number(raw, rule{what: r.what, lo: -math.MaxFloat64, hi: math.MaxFloat64})
	if problem != "" {
		_, problem = number(raw, r) // not a finite number: say so with r's wording
		return 0, problem
	}
	if !r.ok(x * f) {
		if unit != "" {
			unit = " " + unit
		}
		return 0, fmt.Sprintf("holds %s%s: %s", shown(raw), unit, r.want())
	}
	return x * f, ""
}
