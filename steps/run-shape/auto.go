package runshape

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/autostop"
	"github.com/perfdag/perfdag/steps/measure/loadgen"
)

// requestsInput is what a point's request count puts in its fingerprint: the count for a
// fixed one (as before auto existed, so those fingerprints hold), the resolved spec for auto,
// and for decide the SLO decided (search.slo written out): the requests a decided point
// measures depend on the SLO, so editing it re-measures the point.
func requestsInput(cell *schema.Cell, concurrency int, ref *schema.BaselineRef) any {
	c := cell.RequestsPerPoint
	a := c.Auto
	if a == nil {
		return c.For(concurrency)
	}
	if a.Decide == schema.DecideBaseline {
		// the values decided against: a new baseline re-measures the point
		in := map[string]any{"decide": a.Decide, "min": a.MinFor(concurrency), "max": a.MaxFor(concurrency)}
		if vs := baselineValues(cell, concurrency, ref); vs != nil {
			in["baseline"] = map[string]any{"name": ref.Name, "sha256": ref.SHA256, "values": vs}
		}
		return in
	}
	if a.Decide != "" {
		rule, _ := decideRule(cell)
		return map[string]any{"decide": rule, "min": a.MinFor(concurrency), "max": a.MaxFor(concurrency)}
	}
	return map[string]any{"auto_metric": a.Metric, "rel_ci": a.RelCI, "min": a.MinFor(concurrency), "max": a.MaxFor(concurrency)}
}

// autoPoint is an auto point's stopping rule: the precision rule (rel_ci) or the decide rule.
type autoPoint struct {
	rule       *autostop.Rule
	dec        *autostop.Decider
	noBaseline bool // decide: baseline with no baseline value at the point's concurrency
}

// baselineRef is the campaign's resolved baseline (nil without one), as the point's decide
// rule reads it: by the point's count base (its concurrency). A rate point's values are under
// its load key in the snapshot (r2.5-cap64), so its view holds those alone, under its base —
// never a concurrency point's values that share the number.
func baselineRef(t *engine.Task) *schema.BaselineRef {
	if t.Campaign == nil || t.Campaign.BaselineRef == nil {
		return nil
	}
	ref := t.Campaign.BaselineRef
	if !t.Load.IsRate() {
		return ref
	}
	view := *ref
	view.Points = map[string]map[string]schema.BaselineRefValue{}
	key := schema.MetricsKey(t.Load)
	if vs, ok := ref.Points[key]; ok {
		view.Points[strconv.Itoa(t.Load.CountBase())] = vs
	} else if t.Cell != nil && t.Cell.LegacyKey(t.Load) != "" {
		// a baseline snapshot written before load keys keyed the older open-loop spelling's points by their cap
		if vs, ok := ref.Points[strconv.Itoa(t.Load.Cap)]; ok {
			view.Points[strconv.Itoa(t.Load.CountBase())] = vs
		}
	}
	return &view
}

// baselineValues are ref's values at concurrency c when ref is the cell's, else nil.
func baselineValues(cell *schema.Cell, c int, ref *schema.BaselineRef) map[string]schema.BaselineRefValue {
	if ref == nil || ref.Cell != cell.ID {
		return nil
	}
	return ref.Points[strconv.Itoa(c)]
}

// autoLoad makes cfg adaptive when the cell's count is auto and returns the rule that
// decides (nil for a fixed count). A decide: baseline point without a baseline value at its
// concurrency (a campaign run outside perfdag schedule, a first scheduled run before any
// baseline is recorded, a concurrency the baseline lacks) measures max: there is nothing to
// decide against, and a full point makes a good baseline.
func autoLoad(cell *schema.Cell, cfg *loadgen.Config, ref *schema.BaselineRef) (*autoPoint, error) {
	a := cell.RequestsPerPoint.Auto
	if a == nil {
		return nil, nil
	}
	if a.Decide == schema.DecideBaseline {
		var cellRef *schema.BaselineRef
		if baselineValues(cell, cfg.Concurrency, ref) != nil {
			cellRef = ref
		}
		d, err := autostop.NewBaselineDecider(*a, cfg.Concurrency, cellRef, cell.SLO)
		if err != nil {
			return nil, fmt.Errorf("cell %s: %w", cell.ID, err)
		}
		if d == nil {
			cfg.Requests = a.MaxFor(cfg.Concurrency)
			return &autoPoint{noBaseline: true}, nil
		}
		cfg.Requests, cfg.Adaptive = d.Max, d.Adaptive()
		return &autoPoint{dec: d}, nil
	}
	if a.Decide != "" {
		rule, err := decideRule(cell)
		if err != nil {
			return nil, err
		}
		// its looks are whole turns of the point's count base: the concurrency, a rate's cap,
		// or for a rate without a cap the rate rounded up (a second of arrivals: Load.CountBase)
		base := cfg.Concurrency
		if cfg.Rate > 0 && base == 0 {
			base = int(math.Ceil(cfg.Rate))
		}
		d, err := autostop.NewDecider(*a, rule, base, cell.SLO)
		if err != nil {
			return nil, fmt.Errorf("cell %s: %w", cell.ID, err)
		}
		cfg.Requests, cfg.Adaptive = d.Max, d.Adaptive()
		return &autoPoint{dec: d}, nil
	}
	rule, err := autostop.New(*a, cfg.Concurrency)
	if err != nil {
		return nil, fmt.Errorf("cell %s: %w", cell.ID, err)
	}
	cfg.Requests = rule.Max
	cfg.Adaptive = rule.Adaptive(cfg.Concurrency)
	return &autoPoint{rule: rule}, nil
}

