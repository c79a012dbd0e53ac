package autostop

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/perfdag/perfdag/engine/gate"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/stats"
)

// baselineMetrics maps the diff's per-concurrency metric names (steps/analysis/baseline) to the
// metric a decide point bounds and the factor from it to the diff's unit. ttft_p99_ms is not
// here: no point bounds a p99 before 10,000 requests, so the diff judges it as for any point.
var baselineMetrics = map[string]struct {
	metric string
	scale  float64
}{
	"throughput_toks_per_s":  {"output_tok_s", 1},
	"ttft_p50_ms":            {"ttft_p50_ms", 1},
	"ttft_p95_ms":            {"ttft_p95_ms", 1},
	"itl_p50_ms":             {"itl_p50_ms", 1},
	"tps_per_user":           {"tok_s_per_user", 1},
	"request_latency_p50_ms": {"request_latency_p50_ms", 1},
	stats.KeyGoodputReqS:     {stats.KeyGoodputReqS, 1},
	"slo_attainment_pct":     {stats.KeySLOAttainment, 100},
}

// baselineErrors is the diff's name of the failed-request count, decided exactly.
const baselineErrors = "errors"

// Units and directions of a baseline value, as the diff writes them (steps/analysis/baseline).
const (
	unitPercent   = "%"
	unitCount     = "count"
	higherIsWorse = "higher_is_worse"
)

// z975 is the normal quantile a 95 % half-width is made with: half-width / z975 is the
// standard error the diff combines in quadrature.
const z975 = 1.959963984540054

// NewBaselineDecider is the decide rule of a point with decide: baseline at concurrency c:
// for every metric of ref at c that a point can bound, the clause "the change against the
// baseline is inside its tolerance" — the metric at most (higher is worse) or at least (lower
// is worse) the baseline's value moved by the tolerance, that limit's own standard error (the
// baseline's half-width ÷ 1.96, moved alike) taken in quadrature with the point's bound, as the
// diff combines the two intervals; the failed-request count exactly. meets: every change is
// inside (the diff's rows are GREEN); misses: one is beyond (RED). nil, nil when ref has no
// value at c (nothing to decide against: the point measures max).
func NewBaselineDecider(a schema.AutoCount, c int, ref *schema.BaselineRef, slo *schema.SLO) (*Decider, error) {
	if ref == nil || len(ref.Points[strconv.Itoa(c)]) == 0 {
		return nil, nil
	}
	values := ref.Points[strconv.Itoa(c)]
	names := make([]string, 0, len(values))
	for name := range values {
		names = append(names, name)
	}
	slices.Sort(names)
	var cs []Clause
	var words []string
	for _, name := range names {
		v := values[name]
		cl, ok, err := baselineClause(name, v, slo)
		if err != nil {
			return nil, fmt.Errorf("baseline_ref %s at concurrency %d: %w", name, c, err)
		}
		if ok {
			cs = append(cs, cl)
			words = append(words, cl.Clause)
		}
	}
	if len(cs) == 0 {
		return nil, nil
	}
	d := newDecider(a, "baseline "+ref.Name+": "+strings.Join(words, " && "), c, cs)
	d.Reference = "baseline " + ref.Name + " sha256:" + ref.SHA256
	return d, nil
}

// baselineClause is the clause deciding whether name's change against v is inside its
// tolerance; ok is false for a metric no point can bound (ttft_p99_ms) or an slo metric on a
// cell without slo.
func baselineClause(name string, v schema.BaselineRefValue, slo *schema.SLO) (Clause, bool, error) {
	if !finite([]float64{v.Value, v.HalfWidth, v.Tolerance}) || v.HalfWidth < 0 || v.Tolerance < 0 {
		return Clause{}, false, fmt.Errorf("value %v ± %v, tolerance %v: want finite numbers, the half-width and tolerance not negative", v.Value, v.HalfWidth, v.Tolerance)
	}
	op, sign := ">=", -1.0
	if v.Direction == higherIsWorse {
		op, sign = "<=", 1
	}
	if name == baselineErrors {
		limit := v.Value + sign*v.Tolerance
		if op != "<=" || v.Unit != unitCount {
			return Clause{}, false, fmt.Errorf("errors is a count judged higher-is-worse, got %s %s", v.Unit, v.Direction)
		}
		return Clause{Threshold: gate.Threshold{Name: "error_count", Op: "<=", Limit: limit,
			Clause: fmt.Sprintf("error_count <= %s (baseline %s + %s)", num(limit), num(v.Value), num(v.Tolerance))}, count: true, diff: name}, true, nil
	}
	bm, known := baselineMetrics[name]
	if !known {
		return Clause{}, false, nil
	}
	var cl Clause
	if m, ok := metrics[bm.metric]; ok {
		cl.m = &m
	} else if slo != nil {
		cl.s = &sloMetric{key: bm.metric, slo: *slo}
	} else {
		return Clause{}, false, nil
	}
	value, se := v.Value/bm.scale, v.HalfWidth/bm.scale/z975
	limit, moved := 0.0, ""
	switch v.Unit {
	case unitPercent:
		f := 1 + sign*v.Tolerance/100
		limit, se = value*f, se*f
		moved = fmt.Sprintf("%+g %%", sign*v.Tolerance)
	default: // points of the diff's unit
		limit = value + sign*v.Tolerance/bm.scale
		moved = fmt.Sprintf("%+g %s", sign*v.Tolerance, v.Unit)
	}
	cl.Threshold = gate.Threshold{Name: bm.metric, Op: op, Limit: limit,
		Clause: fmt.Sprintf("%s %s %s (baseline %s %s)", bm.metric, op, num(limit), num(value), moved)}
	cl.limitSE, cl.diff = se, name
	return cl, true, nil
}

// num prints a limit with up to six significant digits.
func num(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

// normalQuantile is Φ⁻¹(p).
func normalQuantile(p float64) float64 { return math.Sqrt2 * math.Erfinv(2*p-1) }
