package runshape

import (
	"fmt"

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
func recordAuto(p *schema.Point, rule *autostop.Rule, profiled []schema.RequestRecord) {
	if rule == nil {
		return
	}
	st, iv, ok := rule.Stop(profiled)
	p.Auto = &st
	if ok {
		if p.Intervals == nil {
			p.Intervals = schema.Intervals{}
		}
		p.Intervals[rule.Metric] = iv
	}
}

// checkAuto refuses an auto max below the valid requests the metric's interval is made from:
// such a point could never state its precision.
func checkAuto(i int, cell schema.Cell) error {
	a := cell.RequestsPerPoint.Auto
	if a == nil || a.Max == 0 {
		return nil
	}
	if need := autostop.Need(a.Metric); need > 0 && a.Max < need {
		return &engine.FieldError{Path: fmt.Sprintf("cells[%d].requests_per_point.auto.max", i),
			Err:  fmt.Errorf("cell %s: requests_per_point auto: max = %d is below the %d valid requests an interval of %s is made from", cell.ID, a.Max, need, a.Metric),
			Hint: fmt.Sprintf("max: %d or more (or leave it out: max(2000, 100 × concurrency))", need)}
	}
	return nil
}
