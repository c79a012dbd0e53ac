package openai

import (
	"testing"

	"github.com/perfdag/perfdag/schema"
)

func TestPromptTruncated(t *testing.T) {
	n := func(v int) *int { return &v }
	rec := func(asked int, prompt, completion *int) schema.RequestRecord {
		return schema.RequestRecord{InputTokens: asked, UsagePrompt: prompt, UsageComplete: completion}
	}
	for _, tc := range []struct {
		name string
		rec  schema.RequestRecord
		ctx  int
		want bool
	}{
		// Measured on the peers' llama-server (-c 16384 -np 4: 4,096 per slot).
		{"20,000 asked, 3,399 kept (llama.cpp cut)", rec(20000, n(3399), n(128)), 4096, true},
		{"the same without a known context", rec(20000, n(3399), n(128)), 0, true},
		{"6,000 asked, 3,842 kept: in the band, short", rec(6000, n(3842), n(4)), 4096, true},
		{"256 asked, 589 counted by a verbose tokenizer", rec(256, n(589), n(128)), 4096, false},
		{"prompt and answer past the context: shifted", rec(1500, n(3900), n(300)), 4096, true},
		// A compact tokenizer (0.85× o200k_base) is no truncation, in the band or not.
		{"compact tokenizer in the band", rec(4000, n(3400), n(128)), 4096, false},
		{"compact tokenizer below the band", rec(1000, n(850), n(128)), 4096, false},
		{"exactly at the context", rec(3000, n(3968), n(128)), 4096, false},
		// Without a known context only a loss no tokenizer explains counts.
		{"60 % without a context is not judged", rec(6000, n(3600), n(4)), 0, false},
		{"no usage", rec(20000, nil, nil), 4096, false},
		// A server that streams usage without counting the prompt says nothing about it.
		{"prompt_tokens 0 is unknown", rec(256, n(0), n(128)), 4096, false},
		{"prompt_tokens 0 without a known context", rec(256, n(0), n(128)), 0, false},
		{"prompt_tokens 0, completion past the context", rec(256, n(0), n(5000)), 4096, false},
		{"a negative count is no count", rec(256, n(-1), n(8)), 4096, false},
		{"nothing asked (replay without a count)", rec(0, n(100), n(8)), 4096, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := PromptTruncated(tc.rec, tc.ctx); got != tc.want {
				t.Errorf("PromptTruncated = %v, want %v", got, tc.want)
			}
		})
	}
}
