package openai

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestStreamReadyBodyGoesOutAsItIs: a body that already carries the streaming switches (a
// run's, from workload.Body) is sent byte for byte, with its budget read as the rewrite reads
// it; anything the tokenizer cannot read as encoding/json does is rewritten.
func TestStreamReadyBodyGoesOutAsItIs(t *testing.T) {
	ready := []struct {
		in     string
		budget int
	}{
		{`{"model":"m","stream":true,"stream_options":{"include_usage":true},"max_tokens":5}`, 5},
		{`{"max_completion_tokens":7,"stream_options":{"continuous_usage_stats":true,"include_usage":true},"max_tokens":5,"stream":true}`, 7},
		{` {"stream":true,"messages":[{"role":"user","content":"<a & b>"}],"stream_options":{"include_usage":true}} `, 0},
		{`{"stream":true,"stream_options":{"include_usage":true},"max_tokens":-0}`, 0},
	}
	for _, c := range ready {
		got, budget, err := prepareBody([]byte(c.in), true)
		if err != nil || string(got) != c.in || budget != c.budget {
			t.Errorf("%s: got %s budget %d err %v; want it unchanged, budget %d", c.in, got, budget, err, c.budget)
		}
	}
	rewritten := []string{
		`{"stream":true}`, // no stream_options
		`{"stream":true,"stream_options":{"include_usage":false}}`,
		`{"stream":true,"stream_options":null}`,
		`{"stream":"true","stream_options":{"include_usage":true}}`,
		`{"stream":true,"stream":true,"stream_options":{"include_usage":true}}`,    // repeated name
		`{"stream":true,"stream_options":{"include_usage":true},"max_tokens":5.0}`, // an error either way
		`{"stream":true,"stream_options":{"include_usage":true},"max_tokens":null}`,
		`{"stream":true,"stream_options":{"include_usage":true}} {}`,
	}
	for _, in := range rewritten {
		if _, ok := streamReady([]byte(in)); ok {
			t.Errorf("%s: sent as it is, want the rewrite", in)
		}
	}
}

// FuzzPrepareBody: whichever path a body takes, what goes out means what encoding/json's
// rewrite of it means (the same JSON value, the same budget), and the same bodies are refused.
func FuzzPrepareBody(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","stream":true,"stream_options":{"include_usage":true},"max_tokens":5}`,
		`{"max_completion_tokens":7,"stream_options":{"x":1,"include_usage":true},"max_tokens":5,"stream":true}`,
		`{"stream":true,"stream_options":{"include_usage":true},"max_tokens":1e3}`,
		`{"stream":true,"stream_options":{"include_usage":true},"max_tokens":"5"}`,
		`{"str\u0065am":true,"stream_options":{"include_usage":true}}`,
		`{"stream":true,"stream_options":{"include_usage":true,"include_usage":true}}`,
		`{"stream":true,"stream_options":{"include_usage":true},"m":"\xff"}`,
		`[]`, `null`, `{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got, budget, err := prepareBody(body, true)
		want, wantBudget, wantErr := rewriteBody(body, true)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("err %v, the rewrite's %v", err, wantErr)
		}
		if err != nil {
			return
		}
		if budget != wantBudget {
			t.Fatalf("budget %d, the rewrite's %d", budget, wantBudget)
		}
		var g, w any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("sent %q, not JSON: %v", got, err)
		}
		if err := json.Unmarshal(want, &w); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("sent %s, the rewrite's %s", got, want)
		}
	})
}
