package openai

import (
	"bytes"
	"strconv"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/go-json-experiment/json/jsontext"
)

// A skeleton is a payload fastChunk read, reduced to its structure: the bytes between its
// scalar values (every string and number outside the objects and arrays it skipped whole) and,
// for each value, its kind and what it means — a text of the delta, the finish reason, a usage
// count, or nothing (id, created, model, index…). Every stream repeats a few of them byte for
// byte but for those values: the role chunk, the finish chunk and the usage chunk differ from
// one request to the next only in id, created and the counts. A payload whose bytes between
// its values are the skeleton's own, each value one JSON scalar of the skeleton's kind there,
// is read by encoding/json as the skeleton's payload with those values in place (the names,
// the nesting, the literals and the whitespace are the same bytes), so its Chunk is the
// skeleton's wireChunk with them: each string is checked and unquoted by
// jsontext.AppendUnquote, each number by the JSON grammar (a count also by strconv.Atoi, as
// encoding/json takes an int); anything else is parsed afresh. A client keeps a few, shared
// by its streams (skeletons), so a short answer's role, finish and usage chunks cost a
// comparison each, not a walk of the tokenizer. FuzzSkeleton checks the readings agree with
// encoding/json's.
type skeleton struct {
	data  []byte // the payload it was made from
	slots []slot // its values, in order
	shape shape
	texts int // slots that are delta texts
}

// slot is one scalar value of a payload: data[start:end], a string ('"') or a number ('0').
type slot struct {
	start, end int
	kind       byte
	role       int8
}

// Roles of a slot: what its value means in the wireChunk.
const (
	roleNone             int8 = iota
	roleContent               // delta.content
	roleReasoningContent      // delta.reasoning_content
	roleReasoning             // delta.reasoning
	roleFinish                // choices[0].finish_reason
	rolePrompt                // usage.prompt_tokens
	roleCompletion            // usage.completion_tokens
	roleReasoningTokens       // usage.completion_tokens_details.reasoning_tokens
	roleCached                // usage.prompt_tokens_details.cached_tokens
)

// shape is which of the wireChunk's objects the payload has (not null): a value's pointer is
// set when its slot is there.
type shape struct {
	choices                   int // 0 or 1 (a skeleton has at most one choice)
	delta                     bool
	usage, completion, prompt bool // usage, its completion_tokens_details, its prompt_tokens_details
}

// maxSlots bounds a skeleton's values: a chunk has a dozen; a payload with more is parsed.
const maxSlots = 32

// newSkeleton makes the skeleton of data, which fastChunk read as w with these slots, or nil
// when it cannot have one.
func newSkeleton(data []byte, slots []slot, w *wireChunk) *skeleton {
	if len(slots) > maxSlots || len(w.Choices) > 1 {
		return nil
	}
	sk := &skeleton{data: bytes.Clone(data), slots: append([]slot(nil), slots...)}
	if len(w.Choices) == 1 {
		ch := &w.Choices[0]
		if ch.Message != nil {
			return nil
		}
		sk.shape.choices, sk.shape.delta = 1, ch.Delta != nil
	}
	if u := w.Usage; u != nil {
		sk.shape.usage, sk.shape.completion, sk.shape.prompt = true, u.CompletionTokensDetails != nil, u.PromptTokensDetails != nil
	}
	for _, s := range slots {
		if s.role >= roleContent && s.role <= roleReasoning {
			sk.texts++
		}
	}
	return sk
}

// skeletons are the skeletons a client has made, shared by its streams: read without a lock
// (an immutable list), replaced whole under mu when one is added.
type skeletons struct {
	list atomic.Pointer[[]*skeleton]
	mu   sync.Mutex
	next int // the slot the next skeleton takes once the list is full
}

// maxSkeletons bounds a client's skeletons: a server sends four or five shapes of chunk.
const maxSkeletons = 8

// all returns the current list (nil for a nil set).
func (s *skeletons) all() []*skeleton {
	if s == nil {
		return nil
	}
	if l := s.list.Load(); l != nil {
		return *l
	}
	return nil
}

// add puts sk in the set, in place of the oldest once it is full.
func (s *skeletons) add(sk *skeleton) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := s.all()
	l := make([]*skeleton, len(cur), max(len(cur), min(len(cur)+1, maxSkeletons)))
	copy(l, cur)
	if len(l) < maxSkeletons {
		l = append(l, sk)
	} else {
		l[s.next%maxSkeletons] = sk
		s.next++
	}
	s.list.Store(&l)
}

// skelRead is the reusable state of reading payloads from skeletons (one per chunkParser):
// a Chunk read from a skeleton has texts that are views of these buffers, valid until the
// next read.
type skelRead struct {
	vals    [maxSlots][3]int // each slot's value, data[v[0]:v[1]], and whether it is plain (scanString)
	choice  [1]wireChoice
	delta   wireDelta
	text    [3][]byte
	str     [3]string
	finish  string
	scratch []byte
}

