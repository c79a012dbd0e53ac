package openai

import (
	"reflect"
	"testing"
)

// Payloads the fast path must read exactly as encoding/json does, or leave to it: case
// variants, repeats, escapes, odd types, extra choices, trailing bytes, broken UTF-8.
var trickyChunks = []string{
	`{"choices":[{"delta":{"Content":"a"}}]}`,
	`{"Choices":[{"delta":{"content":"a"}}]}`,
	`{"choices":[{"DELTA":{"content":"a"}}]}`,
	`{"choices":[{"delta":{"content":"a","content":"b"}}]}`,
	`{"choices":[{"delta":{"content":"a"}}],"choices":[]}`,
	`{"choices":[{"delta":{"content":"a"},"delta":{"reasoning":"r"}}]}`,
	`{"\u0063hoices":[{"delta":{"cont\u0065nt":"\u00e9\n\"x\""}}]}`,
	`{"choices":[{"delta":{"content":5}}]}`,
	`{"choices":[{"delta":{"content":"a"},"finish_reason":7}]}`,
	`{"choices":[{"delta":{"content":"a"}},{"delta":{"content":"b"}}]}`,
	`{"choices":[{"delta":{"content":"a"}},{"delta":5}]}`,
	`{"choices":[null]}`,
	`{"choices":{}}`,
	`{"choices":[{"delta":{"content":"a","tool_calls":[{"function":{"name":"f","arguments":"{}"}}]}}]}`,
	`{"choices":[{"delta":{"content":"a","tool_calls":null}}]}`,
	`{"choices":[{"delta":{"content":"a"}}],"usage":null,"error":null,"timings":null}`,
	`{"choices":[{"delta":{"content":"a"}}],"usage":{"completion_tokens":1}}`,
	`{"choices":[],"usage":{"completion_tokens":1.0}}`,
	`{"choices":[],"usage":{"completion_tokens":1e2}}`,
	`{"choices":[],"usage":{"completion_tokens":"1"}}`,
	`{"choices":[],"usage":{"completion_tokens":-0,"prompt_tokens":null}}`,
	`{"choices":[],"usage":{"completion_tokens":99999999999999999999}}`,
	`{"choices":[],"usage":{"Completion_tokens":1}}`,
	`{"choices":[],"usage":{"completion_tokens":1,"completion_tokens":2}}`,
	`{"choices":[],"usage":{"completion_tokens":1},"usage":null}`,
	`{"choices":[],"usage":5}`,
	`{"choices":[],"usage":{"prompt_tokens":9,"prompt_tokens_details":{"cached_tokens":2,"audio_tokens":0},"completion_tokens_details":null}}`,
	`{"choices":[],"usage":{"prompt_tokens_details":{"Cached_tokens":2}}}`,
	`{"choices":[],"usage":{"prompt_tokens_details":{"cached_tokens":2,"cached_tokens":3}}}`,
	`{"choices":[],"usage":{"prompt_tokens_details":{"cached_tokens":null}}}`,
	`{"choices":[],"usage":{"prompt_tokens_details":[]}}`,
	`{"choices":[],"usage":{"completion_tokens_details":{"reasoning_tokens":4,"accepted_prediction_tokens":0},"total_tokens":3}}`,
	`{"choices":[{"delta":{"content":"a"}}]} x`,
	`{"choices":[{"delta":{"content":"a"}}]}  `,
	"{\"choices\":[{\"delta\":{\"content\":\"a\xff\"}}]}",
	`{"choices":[{"delta":{"content":"\ud800"}}]}`,
	`{"choices":[{"delta":{"content":"a"},"logprobs":{"content":[{"token":"a","bytes":[97]}]},"index":0}],"id":"x","created":1}`,
	`{"choices":[{"delta":{"reasoning_content":"r","reasoning":"s","content":null}}]}`,
	`{"choices":[{"message":{"content":"m"},"delta":null}]}`,
	`{"choices":[{"delta":{"content":"a"},"message":{"content":"m"}}]}`,
	`{"choices":[{"message":{"reasoning":"m"},"delta":{"reasoning":"r"}}]}`,
	"{\"choiceſ\":[{\"delta\":{\"content\":\"a\"}}]}",
	`{"choices":[]}`,
	`{}`,
	`null`,
	`{"choices":[{"delta":{"content":"a"}}]`,
}

// TestFastChunkAgreesWithEncodingJSON: on every payload the fast path takes, it reads what
// encoding/json reads.
func TestFastChunkAgreesWithEncodingJSON(t *testing.T) {
	for _, s := range append(trickyChunks, role, roleNull, emptyDelta, finish, usage, content(" a"), reasoningOf(FieldReasoning, "x")) {
		checkFastChunk(t, []byte(s))
	}
}

// TestFastChunkTakesTheCommonShapes: the chunks of an ordinary stream take the fast path
// (else the optimisation has silently gone), the usage chunk too.
func TestFastChunkTakesTheCommonShapes(t *testing.T) {
	for _, s := range []string{role, roleNull, emptyDelta, finish, usage, content(" a"), content("é\n\"x\""), reasoningOf(FieldReasoningContent, "r"),
		`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":7,"total_tokens":8,"completion_tokens":1,"prompt_tokens_details":null}}`,
		`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"a"},"logprobs":null,"finish_reason":null}],"usage":null}`} {
		if _, ok := fastChunk([]byte(s)); !ok {
			t.Errorf("fast path refused %s", s)
		}
	}
}

func checkFastChunk(t *testing.T, data []byte) {
	t.Helper()
	fc, ok := fastChunk(data)
	if !ok {
		return
	}
	vc, err := parseChunkV1(data)
	if err != nil {
		t.Fatalf("fast path read %q as %+v; encoding/json refuses it: %v", data, fc, err)
	}
	if !reflect.DeepEqual(fc, vc) {
		t.Fatalf("fast path read %q as %+v; encoding/json as %+v", data, fc, vc)
	}
}
