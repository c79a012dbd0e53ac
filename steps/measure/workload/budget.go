// Package workload turns a cell's workload (an AA shape or custom token budgets, synthetic or
// dataset replay) into the prompts and request bodies run-shape sends: synthetic prompts that
// hit the input budget exactly in o200k_base and differ per request, mooncake_trace replay,
// AA request parameters, and generation of natural-text replay datasets.
package workload

import (
	"fmt"
	"strings"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/catalog"
)

// Workload modes, as written in schema.Workload.Mode.
const (
	ModeSynthetic = "synthetic"
	ModeReplay    = "dataset-replay"
)

// ShapeCustom names a workload whose budgets are given by input_tokens and output_tokens.
const ShapeCustom = "custom"

// MinInputTokens is the smallest synthetic input budget: the per-request prefix that keeps
// prompts unique must fit in it.
const MinInputTokens = 32

// Budget is what one request of a workload asks for, in o200k_base tokens.
type Budget struct {
	Shape        string // catalog shape name, or "custom"
	InputTokens  int    // prompt length
	OutputTokens int    // answer length: max_tokens = min_tokens
}

// Shapes lists the valid values of workload.shape, for errors and help text.
func Shapes() []string {
	var names []string
	for _, s := range catalog.Get().Shapes {
		names = append(names, s.Name)
	}
	return append(names, ShapeCustom)
}

// Resolve returns a workload's token budget: the catalog shape's, with an explicit
// input_tokens or output_tokens taking precedence; a custom workload must give both.
func Resolve(w schema.Workload) (Budget, error) {
	if w.InputTokens < 0 {
		return Budget{}, fmt.Errorf("workload.input_tokens: %d is negative; want a positive token count", w.InputTokens)
	}
	if w.OutputTokens < 0 {
		return Budget{}, fmt.Errorf("workload.output_tokens: %d is negative; want a positive token count", w.OutputTokens)
	}
	valid := strings.Join(Shapes(), ", ")
	switch w.Shape {
	case "":
		switch {
		case w.InputTokens == 0 && w.OutputTokens == 0:
			return Budget{}, fmt.Errorf("workload: set shape (one of %s) or input_tokens and output_tokens", valid)
		case w.InputTokens == 0:
			return Budget{}, fmt.Errorf("workload.input_tokens: required when no shape is set (output_tokens is %d)", w.OutputTokens)
		case w.OutputTokens == 0:
			return Budget{}, fmt.Errorf("workload.output_tokens: required when no shape is set (input_tokens is %d)", w.InputTokens)
		}
		return Budget{Shape: ShapeCustom, InputTokens: w.InputTokens, OutputTokens: w.OutputTokens}, nil
	case ShapeCustom:
		if w.InputTokens == 0 {
			return Budget{}, fmt.Errorf("workload.input_tokens: required when shape is %s", ShapeCustom)
		}
		if w.OutputTokens == 0 {
			return Budget{}, fmt.Errorf("workload.output_tokens: required when shape is %s", ShapeCustom)
		}
		return Budget{Shape: ShapeCustom, InputTokens: w.InputTokens, OutputTokens: w.OutputTokens}, nil
	}
	s, ok := catalog.ShapeByName(w.Shape)
	if !ok {
		return Budget{}, fmt.Errorf("workload.shape: unknown shape %q; valid shapes: %s", w.Shape, valid)
	}
	b := Budget{Shape: s.Name, InputTokens: s.InputTokens, OutputTokens: s.OutputTokens}
	if w.InputTokens > 0 {
		b.InputTokens = w.InputTokens
	}
	if w.OutputTokens > 0 {
		b.OutputTokens = w.OutputTokens
	}
	return b, nil
}

// mode returns the workload's mode with the default applied, or an error naming the field.
func mode(w schema.Workload) (string, error) {
	switch w.Mode {
	case "", ModeSynthetic:
		if w.Dataset != "" {
			return "", fmt.Errorf("workload.dataset: %q is only read in mode %s (mode is %s)", w.Dataset, ModeReplay, ModeSynthetic)
		}
		return ModeSynthetic, nil
	case ModeReplay:
		if w.Dataset == "" {
			return "", fmt.Errorf("workload.dataset: required in mode %s (a mooncake_trace JSONL with text_input)", ModeReplay)
		}
		if w.InputTokens > 0 {
			return "", fmt.Errorf("workload.input_tokens: not used in mode %s; the prompts and their lengths come from the dataset", ModeReplay)
		}
		return ModeReplay, nil
	}
	return "", fmt.Errorf("workload.mode: unknown mode %q; valid modes: %s, %s", w.Mode, ModeSynthetic, ModeReplay)
}

// Check validates a workload the way Open will use it, without opening anything: synthetic
// workloads need a budget, replay workloads a dataset (their budgets come from its lines).
func Check(w schema.Workload) error {
	m, err := mode(w)
	if err != nil {
		return err
	}
	if m == ModeReplay {
		if w.Shape != "" || w.OutputTokens > 0 {
			_, err := Resolve(schema.Workload{Shape: w.Shape, OutputTokens: w.OutputTokens, InputTokens: 1})
			return err
		}
		return nil
	}
	b, err := Resolve(w)
	if err != nil {
		return err
	}
	if b.InputTokens < MinInputTokens {
		return fmt.Errorf("workload.input_tokens: %d is below the synthetic minimum of %d (room for the unique per-request prefix)", b.InputTokens, MinInputTokens)
	}
	return nil
}