// decideRule is the SLO a decide cell's points measure until they decide: the search's SLO
// for decide: slo, else the rule written as decide's value.
func decideRule(cell *schema.Cell) (string, error) {
	a := cell.RequestsPerPoint.Auto
	if a.Decide != schema.DecideSLO {
		return a.Decide, nil
	}
	if cell.Search == nil || strings.TrimSpace(cell.Search.SLO) == "" {
		return "", fmt.Errorf("cell %s: requests_per_point auto decide: slo names the cell's search.slo, and the cell has no search", cell.ID)
	}
	return cell.Search.SLO, nil
}

// record writes why an auto point stopped onto the point: the precision rule's stop and its
// metric's interval, or the decide rule's decision.
func (ap *autoPoint) record(p *schema.Point, profiled []schema.RequestRecord) {
	switch {
	case ap == nil:
	case ap.dec != nil:
		d := ap.dec.Stop(profiled)
		p.Decision = &d
	default:
		recordAuto(p, ap.rule, profiled)
	}
}

// line words the stop for the point's summary ("" for a fixed count).
func (ap *autoPoint) line(p *schema.Point) string {
	switch {
	case p.Decision != nil:
		return autostop.DecisionLine(*p.Decision)
	case p.Auto != nil:
		return autostop.Line(*p.Auto)
	case ap != nil && ap.noBaseline:
		return "decide: baseline: no baseline value at this concurrency (baseline_ref, written by perfdag schedule): measured max"
	}
	return ""
}

// recordAuto writes why an auto point stopped, and its metric's interval, onto the point.
// The point's own interval of the metric (stats, on its token basis) is the one recorded when
// it has one; the rule's, made the same way from the records, otherwise.
func recordAuto(p *schema.Point, rule *autostop.Rule, profiled []schema.RequestRecord) {
	if rule == nil {
		return
	}
	st, iv, ok := rule.Stop(profiled)
	if own, has := p.Intervals[rule.Metric]; has {
		iv, ok = own, true
		st.Achieved = autostop.Achieved(own)
	}
	p.Auto = &st
	if ok {
		if p.Intervals == nil {
			p.Intervals = schema.Intervals{}
		}
		p.Intervals[rule.Metric] = iv
	}
}

// checkDecide refuses a decide spec whose SLO cannot be decided: decide: slo on a cell
// without a search, a rule written out on a searched cell (it decides its search's SLO), or a
// clause that is not a metric with a per-request interval (or a count) compared with a number.
func checkDecide(i int, cell schema.Cell, c *schema.Campaign) error {
	path := fmt.Sprintf("cells[%d].requests_per_point.auto.decide", i)
	a := cell.RequestsPerPoint.Auto
	if a.Decide == schema.DecideBaseline {
		switch {
		case cell.Search != nil:
			return &engine.FieldError{Path: path,
				Err:  fmt.Errorf("cell %s: requests_per_point auto decide: baseline decides a list of concurrencies against a baseline; a searched cell's probes decide its search's SLO", cell.ID),
				Hint: "decide: slo"}
		case c.Schedule == nil || c.Schedule.Baseline == "":
			return &engine.FieldError{Path: path,
				Err:  fmt.Errorf("cell %s: requests_per_point auto decide: baseline decides each point against the campaign's schedule.baseline, and the campaign names none", cell.ID),
				Hint: "add schedule: {cron: ..., baseline: NAME}, or decide an SLO: decide: \"ttft_p50_ms <= 250\""}
		}
		return nil
	}
	if a.Decide != schema.DecideSLO && cell.Search != nil {
		return &engine.FieldError{Path: path,
			Err:  fmt.Errorf("cell %s: requests_per_point auto decide: a searched cell's points decide its search's SLO, not %q", cell.ID, a.Decide),
			Hint: "decide: slo (and write the rule as search.slo)"}
	}
	rule, err := decideRule(&cell)
	if err != nil {
		return &engine.FieldError{Path: path, Err: err,
			Hint: `write the SLO to decide: decide: "ttft_p50_ms <= 250 && error_count == 0"`}
	}
	if _, err := autostop.Clauses(rule, cell.SLO); err != nil {
		if a.Decide == schema.DecideSLO {
			path = fmt.Sprintf("cells[%d].search.slo", i)
		}
		return &engine.FieldError{Path: path, Err: fmt.Errorf("cell %s: requests_per_point auto decide: %w", cell.ID, err),
			Hint: "decide reads clauses such as itl_avg_ms <= 50, ttft_p50_ms < 250, output_tok_s >= 1000, slo_attainment >= 0.99 (on a cell with slo:), error_count == 0, joined by &&"}
	}
	return nil
}

