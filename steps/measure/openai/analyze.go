package openai

import (
	"fmt"
	"strings"
	"sync"

	"github.com/perfdag/perfdag/schema"
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

// analyzer reads the messages of one response as they are dispatched: after each one was
// stamped (the SSE reader stamps a read before it looks at a byte), so parsing delays no
// timestamp, and no message's data is kept once it is read: a stream costs its texts and
// its stamps, not a copy of every chunk. The data it is given is only borrowed.
type analyzer struct {
	a                  analysis
	content, reasoning strings.Builder
	p                  chunkParser // the texts of its chunks are copied before the next parse
	n                  int         // messages read
}

// analyzers are the analyzers of streams that ended (release), reused with their parser's
// buffers: a fresh one per request was a kilobyte to allocate and clear.
var analyzers = sync.Pool{New: func() any { return &analyzer{} }}

// newAnalyzer returns an analyzer for a stream of the client whose skeletons are shared,
// asked for up to budget tokens (0: unknown): its stamps are sized for them up front (up to
// maxPresize), not grown by doubling a token at a time.
func newAnalyzer(shared *skeletons, budget int) *analyzer {
	z := analyzers.Get().(*analyzer)
	z.p.shared = shared
	if budget > 0 {
		z.a.chunkNs = make([]int64, 0, min(budget, maxPresize))
	}
	return z
}

// maxPresize bounds the stamps a stream is sized for before it streams (4 KiB): a budget far
// above the answer costs no more, and result trims what an answer left unused.
const maxPresize = 512

// release hands z back once its result was taken: what the result gave out (texts, stamps,
// usage) is no longer referenced by it.
func (z *analyzer) release() {
	p := z.p
	p.reset()
	p.shared = nil
	*z = analyzer{p: p}
	analyzers.Put(z)
}

// add reads the next message: its event type, its data (not kept) and its stamp.
func (z *analyzer) add(event string, data []byte, ns int64) {
	a := &z.a
	i := z.n
	z.n++
	if event == "error" {
		if a.sseError == "" {
			a.sseError = string(data)
			if a.sseError == "" {
				a.sseError = "(no data)"
			}
		}
		return
	}
	if string(data) == "[DONE]" {
		return
	}
	var ch Chunk
	if err := z.p.parseInto(data, &ch); err != nil {
		if a.malformed == "" {
			a.malformed = fmt.Sprintf("message %d is not a JSON chunk: %v", i, err)
		}
		return
	}
	if ch.Error != "" { // the parser's own string (never a view)
		if a.inBand == "" {
			a.inBand = ch.Error
		}
		return
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
		return
	}
	a.chunkNs = append(a.chunkNs, ns)
	if a.firstToken == 0 {
		a.firstToken = ns
	}
	a.lastContent = ns
	if ch.Content != "" {
		z.content.WriteString(ch.Content)
		if a.firstOutput == 0 {
			a.firstOutput = ns
		}
	}
	if ch.Reasoning != "" {
		z.reasoning.WriteString(ch.Reasoning)
		if a.reasoningField == "" {
			a.reasoningField = ch.ReasoningField
		}
	}
}

// messages is how many messages add was given (0 for a nil analyzer: no body was read).
func (z *analyzer) messages() int {
	if z == nil {
		return 0
	}
	return z.n
}

// result is what the messages said (nothing, for a nil analyzer).
func (z *analyzer) result() analysis {
	if z == nil {
		return analysis{}
	}
	a := z.a
	a.content, a.reasoning = z.content.String(), z.reasoning.String()
	if len(a.chunkNs) < cap(a.chunkNs)/2 {
		// an answer far shorter than its budget: the record keeps only its stamps
		a.chunkNs = append([]int64(nil), a.chunkNs...)
	}
	return a
}

// countTokens counts the joined text once: per-chunk sums differ at BPE boundaries.
func countTokens(s string) int { return tokens.Count(s) }
