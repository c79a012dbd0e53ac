package schema

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// AutoCount is requests_per_point: {auto: {...}}: a point measures in batches until the 95 %
// interval of Metric is within RelCI of its estimate (and it sent at least Min requests), or
// until Max requests, so a quiet point stops early and a noisy one gets the requests it needs.
// With Decide instead of Metric and RelCI, it measures until an SLO's verdict is known.
type AutoCount struct {
	Metric string  `yaml:"metric,omitempty" json:"metric,omitempty"`
	RelCI  float64 `yaml:"rel_ci,omitempty" json:"rel_ci,omitempty"`
	// Decide is what the point measures to decide: DecideSLO (the cell's search.slo), or an SLO
	// rule written out ("ttft_p50_ms <= 250 && error_count == 0") for a cell without a search.
	Decide string `yaml:"decide,omitempty" json:"decide,omitempty"`
	Min    int    `yaml:"min,omitempty" json:"min,omitempty"`
	Max    int    `yaml:"max,omitempty" json:"max,omitempty"`
}

// DecideSLO is decide's value that names the cell's search.slo as the rule to decide.
const DecideSLO = "slo"

// DecideBaseline is decide's value that decides each point against the campaign's baseline:
// whether every change the scheduled diff judges is inside its tolerance (docs/schedule.md).
const DecideBaseline = "baseline"

// AutoMetrics are the point metrics an auto point can watch, keyed as a point's intervals
// are (atlas names): means and the throughputs (Σ per request / window) by batch means,
// percentiles by sectioning (docs/statistics.md; docs/measurement.md, "Enough requests (auto)").
// p99s are left out: their interval needs 10,000 requests.
var AutoMetrics = []string{
	"ttft_avg_ms", "ttft_p50_ms", "ttft_p90_ms", "ttft_p95_ms",
	"itl_avg_ms", "itl_p50_ms",
	"request_latency_avg_ms", "request_latency_p50_ms",
	"tok_s_per_user", "output_tok_s", "request_throughput",
}

// Defaults and bounds of an auto count.
const (
	AutoMinFloor      = 30   // default min is max(AutoMinFloor, 3 × concurrency)
	AutoMaxDefault    = 2000 // default max is max(AutoMaxDefault, 100 × concurrency), capped
	AutoMaxPerConc    = 100  // requests per unit of concurrency in the default max
	autoKeysInMessage = "metric, rel_ci, decide, min, max"
)

// IsAutoMetric reports whether name is one of AutoMetrics.
func IsAutoMetric(name string) bool {
	for _, m := range AutoMetrics {
		if m == name {
			return true
		}
	}
	return false
}

// MinFor is the fewest requests the point sends at concurrency c: the set min, else
// max(AutoMinFloor, 3 × c) (a decide point: its first look, DecideFirstTurns × c), never
// above MaxFor.
func (a AutoCount) MinFor(c int) int {
	n := a.Min
	switch {
	case n > 0:
	case a.Decide != "":
		n = DecideFirstTurns * max(c, 1)
	default:
		n = max(AutoMinFloor, 3*c)
	}
	return min(n, a.MaxFor(c))
}

// DecideFirstTurns is when a decide point first looks, in turns of its slots (requests per
// unit of concurrency): a server without variance is decided there.
const DecideFirstTurns = 4

// MaxFor is the most requests the point sends at concurrency c: the set max, else
// max(AutoMaxDefault, 100 × c), at most MaxRequestsPerPoint either way.
func (a AutoCount) MaxFor(c int) int {
	n := a.Max
	if n <= 0 {
		n = max(AutoMaxDefault, AutoMaxPerConc*c)
	}
	return min(n, MaxRequestsPerPoint)
}

// Problems lists what is wrong with the spec, keyed by its field (metric, rel_ci, min, max),
// for validate to place at that key.
func (a AutoCount) Problems() map[string]string {
	out := map[string]string{}
	if a.Decide != "" {
		switch {
		case a.Metric != "":
			out["metric"] = "requests_per_point auto: decide and metric are alternatives: a point measures until its SLO verdict is known, or until one metric is precise enough"
		case a.RelCI != 0:
			out["rel_ci"] = "requests_per_point auto: decide and rel_ci are alternatives: a decided point stops when its verdict is known at 95 %, not at a precision"
		}
		a.bounds(out)
		return out
	}
	switch {
	case a.Metric == "":
		out["metric"] = "requests_per_point auto needs a metric to watch"
	case !IsAutoMetric(a.Metric):
		out["metric"] = fmt.Sprintf("requests_per_point auto: metric %q has no per-request interval", a.Metric)
	}
	if r := a.RelCI; !(r > 0 && r < 1) {
		out["rel_ci"] = fmt.Sprintf("requests_per_point auto: rel_ci = %v: want a fraction between 0 and 1 (0.02 is ±2 %%)", r)
	}
	a.bounds(out)
	return out
}