// checkAuto refuses an auto max (set, or the default) below the valid requests the metric's
// interval is made from at some concurrency the cell may measure: a listed one, or any a
// search may probe in [from, to]. Such a point could never state its precision.
//
// The ends of the span suffice: the requests an interval needs grow with concurrency (each
// batch holds InflightFactor × c requests) and so does the default max (100 × c, capped), so a
// count short somewhere in the span is short at its low end (the metric's own minimum, e.g.
// p95's 2,000, is above max) or at its high end (c's batches no longer fit under max).
func checkAuto(i int, cell schema.Cell, camp *schema.Campaign) error {
	a := cell.RequestsPerPoint.Auto
	if a != nil && a.Decide != "" {
		return checkDecide(i, cell, camp)
	}
	lo, hi, ok := span(cell)
	if a == nil || !ok {
		return nil
	}
	short := func(c int) bool { n := autostop.Need(a.Metric, c); return n > 0 && a.MaxFor(c) < n }
	c := hi // the worst when both ends are short: the most any point of the cell needs
	switch {
	case short(hi):
	case short(lo):
		c = lo
	default:
		return nil
	}
	need := autostop.Need(a.Metric, c)
	path, what := fmt.Sprintf("cells[%d].requests_per_point.auto", i), "the default max"
	if a.Max > 0 {
		path, what = path+".max", "max"
	}
	at := fmt.Sprintf("concurrency %d", c)
	switch {
	case cell.Search != nil && c == int(cell.Search.To):
		at += ", the search's upper bound (search.to)"
	case cell.Search != nil:
		at += ", the search's lower bound (search.from)"
	}
	var hints []string
	if need <= schema.MaxRequestsPerPoint {
		hints = append(hints, fmt.Sprintf("max: %d or more", need))
	}
	switch top := highestServed(a, lo, c); {
	case top == 0 || c != hi:
	case cell.Search != nil:
		hints = append(hints, fmt.Sprintf("search to: %d (the highest concurrency whose interval fits under max = %d)", top, a.MaxFor(top)))
	default:
		hints = append(hints, fmt.Sprintf("list no concurrency above %d", top))
	}
	err := fmt.Errorf("cell %s: requests_per_point auto: %s = %d is below the %d valid requests an interval of %s needs at %s",
		cell.ID, what, a.MaxFor(c), need, a.Metric, at)
	if need > schema.MaxRequestsPerPoint {
		// no count can serve it: what to change is the concurrency
		err = fmt.Errorf("cell %s: requests_per_point auto: an interval of %s needs more than the %d requests a point may send (docs/limits.md) at %s",
			cell.ID, a.Metric, schema.MaxRequestsPerPoint, at)
		path = fmt.Sprintf("cells[%d].concurrencies[%d]", i, slices.Index(cell.Concurrencies, c))
		if cell.Search != nil {
			path = fmt.Sprintf("cells[%d].search.to", i)
		}
	}
	return &engine.FieldError{Path: path, Err: err, Hint: strings.Join(hints, ", or ")}
}

// span is the lowest and highest concurrency a cell may measure: its search's bounds, else
// its list's; ok is false when it has neither (a rate search has none).
func span(cell schema.Cell) (lo, hi int, ok bool) {
	if s := cell.Search; s != nil {
		if s.OverRate() { // a span of concurrencies; a rate search's probes are checked as they run
			return 0, 0, false
		}
		from, to := s.Conc()
		return from, to, from >= 1 && to >= from
	}
	if len(cell.Concurrencies) == 0 {
		return 0, 0, false
	}
	return slices.Min(cell.Concurrencies), slices.Max(cell.Concurrencies), true
}

// highestServed is the highest concurrency in [lo, below) at which a's max still covers what
// the metric's interval needs, 0 when none (the need grows with concurrency: a bisection).
func highestServed(a *schema.AutoCount, lo, below int) int {
	fits := func(c int) bool { return autostop.Need(a.Metric, c) <= a.MaxFor(c) }
	if below <= lo || !fits(lo) {
		return 0
	}
	ok, bad := lo, below
	for bad-ok > 1 {
		if mid := ok + (bad-ok)/2; fits(mid) {
			ok = mid
		} else {
			bad = mid
		}
	}
	return ok
}
