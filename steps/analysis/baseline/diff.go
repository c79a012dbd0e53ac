package baseline

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/perfdag/perfdag/schema"
)

// Verdicts of a diff row and of a whole diff.
const (
	Green      = "GREEN"
	Red        = "RED"
	NullLegacy = "NULL_LEGACY_BASELINE"
)

// Units a tolerance is expressed in.
const (
	UnitPercent = "%"     // relative: |100 × delta / baseline|
	UnitPoints  = "pts"   // absolute percentage points (rates already in percent)
	UnitCount   = "count" // absolute count
)

// Regression directions.
const (
	LowerIsWorse  = "lower_is_worse"
	HigherIsWorse = "higher_is_worse"
)

// KernelClassPrefix names the open map of kernel classes; a tolerance on the prefix alone
// applies to every class.
const KernelClassPrefix = "kernel_class_gpu_pct"

// Rule is one metric's default tolerance and regression direction (seed 002's table).
type Rule struct {
	Metric    string
	Tolerance float64
	Unit      string
	Direction string
	Why       string
}

// rules is seed 002's tolerance table plus errors (any new failed request is a regression by
// default): per-concurrency metrics first, then sweep-wide ones. Read-only.
var rules = [...]Rule{
	{"throughput_toks_per_s", 3, UnitPercent, LowerIsWorse, "headline metric: small regressions are real"},
	{"ttft_p50_ms", 5, UnitPercent, HigherIsWorse, "scheduler / cache cold-start noise floor"},
	{"ttft_p95_ms", 10, UnitPercent, HigherIsWorse, "tail latency: wider band"},
	{"ttft_p99_ms", 15, UnitPercent, HigherIsWorse, "tail latency: wider band"},
	{"itl_p50_ms", 3, UnitPercent, HigherIsWorse, "decode-bound: small regressions are real"},
	{"tps_per_user", 3, UnitPercent, LowerIsWorse, "same band as overall throughput"},
	{"request_latency_p50_ms", 5, UnitPercent, HigherIsWorse, "same as TTFT p50"},
	{"goodput_req_s", 3, UnitPercent, LowerIsWorse, "perfdag addition: requests/s meeting every per-request target of the cell's slo; same band as throughput"},
	{"slo_attainment_pct", 1, UnitPoints, LowerIsWorse, "perfdag addition: share of requests meeting the cell's per-request slo, in absolute percentage points (99.5 → 98.4 is RED)"},
	{"errors", 0, UnitCount, HigherIsWorse, "perfdag addition: a failed request the baseline did not have"},
	{"prefix_cache_hit_rate_post", 2, UnitPoints, LowerIsWorse, "hit rate moves in absolute points"},
	{"gpu_cache_usage_perc_peak", 5, UnitPoints, HigherIsWorse, "capacity ceiling proxy"},
	{KernelClassPrefix, 3, UnitPoints, HigherIsWorse, "kernel-class share of GPU time drift"},
	{KneeMetric, 10, UnitPercent, LowerIsWorse, "perfdag addition: a searched cell's knee, the highest concurrency meeting its SLO (RED also needs a drop of more than one step)"},
	{KneeRateMetric, 10, UnitPercent, LowerIsWorse, "perfdag addition: a cell searched over request rate, its knee in requests/s (RED also needs a drop of more than one step of its grid)"},
	{"cpu_spinpoll_pct", 5, UnitPoints, HigherIsWorse, "busy-wait IPC regression"},
}

// pointRules is how many leading rules apply per concurrency.
const pointRules = 10

// sloMetric reports a metric only a cell with a per-request slo has: a diff of two cells
// without one has no row for it (not a NULL row on every concurrency).
func sloMetric(metric string) bool {
	return metric == "goodput_req_s" || metric == "slo_attainment_pct"
}

// Rules lists every tolerance row of seed 002 plus errors, as a copy the caller may keep.
func Rules() []Rule { return append([]Rule(nil), rules[:]...) }

// RuleFor returns the rule of a metric name; kernel_class_gpu_pct.<class> uses the prefix's rule.
func RuleFor(metric string) (Rule, bool) {
	name := metric
	if strings.HasPrefix(metric, KernelClassPrefix+".") {
		name = KernelClassPrefix
	}
	for _, r := range rules {
		if r.Metric == name {
			r.Metric = metric
			return r, true
		}
	}
	return Rule{}, false
}

// Tolerances overrides default tolerances by metric name ("ttft_p50_ms": 8 means 8 %;
// "kernel_class_gpu_pct": 4 applies to every class, "kernel_class_gpu_pct.fp8_bmm" to one).
type Tolerances map[string]float64

