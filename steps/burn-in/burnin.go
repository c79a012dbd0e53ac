// Package burnin is the burn-in step kind: one run-and-discard pass of a cell's first
// concurrency point, so the recorded sweep starts on a server in steady state. Its records are
// kept apart (raw/burn-in/) and never enter statistics.
package burnin

import (
	"context"
	"fmt"

	"github.com/perfdag/perfdag/engine/plural"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/measure/loadgen"
	"github.com/perfdag/perfdag/steps/measure/session"
)

// Kind is the burn-in step kind.
var Kind = engine.Kind{
	Name:          "burn-in",
	Scope:         engine.ScopeCell,
	Version:       "1",
	HoldsEndpoint: true,
	Doc:           "one run-and-discard pass of the cell's first concurrency point",
	Result:        Result{},
	Inputs: func(t *engine.Task) any {
		c := t.Cell
		return map[string]any{"endpoint": t.Endpoint.URL, "model": t.Endpoint.Model, "workload": c.Workload,
			"concurrency": first(c), "requests": c.RequestsPerPoint.For(first(c))}
	},
	Run: run,
}

// Result counts the discarded requests.
type Result struct {
	Concurrency int `json:"concurrency"`
	Requests    int `json:"requests"`
	Errors      int `json:"errors"`
}

func first(c *schema.Cell) int { return c.FirstConcurrency() }

func run(ctx context.Context, t *engine.Task) (engine.Result, error) {
	c := first(t.Cell)
	s, err := session.Open(ctx, t, t.Cell.Workload, session.Salt(t, session.PhaseBurnIn, c))
	if err != nil {
		return engine.Result{}, err
	}
	defer s.Close()
	n := t.Cell.RequestsPerPoint.For(c)
	if err := session.SettleLog(t, "burn-in c%d: %s, discarded", c, plural.N(n, "request")); err != nil {
		return engine.Result{}, err
	}
	records, err := s.Load(ctx, session.PhaseBurnIn, loadgen.Config{Requests: n, Concurrency: c,
		Rate: t.Cell.Workload.RequestRate, Arrival: t.Cell.Workload.Arrival, Seed: t.Cell.Workload.Seed},
		func(p loadgen.Progress) {
			if t.Progress != nil {
				t.Progress("burn-in " + session.ProgressLine(p))
			}
		})
	if err != nil {
		return engine.Result{}, err
	}
	res := &Result{Concurrency: c, Requests: len(records)}
	for _, r := range records {
		if r.ErrorClass != "" && r.ErrorClass != schema.ErrorCancelled {
			res.Errors++
		}
	}
	rel, err := campaigndir.WriteLines(t.Dir, campaigndir.BurnInRecords(t.Cell.ID, c), records)
	if err != nil {
		return engine.Result{}, err
	}
	if err := session.SettleLog(t, "burn-in c%d done: %s", c, plural.N(res.Errors, "error")); err != nil {
		return engine.Result{}, err
	}
	if res.Errors == res.Requests {
		return engine.Result{}, fmt.Errorf("every burn-in request failed: is the endpoint up?")
	}
	return engine.Result{Value: res, Outputs: []string{rel}, Summary: fmt.Sprintf("burn-in c%d: %s discarded", c, plural.N(n, "request"))}, nil
}
