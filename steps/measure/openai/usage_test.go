package openai_test

import (
	"testing"

	"github.com/perfdag/perfdag/steps/measure/openai"
)

// TestParseUsageAndTimings: llama.cpp's final chunk carries usage with cached tokens and its
// own timings; both reach the chunk.
func TestParseUsageAndTimings(t *testing.T) {
	data := `{"choices":[],"usage":{"prompt_tokens":576,"completion_tokens":128,"prompt_tokens_details":{"cached_tokens":12}},` +
		`"timings":{"prompt_n":564,"prompt_ms":41.5,"predicted_n":128,"predicted_ms":900.2,"predicted_per_token_ms":7.03,"predicted_per_second":142.2}}`
	c, err := openai.ParseChunk([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if c.Usage == nil || *c.Usage.PromptTokens != 576 || c.Usage.CachedTokens == nil || *c.Usage.CachedTokens != 12 {
		t.Fatalf("usage %+v", c.Usage)
	}
	if tm := c.Timings; tm == nil || tm.PromptN != 564 || tm.PromptMs != 41.5 || tm.PredictedN != 128 || tm.PredictedPerTokenMs != 7.03 {
		t.Fatalf("timings %+v", c.Timings)
	}
	two, err := openai.ParseChunk([]byte(`{"choices":[{"delta":{"content":"a"}},{"delta":{"content":"b"}}]}`))
	if err != nil || two.Choices != 2 {
		t.Fatalf("choices = %d (%v), want 2", two.Choices, err)
	}
}