// For returns the tolerance of a metric: an exact override, else the kernel-class override,
// else the default.
func (t Tolerances) For(metric string) float64 {
	if v, ok := t[metric]; ok {
		return v
	}
	if strings.HasPrefix(metric, KernelClassPrefix+".") {
		if v, ok := t[KernelClassPrefix]; ok {
			return v
		}
	}
	r, _ := RuleFor(metric)
	return r.Tolerance
}

// Check reports overrides naming no known metric or holding a negative value; where prefixes
// the field in messages (e.g. "schedule.tolerances").
func (t Tolerances) Check(where string) error {
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var errs []string
	for _, k := range keys {
		if _, ok := RuleFor(k); !ok || k == KernelClassPrefix+"." {
			known := strings.Join(metricNames(), ", ")
			if where == "schedule.tolerances" {
				known += ", and drift (the change-point rule, %)"
			}
			errs = append(errs, fmt.Sprintf("%s.%s: unknown metric; known: %s", where, k, known))
			continue
		}
		if v := t[k]; v < 0 || !finite(v) {
			errs = append(errs, fmt.Sprintf("%s.%s: tolerance %v must be a non-negative number", where, k, v))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

func metricNames() []string {
	var names []string
	for _, r := range rules {
		n := r.Metric
		if n == KernelClassPrefix {
			n += "[.<class>]"
		}
		names = append(names, n)
	}
	return names
}

// ParseTolerance reads METRIC=VALUE as given on the command line. VALUE may end in the
// metric's unit ("5%", "2pts", "2pp"); a unit that does not match the metric is an error.
func ParseTolerance(s string) (string, float64, error) {
	name, val, ok := strings.Cut(s, "=")
	name, val = strings.TrimSpace(name), strings.TrimSpace(val)
	if !ok || name == "" || val == "" {
		return "", 0, fmt.Errorf("--tolerance %q: want METRIC=VALUE, e.g. ttft_p50_ms=8", s)
	}
	rule, known := RuleFor(name)
	if !known {
		return "", 0, fmt.Errorf("--tolerance %q: unknown metric %q; known: %s", s, name, strings.Join(metricNames(), ", "))
	}
	num, unit := val, ""
	for _, suffix := range []string{"%", "pts", "pp"} {
		if n, found := strings.CutSuffix(val, suffix); found {
			num, unit = strings.TrimSpace(n), suffix
			break
		}
	}
	if unit == "pp" {
		unit = UnitPoints
	}
	if unit != "" && unit != rule.Unit {
		return "", 0, fmt.Errorf("--tolerance %q: %s is measured in %s, not %s", s, name, rule.Unit, unit)
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v < 0 || !finite(v) {
		return "", 0, fmt.Errorf("--tolerance %q: %q is not a non-negative number", s, num)
	}
	if lo, hi := schema.FieldRange[schema.Schedule]("Tolerances"); v < lo || v > hi {
		return "", 0, fmt.Errorf("--tolerance %q: must be between %s and %s (as schedule.tolerances in a campaign file)", s, schema.FormatBound(lo), schema.FormatBound(hi))
	}
	return name, v, nil
}

// Diff compares a current snapshot with a baseline: per concurrency and metric, delta, delta %
// (relative metrics) and a verdict. A change in the good direction is GREEN however large; a
// change in the regression direction is RED beyond the tolerance (equal is within) — and, when
// both points carry a 95 % interval of the metric, only when the change's whole interval lies
// beyond the tolerance; otherwise it is NOTE, within noise (judgeNoise). A null on
// either side gives NULL_LEGACY_BASELINE, which never turns the verdict RED; a concurrency
// the baseline has and the current run lacks is RED (the point did not run). The overall
// verdict is RED when any row is RED. Snapshots of different workloads are refused.
func Diff(base, cur *schema.PerfBench, tol Tolerances) (*schema.BaselineDiff, error) {
	if err := comparable(base, cur); err != nil {
		return nil, err
	}
	if err := tol.Check("tolerances"); err != nil {
		return nil, err
	}
	d := &schema.BaselineDiff{Schema: schema.SchemaBaselineDiff}
	points, notes, err := pairs(base, cur)
	if err != nil {
		return nil, err
	}
	d.Notes = append(d.Notes, notes...)
	var cov intervalCoverage
	var pending []noiseCheck
	sloDiffers := ""
	if base.SLO != nil && cur.SLO != nil && base.SLO.String() != cur.SLO.String() {
		sloDiffers = fmt.Sprintf("the per-request SLOs differ (baseline %s, current %s)", base.SLO, cur.SLO)
		d.Notes = append(d.Notes, "goodput_req_s and slo_attainment_pct "+sloDiffers+": not compared")
	}
	for _, pt := range points {
		b, inBase := base.Metrics[pt.base]
		p, inCur := cur.Metrics[pt.cur]
		at := func(row *schema.DiffRow) {
			row.Concurrency = pt.load.InFlight()
			if pt.load.IsRate() {
				row.Load = pt.load.Key()
			}
		}
		switch {
		case !inBase:
			d.Notes = append(d.Notes, fmt.Sprintf("%s is new (not in the baseline): not compared", pt.load.Label()))
			continue
		case !inCur && probedOnlyByBase(base, cur, pt.load):
			d.Notes = append(d.Notes, fmt.Sprintf("%s was probed by the baseline's search only: not compared", pt.load.Label()))
			continue
		case !inCur:
			for _, r := range rules[:pointRules] {
				if sloMetric(r.Metric) && pointValue(&b, r.Metric) == nil {
					continue
				}
				row := compare(r.Metric, pointValue(&b, r.Metric), nil, tol)
				at(&row)
				row.Verdict = Red
				row.Note = "not measured in the current run"
				d.Rows = append(d.Rows, row)
			}
			continue
		}
		for _, r := range rules[:pointRules] {
			bv, cv := pointValue(&b, r.Metric), pointValue(&p, r.Metric)
			if sloMetric(r.Metric) && bv == nil && cv == nil {
				continue
			}
			if sloMetric(r.Metric) && sloDiffers != "" {
				bv, cv = nil, nil // goodput under other targets is another number
			}
			row := compare(r.Metric, bv, cv, tol)
			if sloMetric(r.Metric) && sloDiffers != "" {
				row.Baseline, row.Current = pointValue(&b, r.Metric), pointValue(&p, r.Metric)
				row.Note = "not compared: " + sloDiffers
			}
			if intervalMetric(r.Metric) && row.Verdict != NullLegacy {
				bi, ci := usable(b.Intervals, r.Metric), usable(p.Intervals, r.Metric)
				cov.add(bi, ci)
				pending = append(pending, noiseCheck{row: len(d.Rows), b: *bv, c: *cv, bi: bi, ci: ci,
					aware: len(b.Intervals) > 0 && len(p.Intervals) > 0})
			}
			at(&row)
			d.Rows = append(d.Rows, row)
		}
	}
	judgeAll(d.Rows, pending)
	if n := cov.note(); n != "" {
		d.Notes = append(d.Notes, n)
	}
	bs, cs := base.ServerMetricsDelta, cur.ServerMetricsDelta
	d.Rows = append(d.Rows,
		compare("prefix_cache_hit_rate_post", bs.PrefixCacheHitRatePost, cs.PrefixCacheHitRatePost, tol),
		compare("gpu_cache_usage_perc_peak", bs.GPUCacheUsagePercPeak, cs.GPUCacheUsagePercPeak, tol))
	d.Rows = append(d.Rows, kernelRows(base.KernelClassGPUPct, cur.KernelClassGPUPct, tol)...)
	d.Rows = append(d.Rows, compare("cpu_spinpoll_pct", base.CPUSpinpollPct, cur.CPUSpinpollPct, tol))
	kneeRow(d, base.Search, cur.Search, tol)
	decidedRows(d.Rows, base, cur)

	d.Verdict = Green
	for _, r := range d.Rows {
		switch r.Verdict {
		case Red:
			d.Red++
			d.Verdict = Red
		case Green:
			d.Green++
		case NullLegacy:
			d.Null++
		case WithinNoise:
			d.WithinNoise++
		}
	}
	return d, nil
}

// comparable refuses a diff of different models or workloads: the numbers would not be apples
// to apples, and a GREEN verdict would mean nothing.
func comparable(base, cur *schema.PerfBench) error {
	if base == nil || cur == nil {
		return fmt.Errorf("diff: a snapshot is missing")
	}
	for _, doc := range []*schema.PerfBench{base, cur} {
		if doc.Schema != schema.SchemaPerfBench {
			return fmt.Errorf("diff: snapshot schema %q, want %s", doc.Schema, schema.SchemaPerfBench)
		}
	}
	var diffs []string
	check := func(what, b, c string) {
		if b != "" && c != "" && b != c {
			diffs = append(diffs, fmt.Sprintf("%s %q vs %q", what, b, c))
		}
	}
	check("model", base.ModelPath, cur.ModelPath)
	check("input_token_band", base.Workload.InputTokenBand, cur.Workload.InputTokenBand)
	check("output_token_band", base.Workload.OutputTokenBand, cur.Workload.OutputTokenBand)
	check("dataset", base.Workload.Dataset, cur.Workload.Dataset)
	if len(diffs) > 0 {
		return fmt.Errorf("baseline and current run measured different things (%s): record a baseline for this workload, or diff the matching cell with --cell", strings.Join(diffs, "; "))
	}
	return nil
}

// pointPair is one point of a diff and its metrics keys in each snapshot ("" when absent).
type pointPair struct {
	load      schema.Load
	base, cur string
}

// pairs matches the two snapshots' points, in key order. A bare concurrency key of a baseline
// written before points were keyed by load (no load_sweep) is the concurrency point — or, when
// the current cell has none at that concurrency and exactly one rate point capped there, that
// rate point: such a baseline keyed an open-loop point (the older request_rate spelling) by
// its cap. The notes say which keys were read so.
func pairs(base, cur *schema.PerfBench) ([]pointPair, []string, error) {
	curKeys := map[schema.Load]string{}
	for k := range cur.Metrics {
		l, err := schema.MetricsLoad(k)
		if err != nil {
			return nil, nil, err
		}
		curKeys[l] = k
	}
	byLoad := map[schema.Load]*pointPair{}
	var notes []string
	for k := range base.Metrics {
		l, err := schema.MetricsLoad(k)
		if err != nil {
			return nil, nil, err
		}
		if _, ok := curKeys[l]; !ok && !l.IsRate() && !base.KeyedByLoad() {
			if r, ok := onlyRateCapped(curKeys, l.Concurrency); ok {
				notes = append(notes, fmt.Sprintf("baseline point %s (a snapshot written before points were keyed by load) is read as %s, the current cell's only point capped at %d", k, r.Key(), l.Concurrency))
				l = r
			}
		}
		byLoad[l] = &pointPair{load: l, base: k}
	}
	for l, k := range curKeys {
		if p := byLoad[l]; p != nil {
			p.cur = k
			continue
		}
		byLoad[l] = &pointPair{load: l, cur: k}
	}
	out := make([]pointPair, 0, len(byLoad))
	for _, p := range byLoad {
		out = append(out, *p)
	}
	slices.SortFunc(out, func(a, b pointPair) int { return a.load.Compare(b.load) })
	slices.Sort(notes)
	return out, notes, nil
}

// onlyRateCapped is the one rate point of keys capped at n (false when none, or several).
func onlyRateCapped(keys map[schema.Load]string, n int) (schema.Load, bool) {
	var found []schema.Load
	for l := range keys {
		if l.IsRate() && l.Cap == n {
			found = append(found, l)
		}
	}
	if len(found) != 1 {
		return schema.Load{}, false
	}
	return found[0], true
}

func pointValue(p *schema.PerfBenchPoint, metric string) *float64 {
	switch metric {
	case "throughput_toks_per_s":
		return p.ThroughputToksPerS
	case "ttft_p50_ms":
		return p.TTFTP50Ms
	case "ttft_p95_ms":
		return p.TTFTP95Ms
	case "ttft_p99_ms":
		return p.TTFTP99Ms
	case "itl_p50_ms":
		return p.ITLP50Ms
	case "tps_per_user":
		return p.TPSPerUser
	case "request_latency_p50_ms":
		return p.RequestLatencyP50Ms
	case "goodput_req_s":
		return p.GoodputReqS
	case "slo_attainment_pct":
		return p.SLOAttainmentPct
	case "errors":
		v := float64(p.Errors)
		return &v
	}
	return nil
}

// kernelRows compares the open kernel-class maps key by key; a map null on both sides still
// gives one NULL_LEGACY_BASELINE row so the operator sees the field was unmeasured.
func kernelRows(base, cur map[string]*float64, tol Tolerances) []schema.DiffRow {
	var keys []string
	for k := range base {
		keys = append(keys, k)
	}
	for k := range cur {
		if _, dup := base[k]; !dup {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return []schema.DiffRow{compare(KernelClassPrefix, nil, nil, tol)}
	}
	sort.Strings(keys)
	rows := make([]schema.DiffRow, 0, len(keys))
	for _, k := range keys {
		rows = append(rows, compare(KernelClassPrefix+"."+k, base[k], cur[k], tol))
	}
	return rows
}

// compare is one row: delta, delta % and the verdict under the metric's rule.
func compare(metric string, b, c *float64, tol Tolerances) schema.DiffRow {
	rule, _ := RuleFor(metric)
	row := schema.DiffRow{Metric: metric, Baseline: b, Current: c, Tolerance: tol.For(metric), Unit: rule.Unit, Direction: rule.Direction}
	if b == nil || c == nil || !finite(*b) || !finite(*c) {
		row.Verdict = NullLegacy
		return row
	}
	delta := *c - *b
	row.Delta = &delta
	size := math.Abs(delta)
	if rule.Unit == UnitPercent {
		switch {
		case *b != 0:
			p := 100 * delta / *b
			row.DeltaPct = &p
			size = math.Abs(p)
		case delta != 0:
			size = math.Inf(1)
		}
	}
	worse := delta < 0
	if rule.Direction == HigherIsWorse {
		worse = delta > 0
	}
	row.Verdict = Green
	// Equal to the tolerance is within it; the slack absorbs float rounding of the percentage.
	if worse && size > row.Tolerance+1e-9*math.Max(1, row.Tolerance) {
		row.Verdict = Red
	}
	return row
}
