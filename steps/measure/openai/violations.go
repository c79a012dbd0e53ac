package openai

import (
	"slices"

	"github.com/perfdag/perfdag/schema"
)

// Usage far off: the server's completion count and the o200k_base count of the text differ
// by more than usageFarOffRatio of the o200k_base count and by more than usageFarOffMin
// tokens (a tokenizer difference is tens of percent; a server that reports the budget, or
// its own hidden tokens, as usage is off by multiples).
const (
	usageFarOffRatio = 0.5
	usageFarOffMin   = 8
)

// violations lists the protocol violations one response showed, in a fixed order; usage far
// off the text, which needs the token counts, is added by CountTokens.
// cancelled: the run ended while the stream was being drained, which is not the server's doing.
func violations(x exchange, a analysis, cancelled bool) []string {
	var v []string
	if x.notStreamed {
		v = append(v, schema.ViolationNotStreamed)
	}
	if x.afterDone {
		v = append(v, schema.ViolationAfterDone)
	}
	if x.drained && !cancelled {
		v = append(v, schema.ViolationHeldOpen)
	}
	if a.multiChoice {
		v = append(v, schema.ViolationMultiChoice)
	}
	return v
}

// CountTokens fills a record's o200k_base counts from the texts its Result carried (answer
// and reasoning), and what depends on them: the usage mismatch and the usage_far_off
// violation. Stream does this itself unless the client defers counts (Options.DeferCounts);
// a second call changes nothing.
func CountTokens(rec *schema.RequestRecord, content, reasoning string) {
	rec.OutputTokens = countTokens(content)
	rec.ReasoningTok = countTokens(reasoning)
	rec.UsageMismatch = rec.UsageComplete != nil && Mismatch(rec.OutputTokens+rec.ReasoningTok, *rec.UsageComplete)
	if usageFarOff(*rec) && !slices.Contains(rec.Violations, schema.ViolationUsageFarOff) {
		rec.Violations = append(rec.Violations, schema.ViolationUsageFarOff)
	}
}

// usageFarOff compares the server's usage with the o200k_base count of the streamed text:
// the answer alone when the server splits out reasoning tokens, else answer plus reasoning.
func usageFarOff(rec schema.RequestRecord) bool {
	if rec.UsageComplete == nil {
		return false
	}
	server, client := *rec.UsageComplete, rec.OutputTokens+rec.ReasoningTok
	if rec.UsageReasoning != nil {
		// The server split out reasoning tokens (streamed or hidden): compare the answers.
		server -= *rec.UsageReasoning
		client = rec.OutputTokens
	}
	if client <= 0 {
		return false // nothing streamed: the record is empty_response, not a usage question
	}
	diff := server - client
	if diff < 0 {
		diff = -diff
	}
	return diff > usageFarOffMin && float64(diff) > usageFarOffRatio*float64(client)
}
