package openai_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/endpoint"
	"github.com/perfdag/perfdag/steps/measure/openai"
)

// step is one action of a scripted server: wait, then write raw SSE text and flush.
// Two raw values are actions: abort (cut the connection) and stall (send nothing more).
type step struct {
	wait time.Duration
	raw  string
}

const (
	abort = "\x00abort"
	stall = "\x00stall"
)

func sseData(payload string) step { return step{raw: "data: " + payload + "\n\n"} }

func after(d time.Duration, s step) step { s.wait = d; return s }

const (
	roleChunk     = `{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`
	roleNullChunk = `{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":null},"finish_reason":null}]}`
	finishChunk   = `{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"length"}]}`
	doneMsg       = "[DONE]"
)

func contentChunk(s string) string {
	b, _ := json.Marshal(s)
	return `{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":` + string(b) + `},"finish_reason":null}]}`
}

func reasoningChunk(s string) string {
	b, _ := json.Marshal(s)
	return `{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"reasoning_content":` + string(b) + `},"finish_reason":null}]}`
}

func usageChunk(prompt, completion int) string {
	b, _ := json.Marshal(map[string]any{"choices": []any{}, "usage": map[string]int{"prompt_tokens": prompt, "completion_tokens": completion}})
	return string(b)
}

// scripted serves status and, for a 2xx status, the steps as an event stream. It also checks
// the request the client sent: the streaming switches must be on.
func scripted(t *testing.T, status int, steps ...step) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body["stream"] != true {
			http.Error(w, "want stream: true", http.StatusBadRequest)
			return
		}
		if so, _ := body["stream_options"].(map[string]any); so["include_usage"] != true {
			http.Error(w, "want stream_options.include_usage", http.StatusBadRequest)
			return
		}
		if status != http.StatusOK {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = w.Write([]byte(`{"error":{"message":"scripted failure","code":` + http.StatusText(status) + `}}`))
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		_ = rc.Flush()
		for _, s := range steps {
			select {
			case <-time.After(s.wait):
			case <-r.Context().Done():
				return
			}
			switch s.raw {
			case abort:
				panic(http.ErrAbortHandler)
			case stall:
				<-r.Context().Done()
				return
			}
			_, _ = w.Write([]byte(s.raw))
			_ = rc.Flush()
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// newClient builds a client for a test and closes it at the end.
func newClient(t testing.TB, o openai.Options) *openai.Client {
	t.Helper()
	cl, err := openai.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func body(maxTokens int) []byte {
	b, _ := json.Marshal(map[string]any{"model": "m", "messages": []map[string]string{{"role": "user", "content": "hi"}}, "max_tokens": maxTokens})
	return b
}

func TestFirstTokenIgnoresRoleChunks(t *testing.T) {
	const gap = 40 * time.Millisecond
	cases := []struct {
		name          string
		first         string
		reasoning     bool
		wantTTFO      time.Duration
		wantChunks    int
		wantReasoning int
	}{
		{"empty role chunk at once", roleChunk, false, gap, 2, 0},
		{"null content first chunk", roleNullChunk, false, gap, 2, 0},
		{"reasoning first", roleChunk, true, 2 * gap, 2, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			firstText := contentChunk(" the")
			if c.reasoning {
				firstText = reasoningChunk(" of")
			}
			srv := scripted(t, http.StatusOK, sseData(c.first), after(gap, sseData(firstText)),
				after(gap, sseData(contentChunk(" and"))), sseData(finishChunk), sseData(usageChunk(3, 2)), sseData(doneMsg))
			cl := newClient(t, openai.Options{BaseURL: srv.URL + "/v1/"})
			rec := cl.Stream(context.Background(), openai.Request{Body: body(2), Phase: "profiling"}).Record
			if rec.ErrorClass != "" {
				t.Fatalf("error %s: %s", rec.ErrorClass, rec.Error)
			}
			// Structure, not a time window: the server sends the role chunk at once and each
			// later chunk only after gap, so TTFT (first token of any kind) and TTFO (first
			// answer token) can never be below the time the server waited before sending
			// them (a counted role chunk would put TTFT near zero), and they must be the
			// stamps of chunk 0 and of the first answer chunk. How late a loaded machine
			// delivers is not this test's claim (BenchmarkFidelity reports it).
			if len(rec.ChunkNs) != c.wantChunks {
				t.Fatalf("chunks = %d, want %d content/reasoning chunks (the role chunk is not one)", len(rec.ChunkNs), c.wantChunks)
			}
			ttft := time.Duration(rec.FirstTokenNs - rec.StartNs)
			ttfo := time.Duration(rec.FirstOutputNs - rec.StartNs)
			if ttft < gap {
				t.Errorf("TTFT = %v, below the %v the server waited before the first token: the role chunk sent at once must not count", ttft, gap)
			}
			if ttfo < c.wantTTFO {
				t.Errorf("TTFO = %v, below the %v the server waited before the first answer token", ttfo, c.wantTTFO)
			}
			answer := 0
			if c.reasoning {
				answer = 1
			}
			if rec.FirstTokenNs != rec.ChunkNs[0] || rec.FirstOutputNs != rec.ChunkNs[answer] {
				t.Errorf("first token %d, first output %d; want the stamps of chunk 0 and of the first answer chunk %d in %v", rec.FirstTokenNs, rec.FirstOutputNs, answer, rec.ChunkNs)
			}
			if !slices.IsSorted(rec.ChunkNs) || rec.LastContentNs != rec.ChunkNs[len(rec.ChunkNs)-1] {
				t.Errorf("chunk stamps %v (last content %d): want them in order, ending at the last one", rec.ChunkNs, rec.LastContentNs)
			}
			if rec.ReasoningTok != c.wantReasoning || rec.OutputTokens+rec.ReasoningTok != 2 || rec.UsageComplete == nil || *rec.UsageComplete != 2 || rec.UsageMismatch {
				t.Errorf("tokens out %d reasoning %d usage %v mismatch %v; want %d reasoning, 2 in all, usage 2",
					rec.OutputTokens, rec.ReasoningTok, rec.UsageComplete, rec.UsageMismatch, c.wantReasoning)
			}
			if rec.RequestedOut != 2 || rec.FinishReason != "length" || rec.Status != 200 || rec.HeadersNs < rec.StartNs {
				t.Errorf("requested %d finish %q status %d headers %d", rec.RequestedOut, rec.FinishReason, rec.Status, rec.HeadersNs)
			}
		})
	}
}

func TestErrorClasses(t *testing.T) {
	tok := sseData(contentChunk(" the"))
	cases := []struct {
		name   string
		status int
		steps  []step
		want   string
	}{
		{"complete", 200, []step{sseData(roleChunk), tok, sseData(finishChunk), sseData(usageChunk(1, 1)), sseData(doneMsg)}, ""},
		{"finish without DONE is complete", 200, []step{tok, sseData(finishChunk)}, ""},
		{"HTTP 500", 500, nil, schema.ErrorHTTP},
		{"HTTP 400", 400, nil, schema.ErrorHTTP},
		{"HTTP 429", 429, nil, schema.ErrorRateLimit},
		{"SSE error event", 200, []step{tok, {raw: "event: error\ndata: {\"message\":\"engine dead\"}\n\n"}}, schema.ErrorSSE},
		{"in-band error with HTTP 200", 200, []step{tok, sseData(`{"error":{"code":500,"message":"boom","type":"server_error"}}`)}, schema.ErrorInBand},
		{"malformed chunk", 200, []step{tok, {raw: "data: {\"choices\":[{\"delta\":\n\n"}, tok, sseData(finishChunk), sseData(doneMsg)}, schema.ErrorMalformed},
		{"clean close without DONE", 200, []step{sseData(roleChunk), tok}, schema.ErrorDropped},
		{"connection cut", 200, []step{tok, {raw: abort}}, schema.ErrorDropped},
		{"stall until timeout", 200, []step{tok, {raw: stall}}, schema.ErrorTimeout},
		{"DONE, then the stream stays open", 200, []step{tok, sseData(finishChunk), sseData(doneMsg), {raw: stall}}, ""},
		{"nothing but DONE", 200, []step{sseData(roleChunk), sseData(finishChunk), sseData(doneMsg)}, schema.ErrorEmpty},
	}
	// Only the stall waits for it; every other script ends at once, and a loaded machine must
	// not turn those into timeouts (a CI run at load 20 timed out a malformed chunk at 300 ms).
	const timeout = 3 * time.Second
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := scripted(t, c.status, c.steps...)
			cl := newClient(t, openai.Options{BaseURL: srv.URL, Timeout: timeout})
			rec := cl.Stream(context.Background(), openai.Request{Body: body(1), Index: 7}).Record
			if rec.ErrorClass != c.want {
				t.Fatalf("class = %q (%s), want %q", rec.ErrorClass, rec.Error, c.want)
			}
			if c.want != "" && rec.Error == "" {
				t.Errorf("class %s without a message", c.want)
			}
			if rec.Index != 7 || rec.EndNs < rec.StartNs {
				t.Errorf("index %d, start %d, end %d", rec.Index, rec.StartNs, rec.EndNs)
			}
			// A stalled stream may only be classed timeout once the timeout has passed (a lower
			// bound holds under any load); a complete one must not be (its class says so).
			if c.want == schema.ErrorTimeout {
				if d := time.Duration(rec.EndNs - rec.StartNs); d < timeout {
					t.Errorf("timed out after %v, before the %v timeout", d, timeout)
				}
			}
		})
	}
}

