package openai

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/perfdag/perfdag/schema"
)

// Names of the two reasoning delta fields servers use (vLLM/SGLang reasoning parsers emit
// reasoning_content; newer vLLM and some gateways emit reasoning).
const (
	FieldReasoningContent = "reasoning_content"
	FieldReasoning        = "reasoning"
)

// Chunk is what perfdag reads from one chat-completion chunk (streaming) or completion
// (non-streaming): only the fields a measurement needs.
type Chunk struct {
	Content        string                // non-empty answer text (content plus tool-call name and arguments)
	Reasoning      string                // non-empty reasoning text
	ReasoningField string                // which field carried Reasoning
	FinishReason   string                // last non-empty finish_reason among the choices
	Usage          *Usage                // the usage object, when present
	Timings        *schema.ServerTimings // llama.cpp's per-request timings, when present
	Choices        int                   // how many choices the chunk carried (only the first is read)
	Error          string                // the raw `error` value when the payload is an in-band error
}

// Usage is a server's token accounting.
type Usage struct {
	PromptTokens     *int
	CompletionTokens *int
	ReasoningTokens  *int
	CachedTokens     *int // prompt_tokens_details.cached_tokens
}

// Visible reports whether the chunk carries a token: non-empty content or reasoning.
// Role-only, empty, finish-only and usage-only chunks are not visible.
func (c Chunk) Visible() bool { return c.Content != "" || c.Reasoning != "" }

type wireChunk struct {
	Choices []wireChoice          `json:"choices"`
	Usage   *wireUsage            `json:"usage"`
	Error   json.RawMessage       `json:"error"`
	Timings *schema.ServerTimings `json:"timings"`
}

type wireChoice struct {
	Delta        *wireDelta `json:"delta"`
	Message      *wireDelta `json:"message"`
	FinishReason *string    `json:"finish_reason"`
}

type wireDelta struct {
	Content          *string        `json:"content"`
	ReasoningContent *string        `json:"reasoning_content"`
	Reasoning        *string        `json:"reasoning"`
	ToolCalls        []wireToolCall `json:"tool_calls"`
}

type wireToolCall struct {
	Function *struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type wireUsage struct {
	PromptTokens            *int `json:"prompt_tokens"`
	CompletionTokens        *int `json:"completion_tokens"`
	CompletionTokensDetails *struct {
		ReasoningTokens *int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
	PromptTokensDetails *struct {
		CachedTokens *int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

// ParseChunk decodes one data payload. A payload that is not a JSON object is an error (the
// request is then classed malformed); an `{"error": …}` object parses and sets Chunk.Error.
// The common chunk (one choice with a delta, no usage) is decoded by a walk over
// encoding/json/v2's tokenizer (fastChunk); anything else, or anything that walk is unsure
// of, by encoding/json, whose reading is the reference: both give the same Chunk.
func ParseChunk(data []byte) (Chunk, error) {
	if c, ok := fastChunk(data); ok {
		return c, nil
	}
	return parseChunkV1(data)
}

// parseChunkV1 decodes a payload with encoding/json.
func parseChunkV1(data []byte) (Chunk, error) {
	var w wireChunk
	if err := json.Unmarshal(data, &w); err != nil {
		return Chunk{}, fmt.Errorf("decode chunk: %w", err)
	}
	return w.chunk(), nil
}

// chunk reads the measurement's fields out of a decoded payload.
func (w *wireChunk) chunk() Chunk {
	var c Chunk
	if len(w.Error) > 0 && string(w.Error) != "null" {
		c.Error = string(w.Error)
		return c
	}
	if w.Usage != nil {
		u := &Usage{PromptTokens: w.Usage.PromptTokens, CompletionTokens: w.Usage.CompletionTokens}
		if d := w.Usage.CompletionTokensDetails; d != nil {
			u.ReasoningTokens = d.ReasoningTokens
		}
		if d := w.Usage.PromptTokensDetails; d != nil {
			u.CachedTokens = d.CachedTokens
		}
		c.Usage = u
	}
	c.Timings, c.Choices = w.Timings, len(w.Choices)
	// Only the first choice counts: perfdag asks for one (n = 1), and a server that sends
	// more is flagged multiple_choices rather than having its text counted twice.
	for _, ch := range w.Choices[:min(len(w.Choices), 1)] {
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			c.FinishReason = *ch.FinishReason
		}
		d := ch.Delta
		if d == nil {
			d = ch.Message
		}
		if d == nil {
			continue
		}
		switch {
		case d.ReasoningContent != nil && *d.ReasoningContent != "":
			c.Reasoning, c.ReasoningField = *d.ReasoningContent, FieldReasoningContent
		case d.Reasoning != nil && *d.Reasoning != "":
			c.Reasoning, c.ReasoningField = *d.Reasoning, FieldReasoning
		}
		if d.Content != nil {
			c.Content = *d.Content
		}
		if len(d.ToolCalls) > 0 {
			var b strings.Builder
			b.WriteString(c.Content)
			for _, tc := range d.ToolCalls {
				if tc.Function != nil {
					b.WriteString(tc.Function.Name)
					b.WriteString(tc.Function.Arguments)
				}
			}
			c.Content = b.String()
		}
	}
	return c
}
