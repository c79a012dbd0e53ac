package openai

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/steps/measure/sse"
	"github.com/perfdag/perfdag/steps/measure/tokens"
)

// analyze reads msgs as a stream's do: each one's data is lent to the analyzer in a buffer
// the next message overwrites (as the SSE reader's), so an analysis that kept a view of it
// would change.
func analyze(msgs []sse.Message) analysis {
	var z analyzer
	var buf []byte
	for _, m := range msgs {
		buf = append(buf[:0], m.Data...)
		z.add(m.Event, buf, m.TimeNs)
		for i := range buf {
			buf[i] = '#'
		}
	}
	return z.result()
}

// msgs builds messages stamped 1, 2, 3… in order, so a test names a message by its stamp.
func msgs(data ...string) []sse.Message {
	out := make([]sse.Message, len(data))
	for i, d := range data {
		out[i] = sse.Message{Data: d, TimeNs: int64(i + 1)}
		if e, rest, ok := strings.Cut(d, "\x00"); ok {
			out[i] = sse.Message{Event: e, Data: rest, TimeNs: int64(i + 1)}
		}
	}
	return out
}

const (
	role       = `{"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`
	roleNull   = `{"choices":[{"index":0,"delta":{"role":"assistant","content":null},"finish_reason":null}]}`
	emptyDelta = `{"choices":[{"index":0,"delta":{},"finish_reason":null}]}`
	finish     = `{"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}`
	usage      = `{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15,"completion_tokens_details":{"reasoning_tokens":1}}}`
	done       = `[DONE]`
)

func content(s string) string {
	b, _ := json.Marshal(s)
	return `{"choices":[{"index":0,"delta":{"content":` + string(b) + `},"finish_reason":null}]}`
}

func reasoningOf(field, s string) string {
	b, _ := json.Marshal(s)
	return `{"choices":[{"index":0,"delta":{"` + field + `":` + string(b) + `},"finish_reason":null}]}`
}

// TestAnalyzerSizedByBudget: a stream's stamps are sized by its budget (up to maxPresize),
// an answer past it still keeps every stamp, and one far shorter than its budget leaves its
// record no unused room.
func TestAnalyzerSizedByBudget(t *testing.T) {
	for _, c := range []struct{ budget, tokens, maxCap int }{
		{budget: 64, tokens: 64, maxCap: 64}, {budget: 8, tokens: 40, maxCap: 80},
		{budget: 100000, tokens: 3, maxCap: 6}, {budget: 0, tokens: 5, maxCap: 10},
	} {
		var sk skeletons
		z := newAnalyzer(&sk, c.budget)
		for i := range c.tokens {
			z.add("", []byte(content(" a")), int64(i+1))
		}
		a := z.result()
		z.release()
		if len(a.chunkNs) != c.tokens || a.chunkNs[c.tokens-1] != int64(c.tokens) || cap(a.chunkNs) > c.maxCap {
			t.Errorf("budget %d, %d tokens: %d stamps (last %d) in room for %d, want %d in at most %d",
				c.budget, c.tokens, len(a.chunkNs), a.chunkNs[len(a.chunkNs)-1], cap(a.chunkNs), c.tokens, c.maxCap)
		}
	}
}

