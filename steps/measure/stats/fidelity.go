package stats

import (
	"math"
	"sort"

	"github.com/perfdag/perfdag/schema"
)

// UsageDiffThresholdPct is AIPerf's discrepancy threshold: a point whose mean
// |usage_*_diff_pct| exceeds it is flagged usage_discrepancy.
const UsageDiffThresholdPct = 10.0

// MaxErrorMessages bounds the distinct server messages a point keeps per error class.
const MaxErrorMessages = 5

// UnitPct is the unit of the discrepancy metrics.
const UnitPct = "%"

// ResolveBasis returns the token basis a point counts on: the configured one, else server
// when every valid request carried usage.completion_tokens, else o200k_base.
func ResolveBasis(configured string, valid []schema.RequestRecord) string {
	if configured != "" {
		return configured
	}
	if len(valid) == 0 {
		return schema.TokenBasisO200k
	}
	for _, r := range valid {
		if r.UsageComplete == nil {
			return schema.TokenBasisO200k
		}
	}
	return schema.TokenBasisServer
}

// tokenCount is one request's token counts on the point's basis.
type tokenCount struct {
	input, output, reasoning int
	fallback                 bool // server basis asked, but the request carried no usage
}

// countOn counts a record on basis: the server's usage (completion_tokens includes reasoning
// tokens, as OpenAI defines it), the client's counts with a tokenizer file, or the client's
// o200k_base counts (also the fallback of a record without the basis's counts); on an imported
// basis the record's counts are the source tool's, taken as they are.
func countOn(basis string, r schema.RequestRecord) tokenCount {
	if schema.IsTokenizerBasis(basis) {
		if in, out, reasoning, ok := tokenizerCounts(r); ok {
			return tokenCount{input: in, output: out, reasoning: reasoning}
		}
		return tokenCount{input: r.InputTokens, output: r.OutputTokens, reasoning: r.ReasoningTok, fallback: true}
	}
	if basis == schema.TokenBasisServer {
		if r.UsageComplete != nil {
			c := tokenCount{input: r.InputTokens, output: *r.UsageComplete}
			if r.UsageReasoning != nil {
				c.reasoning = min(*r.UsageReasoning, c.output)
				c.output -= c.reasoning
			}
			if n, ok := r.ServerPrompt(); ok {
				c.input = n
			}
			return c
		}
		return tokenCount{input: r.InputTokens, output: r.OutputTokens, reasoning: r.ReasoningTok, fallback: true}
	}
	return tokenCount{input: r.InputTokens, output: r.OutputTokens, reasoning: r.ReasoningTok}
}

// tokenizerCounts are a record's counts with the endpoint's tokenizer file, ok false when it
// has none (another basis, or the library failed on its text).
func tokenizerCounts(r schema.RequestRecord) (input, output, reasoning int, ok bool) {
	if r.TokenizerInput == nil || r.TokenizerOutput == nil || r.TokenizerReasoning == nil {
		return 0, 0, 0, false
	}
	return *r.TokenizerInput, *r.TokenizerOutput, *r.TokenizerReasoning, true
}

// clientCounts are the client's counts the usage discrepancy compares the server's with: the
// tokenizer file's on its basis (where the record has them), else o200k_base.
func clientCounts(basis string, r schema.RequestRecord) (input, output, reasoning int) {
	if schema.IsTokenizerBasis(basis) {
		if in, out, rs, ok := tokenizerCounts(r); ok {
			return in, out, rs
		}
	}
	return r.InputTokens, r.OutputTokens, r.ReasoningTok
}

// diffPct is AIPerf's usage_*_diff_pct of one request: (server − client) / client × 100, the
// client counting on the point's basis when that is a tokenizer file, else o200k_base; ok
// false when either side is missing or the client count is zero.
func diffPct(server *int, client int) (float64, bool) {
	if server == nil || client <= 0 {
		return 0, false
	}
	return float64(*server-client) / float64(client) * 100, true
}

