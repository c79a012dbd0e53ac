// Package steps holds every inference-domain piece of perfdag: one package per step kind and
// the domain libraries they share. This file is the registry: adding a step kind is one line
// in Kinds.
package steps

import (
	"context"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/exec"
)

// Kinds lists every step kind perfdag ships.
func Kinds() []engine.Kind {
	return []engine.Kind{
		exec.Kind,
	}
}

// Registry returns the step registry with the default pipeline and run-wide setup.
func Registry() (*engine.Registry, error) {
	r, err := engine.NewRegistry(Kinds()...)
	if err != nil {
		return nil, err
	}
	r.Default = DefaultPipeline
	r.Setup = setup
	return r, nil
}

// setup starts what a run needs beyond its steps (in-process simulators for sim:// endpoints).
func setup(ctx context.Context, c *schema.Campaign) (any, func(), error) {
	return nil, func() {}, nil
}
