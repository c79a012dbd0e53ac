package sim

import (
	"math"
	"math/rand/v2"
)

// piece is one streamed chunk: its text, whether it goes to the reasoning field, and how
// many tokens it carries (chunk_tokens groups several).
type piece struct {
	text      string
	reasoning bool
	tokens    int
}

// plan is everything decided about a request when it arrives, from a generator seeded by
// (seed, arrival sequence): the same sequence number always gets the same plan.
type plan struct {
	fault       string
	budget      int
	unanswered  bool
	reasoningN  int // tokens of reasoning (for think: including the tags)
	answerN     int
	finish      string
	pieces      []piece
	reasonField string  // delta field for reasoning pieces ("" for think: they go in content)
	ttftFactor  float64 // the request's TTFT spread, exp(ttft_sigma × Z)
}

// request is what the simulator reads from a chat-completions body.
type request struct {
	budget    int
	minTokens int
	ignoreEOS bool
}

// makePlan decides fault, lengths and text for request number seq.
func makePlan(p *params, v *vocabulary, seq uint64, r request) plan {
	rng := rand.New(rand.NewPCG(uint64(p.seed), seq))
	pl := plan{budget: r.budget}
	u := rng.Float64()
	cum := 0.0
	for _, f := range p.faults {
		cum += f.frac
		if f.frac > 0 && u < cum {
			pl.fault = f.name
			break
		}
	}
	reasoningCost := 0
	if p.reasoning {
		reasoningCost = p.reasoningTokens
		if p.reasoningField == "think" {
			reasoningCost += len(v.open) + len(v.close)
		}
		// Low-discrepancy rather than random: the first N arrivals hold exactly
		// floor(N × fraction) unanswered requests, so coverage is predictable at any N.
		pl.unanswered = math.Floor(float64(seq+1)*p.unanswered) > math.Floor(float64(seq)*p.unanswered)
	}
	n := r.budget
	if !pl.unanswered {
		lo := max(min(r.minTokens, r.budget), 1)
		if p.reasoning {
			lo = max(lo, min(reasoningCost+1, r.budget))
		}
		if !r.ignoreEOS {
			n = lo + rng.IntN(r.budget-lo+1)
		}
	}
	pl.finish = "stop"
	if n == r.budget {
		pl.finish = "length"
	}
	if p.reasoning {
		pl.reasoningN = min(reasoningCost, n)
		if pl.unanswered {
			pl.reasoningN = n
		}
	}
	pl.answerN = n - pl.reasoningN
	pl.pieces = buildPieces(p, v, rng, pl.reasoningN, pl.answerN, pl.unanswered)
	if p.reasoningField != "think" {
		pl.reasonField = p.reasoningField
	}
	pl.ttftFactor = 1
	if p.ttftSigma > 0 { // drawn last: a config without spread keeps its earlier draws
		pl.ttftFactor = p.ttftSpread(rng.NormFloat64())
	}
	return pl
}

// buildPieces lays out the token texts and groups them into chunks of chunk_tokens, never
// mixing reasoning and answer in one chunk (as vLLM's reasoning parsers do).
func buildPieces(p *params, v *vocabulary, rng *rand.Rand, reasoningN, answerN int, unanswered bool) []piece {
	type tok struct {
		text      string
		reasoning bool
	}
	toks := make([]tok, 0, reasoningN+answerN)
	word := func() string { return v.words[rng.IntN(len(v.words))] }
	if p.reasoning && p.reasoningField == "think" {
		// <think> words </think> answer, all in content; a request that never answers
		// spends its whole budget inside the think block.
		body := []string{}
		body = append(body, v.open...)
		inner := reasoningN - len(v.open) - len(v.close)
		if unanswered {
			inner = reasoningN - len(v.open)
		}
		for range max(inner, 0) {
			body = append(body, word())
		}
		if !unanswered {
			body = append(body, v.close...)
		}
		for _, t := range body[:min(len(body), reasoningN)] {
			toks = append(toks, tok{t, false})
		}
	} else {
		for range reasoningN {
			toks = append(toks, tok{word(), true})
		}
	}
	for range answerN {
		toks = append(toks, tok{word(), false})
	}
	ct := max(p.chunkTokens, 1)
	var out []piece
	for i := 0; i < len(toks); {
		j := i + 1
		for j < len(toks) && j-i < ct && toks[j].reasoning == toks[i].reasoning {
			j++
		}
		text := ""
		for _, t := range toks[i:j] {
			text += t.text
		}
		out = append(out, piece{text: text, reasoning: toks[i].reasoning, tokens: j - i})
		i = j
	}
	return out
}