func TestAnalyze(t *testing.T) {
	type want struct {
		first, output, last int64
		chunks              int
		content, reasoning  string
		field, finish       string
		usageCompletion     int    // -1: no usage
		sse, inband         string // the error texts
		malf                bool
	}
	cases := []struct {
		name string
		in   []sse.Message
		want want
	}{
		{"role chunk never counts", msgs(role, content(" a"), content(" b"), finish, usage, done),
			want{first: 2, output: 2, last: 3, chunks: 2, content: " a b", finish: "length", usageCompletion: 3}},
		{"content null first chunk never counts", msgs(roleNull, emptyDelta, content(" a"), done),
			want{first: 3, output: 3, last: 3, chunks: 1, content: " a", usageCompletion: -1}},
		{"reasoning_content then answer", msgs(role, reasoningOf("reasoning_content", " r"), content(" a"), finish, done),
			want{first: 2, output: 3, last: 3, chunks: 2, content: " a", reasoning: " r", field: "reasoning_content", finish: "length", usageCompletion: -1}},
		{"reasoning field", msgs(reasoningOf("reasoning", " r1"), reasoningOf("reasoning", " r2"), finish, done),
			want{first: 1, output: 0, last: 2, chunks: 2, reasoning: " r1 r2", field: "reasoning", finish: "length", usageCompletion: -1}},
		{"think inline is output", msgs(content("<think>"), content(" r"), content("</think>"), content(" a"), done),
			want{first: 1, output: 1, last: 4, chunks: 4, content: "<think> r</think> a", usageCompletion: -1}},
		{"usage and DONE do not extend latency", msgs(content(" a"), finish, usage, done),
			want{first: 1, output: 1, last: 1, chunks: 1, content: " a", finish: "length", usageCompletion: 3}},
		{"sse error event", msgs(content(" a"), "error\x00"+`{"error":{"message":"boom"}}`),
			want{first: 1, output: 1, last: 1, chunks: 1, content: " a", usageCompletion: -1, sse: `{"error":{"message":"boom"}}`}},
		{"in-band error", msgs(content(" a"), `{"error":{"code":500,"message":"boom"}}`),
			want{first: 1, output: 1, last: 1, chunks: 1, content: " a", usageCompletion: -1, inband: `{"code":500,"message":"boom"}`}},
		{"error null is not an error", msgs(`{"error":null,"choices":[{"delta":{"content":"x"}}]}`, done),
			want{first: 1, output: 1, last: 1, chunks: 1, content: "x", usageCompletion: -1}},
		{"malformed chunk", msgs(content(" a"), `{"choices":[{"delta":{"content":" b"`, content(" c"), done),
			want{first: 1, output: 1, last: 3, chunks: 2, content: " a c", usageCompletion: -1, malf: true}},
		{"tool call text is output", msgs(`{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"name":"f","arguments":"{}"}}]}}]}`, done),
			want{first: 1, output: 1, last: 1, chunks: 1, content: "f{}", usageCompletion: -1}},
		{"non-streaming message", msgs(`{"object":"chat.completion","choices":[{"message":{"role":"assistant","content":" a b","reasoning_content":" r"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":3}}`),
			want{first: 1, output: 1, last: 1, chunks: 1, content: " a b", reasoning: " r", field: "reasoning_content", finish: "stop", usageCompletion: 3}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := analyze(c.in)
			got := want{first: a.firstToken, output: a.firstOutput, last: a.lastContent, chunks: len(a.chunkNs),
				content: a.content, reasoning: a.reasoning, field: a.reasoningField, finish: a.finish, usageCompletion: -1,
				sse: a.sseError, inband: a.inBand, malf: a.malformed != ""}
			if a.usage != nil && a.usage.CompletionTokens != nil {
				got.usageCompletion = *a.usage.CompletionTokens
			}
			if got != c.want {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func TestPrepareBody(t *testing.T) {
	cases := []struct {
		name    string
		in      string
		stream  bool
		want    string
		budget  int
		wantErr string
	}{
		{"adds stream switches", `{"model":"m","max_tokens":5}`, true,
			`{"max_tokens":5,"model":"m","stream":true,"stream_options":{"include_usage":true}}`, 5, ""},
		{"keeps other stream options", `{"stream":false,"stream_options":{"continuous_usage_stats":true,"include_usage":false}}`, true,
			`{"stream":true,"stream_options":{"continuous_usage_stats":true,"include_usage":true}}`, 0, ""},
		{"max_completion_tokens wins", `{"max_tokens":5,"max_completion_tokens":7}`, true,
			`{"max_completion_tokens":7,"max_tokens":5,"stream":true,"stream_options":{"include_usage":true}}`, 7, ""},
		{"non-streaming drops stream_options", `{"stream":true,"stream_options":{"include_usage":true}}`, false,
			`{"stream":false}`, 0, ""},
		{"not an object", `[1]`, true, "", 0, "want a JSON object"},
		{"bad max_tokens", `{"max_tokens":"x"}`, true, "", 0, "field max_tokens"},
		{"bad stream_options", `{"stream_options":3}`, true, "", 0, "field stream_options"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, budget, err := prepareBody([]byte(c.in), c.stream)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want it to mention %q", err, c.wantErr)
				}
				return
			}
			if err != nil || string(got) != c.want || budget != c.budget {
				t.Fatalf("got %s budget %d err %v; want %s budget %d", got, budget, err, c.want, c.budget)
			}
		})
	}
}

func TestMismatch(t *testing.T) {
	cases := []struct {
		client, server int
		want           bool
	}{
		{100, 100, false},
		{105, 100, false},   // 5 = 5 % of 100: not over the threshold
		{106, 100, true},    // 6 > min(5, 50)
		{1049, 1000, false}, // 49 ≤ min(50, 50)
		{1051, 1000, true},  // 51 > 50
		{2050, 2000, false}, // 50 ≤ min(100, 50)
		{2051, 2000, true},  // 51 > 50: the 50-token cap, not 5 %, applies
		{1, 0, true},        // threshold min(0, 50) = 0
	}
	for _, c := range cases {
		if got := Mismatch(c.client, c.server); got != c.want {
			t.Errorf("Mismatch(%d, %d) = %v, want %v", c.client, c.server, got, c.want)
		}
	}
}

func FuzzParseChunk(f *testing.F) {
	for _, s := range []string{role, roleNull, emptyDelta, finish, usage, content(" a"), reasoningOf("reasoning", "x"),
		`{"error":{"code":500}}`, `{"choices":[{"message":{"content":"a"}}]}`, `null`, `[]`, `{"choices":null}`} {
		f.Add([]byte(s))
	}
	for _, s := range trickyChunks {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFastChunk(t, data)
		c, err := ParseChunk(data)
		if err != nil {
			if c != (Chunk{}) {
				t.Fatalf("a failed parse returned data: %+v", c)
			}
			return
		}
		if c.Error != "" && (c.Visible() || c.Usage != nil) {
			t.Fatalf("an error payload also carried tokens: %+v", c)
		}
		if (c.Reasoning != "") != (c.ReasoningField != "") {
			t.Fatalf("reasoning text %q with field %q", c.Reasoning, c.ReasoningField)
		}
		if c.Visible() != (len(c.Content)+len(c.Reasoning) > 0) {
			t.Fatalf("Visible() disagrees with the texts: %+v", c)
		}
		// A parsed chunk re-encoded the way a server would send it parses to the same texts.
		if c.Error == "" && c.Visible() {
			again, err := ParseChunk([]byte(`{"choices":[{"delta":{"content":` + quote(c.Content) + `,"` + fieldOr(c.ReasoningField) + `":` + quote(c.Reasoning) + `}}]}`))
			if err != nil || again.Content != c.Content || again.Reasoning != c.Reasoning {
				t.Fatalf("re-encoded chunk parsed to %+v (err %v), want %+v", again, err, c)
			}
		}
	})
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

func fieldOr(f string) string {
	if f == "" {
		return FieldReasoningContent
	}
	return f
}

// BenchmarkAnalyze is the per-response work after a stream ends: decode every chunk and
// count the tokens of a 256-token answer once (reported per token).
func BenchmarkAnalyze(b *testing.B) {
	parts := []string{role}
	for range 256 {
		parts = append(parts, content(" the"))
	}
	parts = append(parts, finish, usage, done)
	in := msgs(parts...)
	if err := tokens.Load(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		a := analyze(in)
		if countTokens(a.content) != 256 {
			b.Fatal("miscounted")
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*256), "ns/token")
}

// BenchmarkAnalyzeStream is the in-window work on a stream's messages as the simulator and
// vLLM send them (role, tokens, finish, usage, [DONE]) at 1 and 256 tokens, read by one
// analyzer of a client that read such streams before (its skeletons and template), from
// newAnalyzer to release: ns per message, no token counting (BenchmarkAnalyze has that).
func BenchmarkAnalyzeStream(b *testing.B) {
	for _, n := range []int{1, 256} {
		b.Run(fmt.Sprintf("%dtok", n), func(b *testing.B) { analyzeStream(b, n) })
	}
}

func analyzeStream(b *testing.B, tokens int) {
	head := `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":`
	data := [][]byte{[]byte(head + `{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`)}
	for range tokens {
		data = append(data, []byte(head+`{"content":" a"},"logprobs":null,"finish_reason":null}]}`))
	}
	data = append(data, []byte(head+`{},"logprobs":null,"finish_reason":"length"}]}`),
		[]byte(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":9,"total_tokens":`+
			strconv.Itoa(9+tokens)+`,"completion_tokens":`+strconv.Itoa(tokens)+`}}`),
		[]byte("[DONE]"))
	var sk skeletons
	b.ReportAllocs()
	for b.Loop() {
		z := newAnalyzer(&sk, tokens)
		for i, d := range data {
			z.add("", d, int64(i))
		}
		if a := z.result(); len(a.chunkNs) != tokens || len(a.content) != 2*tokens || a.finish != "length" || a.usage == nil {
			b.Fatalf("%d stamps, %d bytes, finish %q, usage %v", len(a.chunkNs), len(a.content), a.finish, a.usage)
		}
		z.release()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(data)), "ns/msg")
}
