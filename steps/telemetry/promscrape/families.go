package promscrape

import (
	"sort"
	"strings"

	"github.com/perfdag/perfdag/schema"
)

// Engine metric family names, as Engines reports them.
const (
	EngineVLLM     = "vllm"
	EngineSGLang   = "sglang"
	EngineLlamaCpp = "llamacpp"
	EngineTRTLLM   = "trtllm"
	EngineDynamo   = "dynamo"
	// EnginesNone is what a point's metrics_families says when its scrapes held no known family.
	EnginesNone = schema.MetricsFamiliesNone
)

// enginePrefixes maps metric-name prefixes to the engine that exports them: vLLM `vllm:`, SGLang
// `sglang:`, llama.cpp `llamacpp:`, TensorRT-LLM `trtllm_` (Dynamo's pass-through; `trtllm:` in
// Dynamo 0.7 docs), Dynamo `dynamo_frontend_` / `dynamo_component_` (reference/telemetry.md §1.6).
var enginePrefixes = []struct{ prefix, engine string }{
	{"vllm:", EngineVLLM},
	{"sglang:", EngineSGLang},
	{"llamacpp:", EngineLlamaCpp},
	{"trtllm:", EngineTRTLLM},
	{"trtllm_", EngineTRTLLM},
	{"dynamo_frontend_", EngineDynamo},
	{"dynamo_component_", EngineDynamo},
}

// Engines returns the engines whose metric families the scrape holds, sorted; nil when none.
func (s *Scrape) Engines() []string {
	if s == nil {
		return nil
	}
	seen := map[string]bool{}
	for name := range s.Families {
		for _, p := range enginePrefixes {
			if strings.HasPrefix(name, p.prefix) {
				seen[p.engine] = true
				break
			}
		}
	}
	return sortedKeys(seen)
}

// FamiliesOf is a point's metrics_families from the readings sampled during its window: the
// engines any scrape recognised, comma-separated and sorted; EnginesNone when no scrape held a
// known family (or no scrape succeeded), so a report says so instead of showing empty rows.
func FamiliesOf(readings []Reading) string {
	seen := map[string]bool{}
	for _, r := range readings {
		for _, f := range r.Families {
			seen[f] = true
		}
	}
	if len(seen) == 0 {
		return EnginesNone
	}
	return strings.Join(sortedKeys(seen), ",")
}

func sortedKeys(m map[string]bool) []string {
	if len(m) == 0 {
		return nil
	}
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
