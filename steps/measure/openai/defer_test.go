package openai_test

import (
	"context"
	"net/http"
	"reflect"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/openai"
)

// TestDeferredCountsMatchInline: a client that defers token counts returns records without
// them, and CountTokens on the Result's texts then gives exactly what a counting client
// records — counts, usage mismatch, and the usage_far_off violation, once.
func TestDeferredCountsMatchInline(t *testing.T) {
	srv := scripted(t, http.StatusOK, sseData(roleChunk), sseData(contentChunk(" hello")), sseData(contentChunk(" there")),
		sseData(finishChunk), sseData(usageChunk(3, 40)), sseData(doneMsg))
	defer srv.Close()
	counted := newClient(t, openai.Options{BaseURL: srv.URL}).Stream(context.Background(), openai.Request{Body: body(2)})
	deferring := newClient(t, openai.Options{BaseURL: srv.URL, DeferCounts: true})
	if !deferring.DefersCounts() {
		t.Fatal("DefersCounts() = false")
	}
	res := deferring.Stream(context.Background(), openai.Request{Body: body(2)})
	rec := res.Record
	if rec.OutputTokens != 0 || rec.UsageMismatch || len(rec.Violations) != 0 {
		t.Fatalf("deferred record already counted: %d tokens, mismatch %v, violations %v", rec.OutputTokens, rec.UsageMismatch, rec.Violations)
	}
	for range 2 {
		openai.CountTokens(&rec, res.Content, res.Reasoning)
	}
	want := counted.Record
	if want.OutputTokens != 2 || !want.UsageMismatch || !reflect.DeepEqual(want.Violations, []string{schema.ViolationUsageFarOff}) {
		t.Fatalf("counting client recorded %d tokens, mismatch %v, violations %v: the case does not exercise the usage checks", want.OutputTokens, want.UsageMismatch, want.Violations)
	}
	if rec.OutputTokens != want.OutputTokens || rec.ReasoningTok != want.ReasoningTok || rec.UsageMismatch != want.UsageMismatch || !reflect.DeepEqual(rec.Violations, want.Violations) {
		t.Errorf("deferred then counted: %d/%d tokens, mismatch %v, violations %v; inline: %d/%d, %v, %v",
			rec.OutputTokens, rec.ReasoningTok, rec.UsageMismatch, rec.Violations, want.OutputTokens, want.ReasoningTok, want.UsageMismatch, want.Violations)
	}
}