// bounds adds the problems of min and max to out.
func (a AutoCount) bounds(out map[string]string) {
	switch {
	case a.Min < 0:
		out["min"] = fmt.Sprintf("requests_per_point auto: min = %d: want a positive count", a.Min)
	case a.Min > MaxRequestsPerPoint:
		out["min"] = fmt.Sprintf("requests_per_point auto: min = %d: at most %d requests per point", a.Min, MaxRequestsPerPoint)
	}
	switch {
	case a.Max < 0:
		out["max"] = fmt.Sprintf("requests_per_point auto: max = %d: want a positive count", a.Max)
	case a.Max > MaxRequestsPerPoint:
		out["max"] = fmt.Sprintf("requests_per_point auto: max = %d: at most %d requests per point", a.Max, MaxRequestsPerPoint)
	case a.Max > 0 && a.Min > a.Max:
		out["min"] = fmt.Sprintf("requests_per_point auto: min = %d is above max = %d", a.Min, a.Max)
	}
}

// String writes the spec compactly, for plans and summaries.
func (a AutoCount) String() string {
	s := fmt.Sprintf("auto %s ±%s%%", a.Metric, strconv.FormatFloat(a.RelCI*100, 'g', 4, 64))
	if a.Decide != "" {
		s = "auto decide " + a.Decide
	}
	if a.Min > 0 {
		s += " min " + strconv.Itoa(a.Min)
	}
	if a.Max > 0 {
		s += " max " + strconv.Itoa(a.Max)
	}
	return s
}

// parseAuto reads the mapping form {auto: {metric, rel_ci, min, max}} as YAML or JSON decode
// it into a generic value; only its shape is checked here (validate checks the values, at
// their keys).
func parseAuto(v map[string]any) (*AutoCount, error) {
	for k := range v {
		if k != "auto" {
			return nil, fmt.Errorf("requests_per_point: unknown key %q: the mapping form is {auto: {%s}}", k, autoKeysInMessage)
		}
	}
	inner, ok := v["auto"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("requests_per_point.auto: want a mapping with %s", autoKeysInMessage)
	}
	a := &AutoCount{}
	keys := make([]string, 0, len(inner))
	for k := range inner {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		val := inner[k]
		var err error
		switch k {
		case "metric":
			s, ok := val.(string)
			if !ok {
				err = fmt.Errorf("want a metric name such as ttft_p50_ms, got %v", val)
			}
			a.Metric = s
		case "rel_ci":
			a.RelCI, err = number(val)
		case "decide":
			s, ok := val.(string)
			if !ok || strings.TrimSpace(s) == "" {
				err = fmt.Errorf("want %q (the cell's search.slo), %q (the schedule's baseline) or an SLO rule such as \"ttft_p50_ms <= 250 && error_count == 0\", got %v", DecideSLO, DecideBaseline, val)
			}
			a.Decide = strings.TrimSpace(s)
		case "min":
			a.Min, err = count(val)
		case "max":
			a.Max, err = count(val)
		default:
			err = fmt.Errorf("unknown key: valid keys are %s", autoKeysInMessage)
		}
		if err != nil {
			return nil, fmt.Errorf("requests_per_point.auto.%s: %w", k, err)
		}
	}
	return a, nil
}

func number(v any) (float64, error) {
	switch x := v.(type) {
	case float64:
		return x, nil
	case int:
		return float64(x), nil
	case int64:
		return float64(x), nil
	case uint64:
		return float64(x), nil
	case string:
		if f, err := strconv.ParseFloat(strings.TrimSpace(x), 64); err == nil {
			return f, nil
		}
	}
	return 0, fmt.Errorf("want a number, got %v", v)
}

// count reads min or max: a whole number, at most MaxRequestsPerPoint (as every way of
// writing requests_per_point; docs/limits.md); a negative one is left to Problems.
func count(v any) (int, error) {
	f, err := number(v)
	switch {
	case err != nil || f != math.Trunc(f):
		return 0, fmt.Errorf("want a whole number of requests, got %v", v)
	case f > MaxRequestsPerPoint:
		return 0, fmt.Errorf("at most %d requests per point, got %v", MaxRequestsPerPoint, v)
	case f < -MaxRequestsPerPoint:
		return 0, fmt.Errorf("want a positive count, got %v", v)
	}
	return int(f), nil
}

func autoMetricsAny() []any {
	out := make([]any, len(AutoMetrics))
	for i, m := range AutoMetrics {
		out[i] = m
	}
	return out
}
