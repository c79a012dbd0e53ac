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
	Doc:           "one run-and-discard pass of the cell's first point",
	Result:        Result{},
	Inputs: func(t *engine.Task) any {
		c, l := t.Cell, t.Cell.FirstLoad()
		return map[string]any{"endpoint": t.Endpoint.URL, "model": t.Endpoint.Model, "workload": c.PointWorkload(l),
			"concurrency": l.InFlight(), "requests": c.RequestsPerPoint.For(l.CountBase())}
	},
	Run: run,
}

// Result counts the discarded requests.
type Result struct {
	Load        schema.Load `json:"load,omitzero"`
	Concurrency int         `json:"concurrency"`
	Requests    int         `json:"requests"`
	Errors      int         `json:"errors"`
}

func run(ctx context.Context, t *engine.Task) (engine.Result, error) {
	l := t.Cell.FirstLoad()
	w := t.Cell.PointWorkload(l)
	s, err := session.Open(ctx, t, w, session.Salt(t, session.PhaseBurnIn, l))
	if err != nil {
		return engine.Result{}, err
	}
	defer s.Close()
	n := t.Cell.RequestsPerPoint.For(l.CountBase())
	if err := session.SettleLog(t, "burn-in %s: %s, discarded", l.Key(), plural.N(n, "request")); err != nil {
		return engine.Result{}, err
	}
	records, err := s.Load(ctx, session.PhaseBurnIn, loadgen.Config{Requests: n, Concurrency: l.InFlight(),
		Rate: w.RequestRate, Arrival: w.Arrival, Burstiness: w.Burstiness, Seed: w.Seed},
		func(p loadgen.Progress) {
			if t.Progress != nil {
				t.Progress("burn-in " + session.ProgressLine(p))
			}
		})
	if err != nil {
		return engine.Result{}, err
	}
	res := &Result{Load: l, Concurrency: l.InFlight(), Requests: len(records)}
	for _, r := range records {
		if r.ErrorClass != "" && r.ErrorClass != schema.ErrorCancelled {
			res.Errors++
		}
	}
	rel, err := campaigndir.WriteLines(t.Dir, campaigndir.BurnInRecords(t.Cell.ID, l), records)
	if err != nil {
		return engine.Result{}, err
	}
	if err := session.SettleLog(t, "burn-in %s done: %s", l.Key(), plural.N(res.Errors, "error")); err != nil {
		return engine.Result{}, err
	}
	if res.Errors == res.Requests {
		return engine.Result{}, fmt.Errorf("every burn-in request failed: is the endpoint up?")
	}
	return engine.Result{Value: res, Outputs: []string{rel}, Summary: fmt.Sprintf("burn-in %s: %s discarded", l.Key(), plural.N(n, "request"))}, nil
}
