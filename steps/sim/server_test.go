package sim_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/openai"
	"github.com/perfdag/perfdag/steps/measure/sse"
	"github.com/perfdag/perfdag/steps/sim"
)

const model0 = "sim-model"

func start(t testing.TB, cfg schema.SimConfig) *sim.Server {
	t.Helper()
	s, err := sim.Start(context.Background(), cfg, model0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func client(t testing.TB, s *sim.Server, timeout time.Duration) *openai.Client {
	t.Helper()
	c, err := openai.New(openai.Options{BaseURL: s.URL(), Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func chatBody(t testing.TB, prompt string, fields map[string]any) []byte {
	t.Helper()
	m := map[string]any{"model": model0, "messages": []map[string]string{{"role": "user", "content": prompt}}}
	for k, v := range fields {
		m[k] = v
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// rawStream posts body and returns the SSE messages the simulator sent.
func rawStream(t *testing.T, s *sim.Server, body []byte) []sse.Message {
	t.Helper()
	resp, err := http.Post(s.URL()+"/v1/chat/completions", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("content type %q", ct)
	}
	rd := sse.NewReader(resp.Body, nil)
	var out []sse.Message
	for {
		m, err := rd.Next()
		if err != nil {
			return out
		}
		out = append(out, m)
	}
}

func TestStreamLooksLikeVLLM(t *testing.T) {
	s := start(t, schema.SimConfig{ZeroDelay: true})
	msgs := rawStream(t, s, chatBody(t, "hello there", map[string]any{"stream": true, "max_tokens": 3, "ignore_eos": true,
		"stream_options": map[string]any{"include_usage": true}}))
	if len(msgs) != 1+3+1+1+1 {
		t.Fatalf("%d messages, want role + 3 content + finish + usage + [DONE]", len(msgs))
	}
	type chunk struct {
		Object  string `json:"object"`
		Choices []struct {
			Delta        map[string]any `json:"delta"`
			FinishReason *string        `json:"finish_reason"`
		} `json:"choices"`
		Usage *struct {
			Prompt     int `json:"prompt_tokens"`
			Completion int `json:"completion_tokens"`
		} `json:"usage"`
	}
	parse := func(i int) chunk {
		var c chunk
		if err := json.Unmarshal([]byte(msgs[i].Data), &c); err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		return c
	}
	role := parse(0)
	if role.Choices[0].Delta["role"] != "assistant" || role.Choices[0].Delta["content"] != "" || role.Choices[0].FinishReason != nil {
		t.Errorf("first message %s: want the role chunk with empty content", msgs[0].Data)
	}
	for i := 1; i <= 3; i++ {
		c := parse(i)
		if text, _ := c.Choices[0].Delta["content"].(string); !strings.HasPrefix(text, " ") || c.Object != "chat.completion.chunk" {
			t.Errorf("content message %d: %s", i, msgs[i].Data)
		}
	}
	fin := parse(4)
	if len(fin.Choices[0].Delta) != 0 || fin.Choices[0].FinishReason == nil || *fin.Choices[0].FinishReason != "length" {
		t.Errorf("finish message %s: want delta {} and finish_reason length", msgs[4].Data)
	}
	u := parse(5)
	if len(u.Choices) != 0 || u.Usage == nil || u.Usage.Completion != 3 || u.Usage.Prompt != 2 {
		t.Errorf("usage message %s: want choices [] with 2 prompt and 3 completion tokens", msgs[5].Data)
	}
	if !msgs[6].Done() {
		t.Errorf("last message %q, want [DONE]", msgs[6].Data)
	}
	without := rawStream(t, s, chatBody(t, "hi", map[string]any{"stream": true, "max_tokens": 2, "ignore_eos": true}))
	if len(without) != 1+2+1+1 {
		t.Errorf("without include_usage: %d messages, want no usage chunk", len(without))
	}
}

func TestClientCountsMatchUsage(t *testing.T) {
	cases := []struct {
		name      string
		cfg       schema.SimConfig
		wantField string
	}{
		{"plain", schema.SimConfig{}, ""},
		{"chunks of 3", schema.SimConfig{ChunkTokens: 3}, ""},
		{"reasoning_content", schema.SimConfig{Reasoning: true, ReasoningTokens: 6}, openai.FieldReasoningContent},
		{"reasoning", schema.SimConfig{Reasoning: true, ReasoningField: "reasoning", ReasoningTokens: 6}, openai.FieldReasoning},
		{"think inline", schema.SimConfig{Reasoning: true, ReasoningField: "think", ReasoningTokens: 6}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.cfg.ZeroDelay = true
			s := start(t, c.cfg)
			cl := client(t, s, 10*time.Second)
			for _, stream := range []bool{true, false} {
				req := openai.Request{Body: chatBody(t, "count me exactly", map[string]any{"max_tokens": 20, "ignore_eos": true})}
				res := cl.Complete(context.Background(), req)
				if stream {
					res = cl.Stream(context.Background(), req)
				}
				r := res.Record
				if r.ErrorClass != "" {
					t.Fatalf("stream=%v: %s: %s", stream, r.ErrorClass, r.Error)
				}
				if r.UsageComplete == nil || r.OutputTokens+r.ReasoningTok != *r.UsageComplete || *r.UsageComplete != 20 || r.UsageMismatch {
					t.Errorf("stream=%v: client %d + %d tokens, usage %v: want exactly 20", stream, r.OutputTokens, r.ReasoningTok, r.UsageComplete)
				}
				if r.UsagePrompt == nil || *r.UsagePrompt != 3 {
					t.Errorf("stream=%v: usage prompt %v, want 3 (\"count me exactly\")", stream, r.UsagePrompt)
				}
				if r.ReasoningField != c.wantField {
					t.Errorf("stream=%v: reasoning field %q, want %q", stream, r.ReasoningField, c.wantField)
				}
				if c.cfg.ReasoningField == "think" && !strings.HasPrefix(res.Content, "<think>") {
					t.Errorf("think mode content %q does not open with <think>", res.Content)
				}
			}
		})
	}
}

func TestModelsAndBadRequests(t *testing.T) {
	s := start(t, schema.SimConfig{ZeroDelay: true})
	ids, err := client(t, s, 5*time.Second).Models(context.Background())
	if err != nil || len(ids) != 1 || ids[0] != model0 {
		t.Fatalf("models = %v, %v", ids, err)
	}
	cases := []struct {
		name string
		body string
		want int
	}{
		{"unknown model", `{"model":"other","messages":[]}`, http.StatusNotFound},
		{"not JSON", `{`, http.StatusBadRequest},
		{"zero budget", `{"model":"` + model0 + `","messages":[],"max_tokens":0}`, http.StatusBadRequest},
		{"bad content", `{"model":"` + model0 + `","messages":[{"content":3}]}`, http.StatusBadRequest},
	}
	for _, c := range cases {
		resp, err := http.Post(s.URL()+"/v1/chat/completions", "application/json", strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.want || !strings.Contains(string(b), `"error"`) {
			t.Errorf("%s: HTTP %d %s, want %d with an error object", c.name, resp.StatusCode, b, c.want)
		}
	}
}

// scrape fetches and parses a Prometheus text endpoint with expfmt.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse %s: %v", url, err)
	}
	return fams
}

func value(t *testing.T, fams map[string]*dto.MetricFamily, name string) float64 {
	t.Helper()
	f, ok := fams[name]
	if !ok || len(f.Metric) != 1 {
		t.Fatalf("%s: missing or not one series", name)
	}
	m := f.Metric[0]
	labels := map[string]string{}
	for _, l := range m.Label {
		labels[l.GetName()] = l.GetValue()
	}
	if labels["model_name"] != model0 || labels["engine"] != "0" {
		t.Errorf("%s labels %v, want model_name and engine", name, labels)
	}
	if m.Counter != nil {
		return m.Counter.GetValue()
	}
	return m.Gauge.GetValue()
}
