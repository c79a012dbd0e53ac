package runshape

import (
	"fmt"
	"slices"

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
// interval is made from at the cell's lowest concurrency: such a point could never state its
// precision. (Higher concurrencies need more: a look there just waits, up to max.)
func checkAuto(i int, cell schema.Cell) error {
	a := cell.RequestsPerPoint.Auto
	if a != nil && a.Decide != "" {
		return &engine.FieldError{Path: fmt.Sprintf("cells[%d].requests_per_point.auto.decide", i),
			Err:  fmt.Errorf("cell %s: requests_per_point auto decide is not measured yet (issue 28)", cell.ID),
			Hint: "use {auto: {metric, rel_ci}} for now"}
	}
	if a == nil || len(cell.Concurrencies) == 0 {
		return nil
	}
	low := slices.Min(cell.Concurrencies)
	need := autostop.Need(a.Metric, low)
	if need == 0 || a.MaxFor(low) >= need {
		return nil
	}
	path, what := fmt.Sprintf("cells[%d].requests_per_point.auto", i), "the default max"
	if a.Max > 0 {
		path, what = path+".max", "max"
	}
	return &engine.FieldError{Path: path,
		Err: fmt.Errorf("cell %s: requests_per_point auto: %s = %d is below the %d valid requests an interval of %s needs at concurrency %d",
			cell.ID, what, a.MaxFor(low), need, a.Metric, low),
		Hint: fmt.Sprintf("max: %d or more", need)}
}
