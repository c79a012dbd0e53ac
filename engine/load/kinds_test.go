package load

import (
	"context"
	"testing"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/schema"
)

// runResult is the typed result gates on the fake run kind compile against.
type runResult struct {
	NumPrompts   int     `json:"num_prompts"`
	Concurrency  int     `json:"concurrency"`
	TTFOCoverage float64 `json:"ttfo_coverage"`
	Reasoning    bool    `json:"reasoning"`
}

type execParams struct {
	Command []string        `yaml:"command"`
	Timeout schema.Duration `yaml:"timeout,omitempty"`
}

func noop(context.Context, *engine.Task) (engine.Result, error) { return engine.Result{}, nil }

func testRegistry(t testing.TB) *engine.Registry {
	t.Helper()
	r, err := engine.NewRegistry(
		engine.Kind{Name: "run-shape", Scope: engine.ScopePoint, Version: "1", HoldsEndpoint: true, Result: runResult{}, Run: noop},
		engine.Kind{Name: "settle", Scope: engine.ScopePoint, Version: "1", HoldsEndpoint: true, Run: noop},
		engine.Kind{Name: "prewarm", Scope: engine.ScopeCell, Version: "1", HoldsEndpoint: true, Run: noop},
		engine.Kind{Name: "aggregate", Scope: engine.ScopeCampaign, Version: "1", Run: noop},
		engine.Kind{Name: "exec", Scope: engine.ScopeCampaign, AnyScope: true, Version: "1", Params: func() any { return &execParams{} }, Run: noop},
	)
	if err != nil {
		t.Fatal(err)
	}
	r.Default = func(c *schema.Campaign) []schema.PipelineStep {
		return []schema.PipelineStep{
			{ID: "prewarm", Kind: "prewarm"},
			{ID: "settle", Kind: "settle", Needs: []string{"prewarm"}},
			{ID: "run-shape", Kind: "run-shape", Needs: []string{"settle"}},
			{ID: "aggregate", Kind: "aggregate", Needs: []string{"run-shape"}},
		}
	}
	return r
}
