package runshape

import (
	"fmt"
	"slices"
	"strings"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/autostop"
	"github.com/perfdag/perfdag/steps/measure/loadgen"
)

// requestsInput is what a point's request count puts in its fingerprint: the count for a
// fixed one (as before auto existed, so those fingerprints hold), the resolved spec for auto.
func requestsInput(c schema.Count, concurrency int) any {
	a := c.Auto
	if a == nil {
		return c.For(concurrency)
	}
	return map[string]any{"auto_metric": a.Metric, "rel_ci": a.RelCI, "min": a.MinFor(concurrency), "max": a.MaxFor(concurrency)}
}

// autoLoad makes cfg adaptive when the cell's count is auto and returns the rule that
// decides (nil for a fixed count).
func autoLoad(cell *schema.Cell, cfg *loadgen.Config) (*autostop.Rule, error) {
	a := cell.RequestsPerPoint.Auto
	if a == nil {
		return nil, nil
	}
	rule, err := autostop.New(*a, cfg.Concurrency)
	if err != nil {
		return nil, fmt.Errorf("cell %s: %w", cell.ID, err)
	}
	cfg.Requests = rule.Max
	cfg.Adaptive = rule.Adaptive(cfg.Concurrency)
	return rule, nil
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

// checkAuto refuses an auto max (set, or the default) below the valid requests the metric's
// interval is made from at some concurrency the cell may measure: a listed one, or any a
// search may probe in [from, to]. Such a point could never state its precision.
//
// The ends of the span suffice: the requests an interval needs grow with concurrency (each
// batch holds InflightFactor × c requests) and so does the default max (100 × c, capped), so a
// count short somewhere in the span is short at its low end (the metric's own minimum, e.g.
// p95's 2,000, is above max) or at its high end (c's batches no longer fit under max).
func checkAuto(i int, cell schema.Cell) error {
	a := cell.RequestsPerPoint.Auto
	if a != nil && a.Decide != "" {
		return &engine.FieldError{Path: fmt.Sprintf("cells[%d].requests_per_point.auto.decide", i),
			Err:  fmt.Errorf("cell %s: requests_per_point auto decide is not measured yet (issue 28)", cell.ID),
			Hint: "use {auto: {metric, rel_ci}} for now"}
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
	case cell.Search != nil && c == cell.Search.To:
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
// its list's; ok is false when it has neither.
func span(cell schema.Cell) (lo, hi int, ok bool) {
	if s := cell.Search; s != nil {
		return s.From, s.To, s.From >= 1 && s.To >= s.From
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
