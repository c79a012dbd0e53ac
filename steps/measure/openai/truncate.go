package openai

import "github.com/perfdag/perfdag/schema"

// Bounds of the truncation rule. o200k_base is among the most compact tokenizers for the text
// perfdag sends: model tokenizers count it at about 0.9–1.4× (Llama 3, Qwen, Gemma, DeepSeek
// near 1×, 32k SentencePiece vocabularies well above), and the chat template only adds tokens.
const (
	// LostPromptRatio: a server count under half the asked o200k_base count cannot be a
	// tokenizer difference — the server dropped part of the prompt.
	LostPromptRatio = 0.5
	// BandPromptRatio: under 80 % of the asked count while the prompt fills at least half the
	// context — where a server that cuts an oversized prompt leaves it (llama.cpp keeps
	// n_keep + half-context blocks: between n_ctx/2 and n_ctx).
	BandPromptRatio = 0.8
)

// PromptTruncated reports whether the server processed less of the request than was sent,
// judged from its own usage against the asked prompt (o200k_base tokens) and the context one
// request may fill (contextLen in server tokens, 0 when unknown):
//
//   - prompt + completion > contextLen: the request ran past its context, so the server
//     dropped tokens (llama.cpp shifts the context without --no-context-shift);
//   - prompt < LostPromptRatio × asked: far fewer tokens than any tokenizer counts;
//   - prompt ≥ contextLen/2 and prompt < BandPromptRatio × asked: a prompt left in the band a
//     cut leaves, short of what was sent.
//
// The rule compares the server's count with the server's own context, and with the asked
// size only at ratios no tokenizer reaches, so a verbose or compact tokenizer is no truncation.
// Without a prompt count nothing can be said (false): missing usage, or a prompt_tokens of 0,
// which no server processing a prompt reports (schema.RequestRecord.ServerPrompt).
func PromptTruncated(rec schema.RequestRecord, contextLen int) bool {
	n, ok := rec.ServerPrompt()
	if !ok {
		return false
	}
	prompt, asked := float64(n), float64(rec.InputTokens)
	if contextLen > 0 {
		used := prompt
		if rec.UsageComplete != nil {
			used += float64(*rec.UsageComplete)
		}
		if used > float64(contextLen) {
			return true
		}
	}
	if asked <= 0 {
		return false
	}
	if prompt < LostPromptRatio*asked {
		return true
	}
	return contextLen > 0 && prompt >= float64(contextLen)/2 && prompt < BandPromptRatio*asked
}
