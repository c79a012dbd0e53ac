package openai_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/openai"
	"github.com/perfdag/perfdag/steps/measure/stats"
	"github.com/perfdag/perfdag/steps/measure/tokens"
)

// TestProtocolViolations: each violation, served for real, is flagged on the record and
// counted on the point, and what it carried is never counted as output.
func TestProtocolViolations(t *testing.T) {
	const answer = " the quick brown fox"
	twoChoices := `{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" the quick brown fox"}},{"index":1,"delta":{"content":" jumps over the lazy dog again and again"}}]}`
	stream := func(extra ...step) []step {
		s := []step{sseData(roleChunk), sseData(contentChunk(answer)), sseData(finishChunk), sseData(usageChunk(3, 4)), sseData(doneMsg)}
		return append(s, extra...)
	}
	cases := []struct {
		name  string
		json  string // a non-streamed body instead of the steps
		steps []step
		want  string // "" for a clean response
	}{
		{name: "clean", steps: stream()},
		{name: "non-streamed reply", want: schema.ViolationNotStreamed,
			json: `{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":" the quick brown fox"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":4}}`},
		{name: "content after DONE", want: schema.ViolationAfterDone,
			steps: stream(sseData(contentChunk(" and a great deal more text that must not count"))),
		},
		{name: "stream held open after DONE", want: schema.ViolationHeldOpen, steps: stream(step{raw: stall})},
		{name: "two choices in a chunk", want: schema.ViolationMultiChoice,
			steps: []step{sseData(roleChunk), sseData(twoChoices), sseData(finishChunk), sseData(usageChunk(3, 4)), sseData(doneMsg)}},
		{name: "usage far off the text", want: schema.ViolationUsageFarOff,
			steps: []step{sseData(roleChunk), sseData(contentChunk(answer)), sseData(finishChunk), sseData(usageChunk(3, 400)), sseData(doneMsg)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := scripted(t, http.StatusOK, c.steps...)
			if c.json != "" {
				srv = jsonServer(t, c.json)
			}
			cl := newClient(t, openai.Options{BaseURL: srv.URL})
			res := cl.Stream(context.Background(), openai.Request{Body: body(4), Phase: stats.PhaseProfiling})
			rec := res.Record
			if rec.ErrorClass != "" {
				t.Fatalf("error %s: %s", rec.ErrorClass, rec.Error)
			}
			var want []string
			if c.want != "" {
				want = []string{c.want}
			}
			if !slices.Equal(rec.Violations, want) {
				t.Errorf("violations %q, want %q", rec.Violations, want)
			}
			if res.Content != answer {
				t.Errorf("content %q, want %q (nothing past [DONE] or past the first choice counts)", res.Content, answer)
			}
			if n := tokens.Count(answer); rec.OutputTokens != n {
				t.Errorf("output tokens %d, want %d", rec.OutputTokens, n)
			}
			if rec.EndNs < rec.LastContentNs || rec.EndNs <= 0 {
				t.Errorf("end %d before last content %d", rec.EndNs, rec.LastContentNs)
			}
			p := stats.Compute([]schema.RequestRecord{rec}, stats.Options{})
			if c.want == "" && len(p.Violations) != 0 {
				t.Errorf("point violations %v, want none", p.Violations)
			}
			if c.want != "" && (p.Violations[c.want] != 1 || len(p.Violations) != 1) {
				t.Errorf("point violations %v, want %s: 1", p.Violations, c.want)
			}
		})
	}
}

// jsonServer answers every request with one JSON completion, ignoring stream: true.
func jsonServer(t *testing.T, body string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(strings.TrimSpace(body)))
	}))
	t.Cleanup(srv.Close)
	return srv
}
