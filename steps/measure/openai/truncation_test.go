package openai_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/openai"
	"github.com/perfdag/perfdag/steps/measure/stats"
)

// Issue 20: a server that streams correct answers but reports usage.prompt_tokens 0, or no
// usage at all, says nothing about the prompt: its records are not prompt_truncated and its
// point counts no truncated prompt. A server whose count is far below what was sent is still
// flagged, record and point.
func TestUnknownPromptCountIsNoTruncation(t *testing.T) {
	const asked, requests = 256, 3
	for _, tc := range []struct {
		name  string
		usage []step // what the server sends between the finish chunk and [DONE]
		want  bool
	}{
		{"prompt_tokens 0", []step{sseData(usageChunk(0, 2))}, false},
		{"no usage", nil, false},
		{"usage without prompt_tokens", []step{sseData(`{"choices":[],"usage":{"completion_tokens":2}}`)}, false},
		{"a count a tokenizer explains", []step{sseData(usageChunk(asked*2, 2))}, false},
		{"prompt cut to 10 tokens", []step{sseData(usageChunk(10, 2))}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			steps := append([]step{sseData(roleChunk), sseData(contentChunk(" the")), sseData(contentChunk(" and")), sseData(finishChunk)}, tc.usage...)
			srv := scripted(t, http.StatusOK, append(steps, sseData(doneMsg))...)
			cl := newClient(t, openai.Options{BaseURL: srv.URL})
			var recs []schema.RequestRecord
			for i := range requests {
				rec := cl.Stream(context.Background(), openai.Request{Index: i, Phase: stats.PhaseProfiling, Body: body(2), InputTokens: asked}).Record
				if rec.ErrorClass != "" || rec.OutputTokens != 2 {
					t.Fatalf("request %d: %s %s, %d output tokens: the server's answer is correct", i, rec.ErrorClass, rec.Error, rec.OutputTokens)
				}
				if rec.PromptTruncated != tc.want {
					t.Errorf("request %d: prompt_truncated %v with usage.prompt_tokens %v for %d asked, want %v", i, rec.PromptTruncated, deref(rec.UsagePrompt), asked, tc.want)
				}
				recs = append(recs, rec)
			}
			want := 0
			if tc.want {
				want = requests
			}
			if p := stats.Compute(recs, stats.Options{Concurrency: 1}); p.TruncatedPrompts != want {
				t.Errorf("point truncated_prompts %d, want %d", p.TruncatedPrompts, want)
			}
		})
	}
}

// deref prints a usage count: the value, or "missing".
func deref(p *int) any {
	if p == nil {
		return "missing"
	}
	return *p
}