func TestConnectAndCancel(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	cl := newClient(t, openai.Options{BaseURL: url, Timeout: time.Second})
	if rec := cl.Stream(context.Background(), openai.Request{Body: body(1)}).Record; rec.ErrorClass != schema.ErrorConnect {
		t.Fatalf("closed port: class %q (%s), want connect", rec.ErrorClass, rec.Error)
	}

	stalled := scripted(t, 200, sseData(contentChunk(" a")), step{raw: stall})
	cl = newClient(t, openai.Options{BaseURL: stalled.URL, Timeout: time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	// The server stalls forever and the client's own timeout is a minute away: the stream
	// can only end, classed cancelled, because the context was cancelled.
	rec := cl.Stream(ctx, openai.Request{Body: body(1)}).Record
	if rec.ErrorClass != schema.ErrorCancelled {
		t.Fatalf("cancelled run: class %q (%s), want cancelled", rec.ErrorClass, rec.Error)
	}

	if rec := cl.Stream(context.Background(), openai.Request{Body: []byte("not json")}).Record; rec.ErrorClass != schema.ErrorConnect || !strings.Contains(rec.Error, "JSON object") {
		t.Fatalf("bad body: class %q (%s)", rec.ErrorClass, rec.Error)
	}
}

func TestAPIKeyNeverLeaks(t *testing.T) {
	const env, secret = "PERFDAG_TEST_OPENAI_KEY", "sk-test-0123456789-secret"
	t.Setenv(env, secret)
	key := endpoint.APIKey(&schema.Endpoint{APIKeyEnv: env})
	seen := make(chan string, 16)
	// A hostile server that echoes the Authorization header everywhere it can.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		seen <- auth
		switch r.URL.Path {
		case "/v1/models":
			http.Error(w, `{"error":"bad key `+auth+`"}`, http.StatusUnauthorized)
		default:
			switch r.Header.Get("X-Request-ID") {
			case "http":
				http.Error(w, "denied for "+auth, http.StatusForbidden)
			case "sse":
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = w.Write([]byte("event: error\ndata: " + auth + "\n\n"))
			case "inband":
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = w.Write([]byte(`data: {"error":"` + auth + `"}` + "\n\n"))
			case "malformed":
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = w.Write([]byte("data: " + auth + "\n\n"))
			}
		}
	}))
	defer srv.Close()
	cl := newClient(t, openai.Options{BaseURL: srv.URL, APIKey: key, Timeout: 5 * time.Second})
	for _, id := range []string{"http", "sse", "inband", "malformed"} {
		res := cl.Stream(context.Background(), openai.Request{ID: id, Body: body(1)})
		if res.Record.ErrorClass == "" {
			t.Fatalf("%s: want a failed record", id)
		}
		line, _ := json.Marshal(res.Record)
		if strings.Contains(string(line), secret) {
			t.Errorf("%s: the API key appears in the record: %s", id, line)
		}
		if got := <-seen; got != "Bearer "+secret {
			t.Errorf("%s: server saw Authorization %q, want the bearer key", id, got)
		}
	}
	_, err := cl.Models(context.Background())
	if err == nil || strings.Contains(err.Error(), secret) {
		t.Errorf("Models error = %v: want an error without the key", err)
	}
	<-seen
}
