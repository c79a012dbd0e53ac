// Package settle is the settle step kind: a pause of settle_s before every recorded point, so
// a point never starts in the wake of the previous one (the seeds measured deploy-first numbers
// 6–37 % low without this discipline). Every pause is logged to cells/<id>/commands/settle.log.
package settle

import (
	"context"
	"fmt"
	"time"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/steps/measure/session"
)

// Kind is the settle step kind.
var Kind = engine.Kind{
	Name:          "settle",
	Scope:         engine.ScopePoint,
	Version:       "1",
	HoldsEndpoint: true,
	Precedes:      true,
	Doc:           "pause settle_s before a recorded point; logged to commands/settle.log",
	Result:        Result{},
	Inputs: func(t *engine.Task) any {
		return map[string]any{"settle_s": seconds(t), "endpoint": t.EndpointKey, "concurrency": t.Load.InFlight()}
	},
	Run: run,
}

// Result says how long the node paused, and how long it held the endpoint doing so (its
// wall time: the point's measurement cost counts it).
type Result struct {
	PausedS float64 `json:"paused_s"`
	HeldS   float64 `json:"held_s,omitempty"`
}

// Settled implements campaigndir.SettleOutput (a result recorded before held_s held its pause).
func (r *Result) Settled() (heldS, pausedS float64) {
	if r.HeldS > 0 {
		return r.HeldS, r.PausedS
	}
	return r.PausedS, r.PausedS
}

func seconds(t *engine.Task) float64 {
	if t.Campaign.Settle == nil {
		return 0
	}
	return t.Campaign.Settle.SettleS
}

func run(ctx context.Context, t *engine.Task) (engine.Result, error) {
	began := time.Now()
	s := seconds(t)
	if err := session.SettleLog(t, "settle %.1fs before %s", s, t.Load.Key()); err != nil {
		return engine.Result{}, err
	}
	if t.Progress != nil && s > 0 {
		t.Progress(fmt.Sprintf("settling %.0fs", s))
	}
	if err := session.Pause(ctx, time.Duration(s*float64(time.Second))); err != nil {
		return engine.Result{}, err
	}
	return engine.Result{Value: &Result{PausedS: s, HeldS: time.Since(began).Seconds()}, Summary: fmt.Sprintf("settled %.1fs", s)}, nil
}
