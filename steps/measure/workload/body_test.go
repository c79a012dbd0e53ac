package workload

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
)

// TestBodyDefault pins the exact bytes of an AA request: keys sorted, no HTML escaping.
func TestBodyDefault(t *testing.T) {
	got, err := Body("moonshotai/Kimi-K2.6", Prompt{Text: "Compare <a> & <b>.", InputTokens: 6, OutputTokens: 1500}, schema.Workload{Shape: "aa-10k"})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"ignore_eos":true,"max_completion_tokens":1500,"max_tokens":1500,"messages":[{"content":"Compare <a> & <b>.","role":"user"}],"min_tokens":1500,"model":"moonshotai/Kimi-K2.6","stream":true,"stream_options":{"include_usage":true},"temperature":0,"top_p":1}`
	if string(got) != want {
		t.Errorf("Body =\n%s\nwant\n%s", got, want)
	}
}

func TestBodyExtra(t *testing.T) {
	base := func() map[string]any {
		return map[string]any{
			"model":                 "m",
			"messages":              []any{map[string]any{"role": "user", "content": "hi"}},
			"stream":                true,
			"stream_options":        map[string]any{"include_usage": true},
			"temperature":           0.0,
			"top_p":                 1.0,
			"max_tokens":            100.0,
			"max_completion_tokens": 100.0,
			"min_tokens":            100.0,
			"ignore_eos":            true,
		}
	}
	cases := []struct {
		name  string
		extra map[string]any
		edit  func(m map[string]any)
	}{
		{"none", nil, func(map[string]any) {}},
		{"override scalars", map[string]any{"temperature": 0.6, "ignore_eos": false},
			func(m map[string]any) { m["temperature"], m["ignore_eos"] = 0.6, false }},
		{"null removes keys", map[string]any{"min_tokens": nil, "max_completion_tokens": nil, "absent": nil},
			func(m map[string]any) { delete(m, "min_tokens"); delete(m, "max_completion_tokens") }},
		{"objects merge", map[string]any{"stream_options": map[string]any{"continuous_usage_stats": true}},
			func(m map[string]any) {
				m["stream_options"] = map[string]any{"include_usage": true, "continuous_usage_stats": true}
			}},
		{"null inside an object", map[string]any{"stream_options": map[string]any{"include_usage": nil}},
			func(m map[string]any) { m["stream_options"] = map[string]any{} }},
		{"new object from YAML", map[string]any{"chat_template_kwargs": map[any]any{"enable_thinking": false, "x": nil}},
			func(m map[string]any) { m["chat_template_kwargs"] = map[string]any{"enable_thinking": false} }},
		{"null removes an object", map[string]any{"stream_options": nil, "stream": false},
			func(m map[string]any) { delete(m, "stream_options"); m["stream"] = false }},
		{"scalar replaces an object", map[string]any{"stream_options": "off"},
			func(m map[string]any) { m["stream_options"] = "off" }},
		{"lists and the model", map[string]any{"stop": []any{"\n\n", 3}, "model": "other"},
			func(m map[string]any) { m["stop"] = []any{"\n\n", 3.0}; m["model"] = "other" }},
	}
	for _, c := range cases {
		raw, err := Body("m", Prompt{Text: "hi", OutputTokens: 100}, schema.Workload{ExtraBody: c.extra})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var got map[string]any
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatalf("%s: body is not JSON: %v", c.name, err)
		}
		want := base()
		c.edit(want)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %v\nwant %v", c.name, got, want)
		}
	}
}

// TestBodyExtraNotShared: merging into stream_options must not alter the next body.
func TestBodyExtraNotShared(t *testing.T) {
	w := schema.Workload{ExtraBody: map[string]any{"stream_options": map[string]any{"include_usage": nil}}}
	p := Prompt{Text: "x", OutputTokens: 1}
	for range 2 {
		raw, err := Body("m", p, w)
		if err != nil || !strings.Contains(string(raw), `"stream_options":{}`) {
			t.Fatalf("Body = %s, %v", raw, err)
		}
	}
	if len(w.ExtraBody["stream_options"].(map[string]any)) != 1 {
		t.Error("Body modified the workload's extra_body")
	}
}

func TestBodyErrors(t *testing.T) {
	cases := []struct {
		model string
		p     Prompt
		extra map[string]any
		want  string
	}{
		{"", Prompt{Text: "x", OutputTokens: 5}, nil, "the endpoint's model is empty"},
		{"m", Prompt{Text: "x"}, nil, "output token budget 0"},
		{"m", Prompt{Text: "x", OutputTokens: 5}, map[string]any{"bad": map[string]any{"ch": make(chan int)}}, "workload.extra_body.bad.ch: a chan int cannot be sent"},
		{"m", Prompt{Text: "x", OutputTokens: 5}, map[string]any{"list": []any{1, func() {}}}, "workload.extra_body.list[1]: a func()"},
	}
	for _, c := range cases {
		_, err := Body(c.model, c.p, schema.Workload{ExtraBody: c.extra})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Body error = %v, want it to contain %q", err, c.want)
		}
	}
}
