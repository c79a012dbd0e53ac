// Package prewarm is the prewarm step kind: one completion per settle.prewarm_shapes entry at
// that shape's dimensions, before a cell's sweep, so the first recorded point does not pay for
// cold caches and lazy initialisation. Its records are kept apart (raw/prewarm.jsonl) and never
// enter statistics.
package prewarm

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/measure/session"
	"github.com/perfdag/perfdag/steps/measure/workload"
)

// Kind is the prewarm step kind.
var Kind = engine.Kind{
	Name:          "prewarm",
	Scope:         engine.ScopeCell,
	Version:       "1",
	HoldsEndpoint: true,
	Doc:           "one completion per prewarm shape before a cell's sweep",
	Result:        Result{},
	Inputs: func(t *engine.Task) any {
		s := t.Campaign.Settle
		if s == nil {
			s = &schema.Settle{}
		}
		return map[string]any{"shapes": s.PrewarmShapes, "pause_s": pause(t), "endpoint": t.Endpoint.URL, "model": t.Endpoint.Model}
	},
	Check: check,
	Run:   run,
}

// Result counts the prewarm requests.
type Result struct {
	Requests int `json:"requests"`
	Errors   int `json:"errors"`
}

func check(c *schema.Campaign, _ *schema.PipelineStep, _ any) []error {
	if c.Settle == nil {
		return nil
	}
	var errs []error
	for i, shape := range c.Settle.PrewarmShapes {
		if _, err := workload.Resolve(schema.Workload{Shape: shape}); err != nil {
			errs = append(errs, &engine.FieldError{Path: fmt.Sprintf("settle.prewarm_shapes[%d]", i), Err: err,
				Hint: "one of " + strings.Join(workload.Shapes(), ", ")})
		}
	}
	return errs
}

// pause is the settle pause after prewarm when a burn-in follows (settle before the first
// point covers the other case).
func pause(t *engine.Task) float64 {
	if s := t.Campaign.Settle; s != nil && s.BurnIn {
		return s.SettleS
	}
	return 0
}

func run(ctx context.Context, t *engine.Task) (engine.Result, error) {
	var shapes []string
	if t.Campaign.Settle != nil {
		shapes = t.Campaign.Settle.PrewarmShapes
	}
	var records []schema.RequestRecord
	res := &Result{}
	for i, shape := range shapes {
		w := t.Cell.Workload
		w.Shape, w.Mode, w.Dataset, w.InputTokens, w.OutputTokens = shape, workload.ModeSynthetic, "", 0, 0
		s, err := session.Open(ctx, t, w, session.Salt(t, session.PhasePrewarm+"-"+shape, schema.Conc(1)))
		if err != nil {
			return engine.Result{}, err
		}
		rec := s.Send(ctx, session.PhasePrewarm, i)
		s.Close()
		records = append(records, rec)
		res.Requests++
		status := "ok"
		if rec.ErrorClass != "" {
			if rec.ErrorClass != schema.ErrorCancelled { // the interrupt's, not the server's
				res.Errors++
			}
			status = rec.ErrorClass + ": " + rec.Error
		}
		if err := session.SettleLog(t, "prewarm %s: %s", shape, status); err != nil {
			return engine.Result{}, err
		}
	}
	rel, err := campaigndir.WriteLines(t.Dir, campaigndir.PrewarmRecords(t.Cell.ID), records)
	if err != nil {
		return engine.Result{}, err
	}
	if res.Requests > 0 && res.Errors == res.Requests {
		return engine.Result{}, fmt.Errorf("every prewarm request failed (%s): is the endpoint up?", records[0].Error)
	}
	if p := pause(t); p > 0 {
		if err := session.SettleLog(t, "settle %.1fs after prewarm", p); err != nil {
			return engine.Result{}, err
		}
		if err := session.Pause(ctx, time.Duration(p*float64(time.Second))); err != nil {
			return engine.Result{}, err
		}
	}
	return engine.Result{Value: res, Outputs: []string{rel}, Summary: fmt.Sprintf("prewarmed %s", strings.Join(shapes, ", "))}, nil
}
