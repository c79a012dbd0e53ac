package openai

import (
	"fmt"
	"strings"
	"unsafe"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/sse"
	"github.com/perfdag/perfdag/steps/measure/tokens"
)

// analysis is what the messages of one response say, in AIPerf's terms.
type analysis struct {
	chunkNs        []int64
	firstToken     int64 // first message with non-empty content or reasoning
	firstOutput    int64 // first message with non-empty content
	lastContent    int64 // last message with non-empty content or reasoning
	content        string
	reasoning      string
	reasoningField string
	finish         string
	usage          *Usage
	timings        *schema.ServerTimings
	multiChoice    bool   // some chunk carried more than one choice
	sseError       string // data of an `event: error` message
	inBand         string // `error` value of an in-band error payload
	malformed      string // why a data message was not a JSON chunk
}

// analyze parses the messages of a finished stream. It runs after the stream has closed, so
// none of this work delays a timestamp.
func analyze(msgs []sse.Message) analysis {
	var a analysis
	var content, reasoning strings.Builder
	var p chunkParser // the texts of its chunks are copied before the next parse
	a.chunkNs = make([]int64, 0, len(msgs))
	for i, m := range msgs {
		if m.Event == "error" {
			if a.sseError == "" {
				a.sseError = m.Data
				if a.sseError == "" {
					a.sseError = "(no data)"
				}
			}
			continue
		}
		if m.Done() {
			continue
		}
		ch, err := p.parse(view(m.Data))
		if err != nil {
			if a.malformed == "" {
				a.malformed = fmt.Sprintf("message %d is not a JSON chunk: %v", i, err)
			}
			continue
		}
		if ch.Error != "" { // the parser's own string (never a view)
			if a.inBand == "" {
				a.inBand = ch.Error
			}
			continue
		}
		if ch.Usage != nil {
			a.usage = ch.Usage
		}
		if ch.Timings != nil {
			a.timings = ch.Timings
		}
		if ch.Choices > 1 {
			a.multiChoice = true
		}
		if ch.FinishReason != "" {
			a.finish = ch.FinishReason
		}
		if !ch.Visible() {
			continue
		}
		a.chunkNs = append(a.chunkNs, m.TimeNs)
		if a.firstToken == 0 {
			a.firstToken = m.TimeNs
		}
		a.lastContent = m.TimeNs
		if ch.Content != "" {
			content.WriteString(ch.Content)
			if a.firstOutput == 0 {
				a.firstOutput = m.TimeNs
			}
		}
		if ch.Reasoning != "" {
			reasoning.WriteString(ch.Reasoning)
			if a.reasoningField == "" {
				a.reasoningField = ch.ReasoningField
			}
		}
	}
	if len(a.chunkNs) == 0 {
		a.chunkNs = nil // as before the slice was sized: a record without chunks has none
	}
	a.content, a.reasoning = content.String(), reasoning.String()
	return a
}

// view is s's bytes without a copy, for readers that never write to them (the JSON
// decoders): one allocation less per message of every stream.
func view(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// countTokens counts the joined text once: per-chunk sums differ at BPE boundaries.
func countTokens(s string) int { return tokens.Count(s) }
