package report

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/perfdag/perfdag/engine/plural"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/stats"
)

// maxMessagesPerClass bounds the server messages the cover quotes for one error class.
const maxMessagesPerClass = 3

// fidelityCaveats states how far the measured numbers can be trusted: what the token counts
// count, whether the server's usage disagrees with the client's count, truncated prompts,
// connection retries, the servers' own error messages and client-vs-server TTFT. Each line
// appears only when it applies.
func fidelityCaveats(v *view) []string {
	var out []string
	bases, imported := map[string]int{}, map[string]int{}
	var fallbacks, fallbackPts, truncated, truncPts, retries, retryPts int
	var discPts, noEngine, unknownReqs, unknownPts, unknownAll int
	var fallbackTok, discTok bool // some of those points count on a tokenizer file
	maxDiff := map[string]float64{}
	msgs := map[string][]string{}
	var gap []float64
	for i := range v.rows {
		r := &v.rows[i]
		switch {
		case schema.IsImportedBasis(r.TokenBasis):
			imported[r.TokenBasis]++
		case r.TokenBasis != "":
			bases[r.TokenBasis]++
		}
		if n := deref(r.TokenBasisFallbacks); n > 0 {
			fallbacks, fallbackPts = fallbacks+n, fallbackPts+1
			fallbackTok = fallbackTok || schema.IsTokenizerBasis(r.TokenBasis)
		}
		if n := deref(r.TruncatedPrompts); n > 0 || hasFlag(r, schema.FlagTruncatedPrompts) {
			truncated, truncPts = truncated+n, truncPts+1
		}
		if n := deref(r.Retries); n > 0 {
			retries, retryPts = retries+n, retryPts+1
		}
		if hasFlag(r, schema.FlagNoEngineMetrics) {
			noEngine++
		}
		prompt, unknown := knownPromptDiff(r)
		switch {
		case unknown > 0:
			unknownReqs, unknownPts = unknownReqs+unknown, unknownPts+1
		case r.UsagePromptDiffPct != nil && prompt == nil:
			unknownAll++
		}
		// the flag stands unless it rests on a prompt count that was never stated (a point
		// measured before prompt_tokens 0 read as unknown): then the known diffs decide
		over := hasFlag(r, schema.FlagUsageDiscrepancy) && (prompt != nil || r.UsagePromptDiffPct == nil)
		for _, d := range []struct {
			name string
			pct  *float64
		}{{"prompt", prompt}, {"completion", r.UsageCompletionDiffPct}, {"reasoning", r.UsageReasoningDiffPct}} {
			if d.pct == nil {
				continue
			}
			a := math.Abs(*d.pct)
			if a > stats.UsageDiffThresholdPct {
				over = true
			}
			if a > math.Abs(maxDiff[d.name]) {
				maxDiff[d.name] = *d.pct
			}
		}
		if over {
			discPts++
			discTok = discTok || schema.IsTokenizerBasis(r.TokenBasis)
		}
		for class, ms := range r.ErrorMessages {
			for _, m := range ms {
				if !slices.Contains(msgs[class], m) {
					msgs[class] = append(msgs[class], m)
				}
			}
		}
		if r.TTFTMinusServerPromptP50Ms != nil {
			gap = append(gap, *r.TTFTMinusServerPromptP50Ms)
		}
	}

	if len(bases) > 0 {
		var parts []string
		for _, b := range slices.Sorted(maps.Keys(bases)) {
			parts = append(parts, fmt.Sprintf("%s (%s)", basisName(b), plural.N(bases[b], "point")))
		}
		s := "Token counts: OSL, ITL and tok/s count " + strings.Join(parts, " and ") + "; ISL is the asked prompt in o200k_base tokens."
		if fallbacks > 0 {
			lacked := "carried no usage"
			if fallbackTok {
				lacked = "carried no usage or no tokenizer count"
			}
			s += fmt.Sprintf(" %s on %s %s and were counted on o200k_base instead (token_basis_fallbacks).", plural.N(fallbacks, "valid request"), plural.N(fallbackPts, "point"), lacked)
		}
		out = append(out, s)
	}
	if len(imported) > 0 {
		out = append(out, importedCountsCaveat(imported))
	}
	if discPts > 0 {
		var parts []string
		for _, k := range []string{"prompt", "completion", "reasoning"} {
			if d, ok := maxDiff[k]; ok && math.Abs(d) > stats.UsageDiffThresholdPct {
				parts = append(parts, fmt.Sprintf("%s %+.1f %%", k, d))
			}
		}
		client := "the o200k_base count"
		if discTok {
			client = "the client's count (the tokenizer file's on tokenizer bases, else o200k_base)"
		}
		s := fmt.Sprintf("Usage discrepancy: on %s the server's usage differs from %s by more than %g %% on average", plural.N(discPts, "point"), client, stats.UsageDiffThresholdPct)
		if len(parts) > 0 {
			s += " (largest: " + strings.Join(parts, ", ") + ")"
		}
		out = append(out, s+"; token throughput depends on which count is used.")
	}
	if unknownPts+unknownAll > 0 {
		var parts []string
		if unknownPts > 0 {
			parts = append(parts, fmt.Sprintf("%s on %s", plural.N(unknownReqs, "valid request"), plural.N(unknownPts, "point")))
		}
		if unknownAll > 0 {
			parts = append(parts, fmt.Sprintf("every request on %s", plural.N(unknownAll, "point")))
		}
		out = append(out, "Prompt usage unknown: the server's usage stated no prompt count (prompt_tokens 0 or absent) for "+strings.Join(parts, " and ")+
			"; their prompt size as received, prompt discrepancy and truncation are unknown, not counted.")
	}
	if truncPts > 0 {
		out = append(out, fmt.Sprintf("Truncated prompts: the server cut %s on %s (its usage shows fewer prompt tokens than were sent, or a prompt and answer longer than its context, which it shifted); those points did not measure the declared ISL.", plural.N(truncated, "prompt"), plural.N(truncPts, "point")))
	}
	if retries > 0 {
		out = append(out, fmt.Sprintf("Connection retries: %s on %s were retried once after the server closed an idle connection.", plural.N(retries, "request"), plural.N(retryPts, "point")))
	}
	for _, class := range slices.Sorted(maps.Keys(msgs)) {
		ms := msgs[class]
		shown := ms
		if len(shown) > maxMessagesPerClass {
			shown = shown[:maxMessagesPerClass]
		}
		var quoted []string
		for _, m := range shown {
			quoted = append(quoted, fmt.Sprintf("%q", clip(m, 120)))
		}
		s := fmt.Sprintf("Server messages (%s): %s", class, strings.Join(quoted, ", "))
		if more := len(ms) - len(shown); more > 0 {
			s += fmt.Sprintf(" and %d more", more)
		}
		out = append(out, s+".")
	}
	if noEngine > 0 {
		out = append(out, fmt.Sprintf("Engine metrics: on %s the server's /metrics held no known engine family (vLLM, SGLang, llama.cpp, TensorRT-LLM, Dynamo), so KV-cache, running and queued figures are missing there, not zero.", plural.N(noEngine, "point")))
	}
	if len(gap) > 0 {
		lo, hi := slices.Min(gap), slices.Max(gap)
		out = append(out, fmt.Sprintf("Client vs server TTFT: on %s the client's TTFT p50 exceeds the server's own prompt time by %s ms (queueing, network and streaming overhead).",
			plural.N(len(gap), "point"), msRange(lo, hi)))
	}
	return out
}

// knownPromptDiff is the row's prompt usage discrepancy over the requests whose usage stated a
// prompt count, and how many valid requests had none. A mean of exactly −100 % says the server
// stated 0 on every request (server counts are never negative): a point measured before such a
// count read as unknown. That is no count at all, not a discrepancy: nil.
func knownPromptDiff(r *schema.AtlasRow) (*float64, int) {
	d := r.UsagePromptDiffPct
	if d != nil && *d <= -100 {
		return nil, deref(r.UsagePromptUnknown)
	}
	return d, deref(r.UsagePromptUnknown)
}

func basisName(b string) string {
	switch b {
	case schema.TokenBasisServer:
		return "the server's usage"
	case schema.TokenBasisO200k:
		return "the client's o200k_base count"
	}
	if schema.IsTokenizerBasis(b) {
		return "the client's count with tokenizer file " + strings.TrimPrefix(b, schema.TokenizerBasisPrefix)
	}
	return b
}

func msRange(lo, hi float64) string {
	if lo == hi {
		return fmt.Sprintf("%.1f", lo)
	}
	return fmt.Sprintf("%.1f to %.1f", lo, hi)
}

func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// clip shortens s to at most n runes, marking the cut.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-3]) + "..."
}