// fidelity fills the point's cross-checks: usage discrepancy, received ISL and truncation,
// error messages, protocol violations, connections and the server's own timings.
func fidelity(p *schema.Point, records, valid []schema.RequestRecord) {
	var isl, cached, prompt, completion, reasoning, conn []float64
	var sPrompt, sPred, sITL, sTPS, gap []float64
	var genTokens, genMs float64
	for _, r := range records {
		if r.Phase != PhaseProfiling {
			continue
		}
		if r.ConnectNs > 0 {
			conn = append(conn, ms(r.ConnectNs))
			p.NewConnections++
			if r.ConnPredialed {
				p.PredialedConnections++
			} else {
				p.ConnectsInTTFT++
			}
		}
		if r.Retried {
			p.Retries++
		}
		if r.PromptTruncated {
			p.TruncatedPrompts++
		}
		for _, v := range r.Violations {
			if p.Violations == nil {
				p.Violations = map[string]int{}
			}
			p.Violations[v]++
		}
		if c := Class(r); c != "" && r.ServerMessage != "" {
			addMessage(p, c, r.ServerMessage)
		}
	}
	for _, r := range valid {
		prompt0, known := r.ServerPrompt()
		if known {
			isl = append(isl, float64(prompt0))
		} else if r.UsageComplete != nil {
			p.UsagePromptUnknown++ // usage without a prompt count: unknown, not a discrepancy
		}
		if r.UsageCached != nil {
			cached = append(cached, float64(*r.UsageCached))
		}
		cIn, cOut, cReason := clientCounts(p.TokenBasis, r)
		if v, ok := diffPct(&prompt0, cIn); known && ok {
			prompt = append(prompt, v)
		}
		if r.UsageComplete != nil && r.UsageReasoning != nil {
			ans := *r.UsageComplete - *r.UsageReasoning
			if v, ok := diffPct(&ans, cOut); ok {
				completion = append(completion, v)
			}
			if v, ok := diffPct(r.UsageReasoning, cReason); ok {
				reasoning = append(reasoning, v)
			}
		} else if v, ok := diffPct(r.UsageComplete, cOut+cReason); ok {
			completion = append(completion, v)
		}
		if t := r.Timings; t != nil {
			p.ServerTimedRequests++
			sPrompt = append(sPrompt, t.PromptMs)
			sPred = append(sPred, t.PredictedMs)
			// predicted_ms runs from the first sampled token to the last: n − 1 gaps, the span
			// the client's ITL divides by OSL − 1. llama.cpp's predicted_per_token_ms divides it
			// by n (1/n low), so the server's ITL is recomputed on the client's definition.
			if t.PredictedN >= 2 && t.PredictedMs > 0 {
				itl := t.PredictedMs / float64(t.PredictedN-1)
				sITL = append(sITL, itl)
				sTPS = append(sTPS, 1000/itl)
				genTokens += float64(t.PredictedN - 1)
				genMs += t.PredictedMs
			}
			gap = append(gap, ms(r.FirstTokenNs-r.StartNs)-t.PromptMs)
		}
	}
	p.ISLReceived, p.CachedTokens = Summarize(isl, UnitTokens), Summarize(cached, UnitTokens)
	p.UsagePromptDiffPct, p.UsageCompletionDiffPct, p.UsageReasoningDiffPct = mean(prompt), mean(completion), mean(reasoning)
	for _, d := range []*float64{p.UsagePromptDiffPct, p.UsageCompletionDiffPct, p.UsageReasoningDiffPct} {
		if d != nil && math.Abs(*d) > UsageDiffThresholdPct {
			p.UsageDiscrepancy = true
		}
	}
	p.ConnectMs = Summarize(conn, UnitMs)
	p.ServerPromptMs, p.ServerPredictedMs = Summarize(sPrompt, UnitMs), Summarize(sPred, UnitMs)
	p.ServerITLMs, p.ServerOutputTokPerUser = Summarize(sITL, UnitMs), Summarize(sTPS, UnitTPSUser)
	p.TTFTMinusServerPromptMs = Summarize(gap, UnitMs)
	if genMs > 0 {
		p.ServerOutputSpeed = schema.F(genTokens / genMs * 1000)
	}
}

// addMessage keeps a distinct server message under its class, at most MaxErrorMessages.
func addMessage(p *schema.Point, class, msg string) {
	if p.ErrorMessages == nil {
		p.ErrorMessages = map[string][]string{}
	}
	have := p.ErrorMessages[class]
	if len(have) >= MaxErrorMessages {
		return
	}
	i := sort.SearchStrings(have, msg)
	if i < len(have) && have[i] == msg {
		return
	}
	have = append(have, "")
	copy(have[i+1:], have[i:])
	have[i] = msg
	p.ErrorMessages[class] = have
}

func mean(v []float64) *float64 {
	if len(v) == 0 {
		return nil
	}
	s := 0.0
	for _, x := range v {
		s += x
	}
	return schema.F(s / float64(len(v)))
}