// read reads data from sk, or reports !ok when data is not sk's payload with other values.
func (sk *skeleton) read(data []byte, r *skelRead) (Chunk, bool) {
	pos, from := 0, 0
	for i, s := range sk.slots {
		lit := sk.data[from:s.start]
		if len(data)-pos < len(lit) || !bytes.Equal(data[pos:pos+len(lit)], lit) {
			return Chunk{}, false
		}
		pos += len(lit)
		end, plain := -1, false
		if s.kind == '"' {
			end, plain = scanString(data, pos)
		} else {
			end = scanNumber(data, pos)
		}
		if end < 0 {
			return Chunk{}, false
		}
		r.vals[i] = [3]int{pos, end, b2i(plain)}
		pos, from = end, s.end
	}
	if tail := sk.data[from:]; len(data)-pos != len(tail) || !bytes.Equal(data[pos:], tail) {
		return Chunk{}, false
	}
	var w wireChunk
	var d *wireDelta
	if sk.shape.choices == 1 {
		r.choice[0] = wireChoice{}
		w.Choices = r.choice[:]
		if sk.shape.delta {
			r.delta = wireDelta{}
			d = &r.delta
			r.choice[0].Delta = d
		}
	} else {
		w.Choices = r.choice[:0]
	}
	var u *usageValues
	if sk.shape.usage {
		u = newUsageValues(sk.shape)
		w.Usage = &u.wire
	}
	for i, s := range sk.slots {
		v, plain := data[r.vals[i][0]:r.vals[i][1]], r.vals[i][2] == 1
		switch s.role {
		case roleNone:
			if s.kind == '"' && !plain {
				var err error
				if r.scratch, err = jsontext.AppendUnquote(r.scratch[:0], v); err != nil {
					return Chunk{}, false
				}
			}
		case roleContent, roleReasoningContent, roleReasoning:
			k := s.role - roleContent
			if plain { // its bytes between the quotes are the text
				r.text[k] = append(r.text[k][:0], v[1:len(v)-1]...)
			} else {
				var err error
				if r.text[k], err = jsontext.AppendUnquote(r.text[k][:0], v); err != nil {
					return Chunk{}, false
				}
			}
			r.str[k] = unsafe.String(unsafe.SliceData(r.text[k]), len(r.text[k]))
			switch k {
			case 0:
				d.Content = &r.str[0]
			case 1:
				d.ReasoningContent = &r.str[1]
			case 2:
				d.Reasoning = &r.str[2]
			}
		case roleFinish:
			var err error
			if r.scratch, err = jsontext.AppendUnquote(r.scratch[:0], v); err != nil {
				return Chunk{}, false
			}
			r.finish = finishString(r.scratch)
			r.choice[0].FinishReason = &r.finish
		default: // a usage count
			n, err := strconv.Atoi(string(v))
			if err != nil {
				return Chunk{}, false // 2.0, 1e3: encoding/json's error to make
			}
			u.set(s.role, n)
		}
	}
	return w.chunk(), true
}

// usageValues is a usage read from a skeleton: the wireUsage and the counts its pointers
// point to, in one allocation (the Chunk keeps the pointers).
type usageValues struct {
	wire       wireUsage
	completion struct {
		ReasoningTokens *int `json:"reasoning_tokens"`
	}
	prompt struct {
		CachedTokens *int `json:"cached_tokens"`
	}
	n [4]int
}

func newUsageValues(sh shape) *usageValues {
	u := &usageValues{}
	if sh.completion {
		u.wire.CompletionTokensDetails = &u.completion
	}
	if sh.prompt {
		u.wire.PromptTokensDetails = &u.prompt
	}
	return u
}

// set puts count n of role in place.
func (u *usageValues) set(role int8, n int) {
	k := role - rolePrompt
	u.n[k] = n
	switch role {
	case rolePrompt:
		u.wire.PromptTokens = &u.n[k]
	case roleCompletion:
		u.wire.CompletionTokens = &u.n[k]
	case roleReasoningTokens:
		u.completion.ReasoningTokens = &u.n[k]
	case roleCached:
		u.prompt.CachedTokens = &u.n[k]
	}
}

// finishString is an unquoted finish_reason as a string of its own; the usual ones are
// constants, so reading them allocates nothing.
func finishString(b []byte) string {
	for _, s := range [...]string{"stop", "length", "tool_calls", "content_filter", "function_call", "abort", "error"} {
		if string(b) == s {
			return s
		}
	}
	return string(b)
}

// scanString returns the end of the JSON string that begins at data[i], or -1: the first
// quote not escaped ends it; a byte below 0x20 makes it invalid. plain says it holds no escape
// and no byte past ASCII, so it is valid and its bytes between the quotes are its value;
// otherwise its escapes and UTF-8 are checked by the jsontext.AppendUnquote that reads it.
func scanString(data []byte, i int) (end int, plain bool) {
	if i >= len(data) || data[i] != '"' {
		return -1, false
	}
	plain = true
	for j := i + 1; j < len(data); j++ {
		switch c := data[j]; {
		case c == '"':
			return j + 1, plain
		case c == '\\':
			plain = false
			j++
		case c < 0x20:
			return -1, false
		case c >= 0x80:
			plain = false
		}
	}
	return -1, false
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// scanNumber returns the end of the JSON number that begins at data[i] (the grammar's
// longest match), or -1 when none does.
func scanNumber(data []byte, i int) int {
	n := len(data)
	digits := func(j int) int {
		for j < n && data[j] >= '0' && data[j] <= '9' {
			j++
		}
		return j
	}
	j := i
	if j < n && data[j] == '-' {
		j++
	}
	switch {
	case j < n && data[j] == '0':
		j++
	case j < n && data[j] >= '1' && data[j] <= '9':
		j = digits(j)
	default:
		return -1
	}
	if j < n && data[j] == '.' {
		k := digits(j + 1)
		if k == j+1 {
			return -1
		}
		j = k
	}
	if j < n && (data[j] == 'e' || data[j] == 'E') {
		j++
		if j < n && (data[j] == '+' || data[j] == '-') {
			j++
		}
		k := digits(j)
		if k == j {
			return -1
		}
		j = k
	}
	return j
}
