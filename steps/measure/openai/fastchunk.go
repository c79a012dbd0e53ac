package openai

import (
	"bytes"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// The fast path of ParseChunk. A stream is hundreds of chunks of one shape,
// {"id":…,"choices":[{"index":0,"delta":{"content":"…"},"finish_reason":null}]}, and
// reflection-driven encoding/json spent more CPU on them than everything else the client
// does per token. fastChunk walks such a payload with the encoding/json/v2 tokenizer
// (github.com/go-json-experiment/json/jsontext), which also checks its syntax, and fills the
// same wireChunk. It gives up (ok false, and encoding/json decides) on everything whose
// encoding/json reading it does not reproduce exactly: usage, error or timings that are not
// null, more than one choice, tool calls, a value of an unexpected type, a repeated field, a
// name that differs from a field's only by case (encoding/json matches names without case),
// invalid UTF-8, anything after the object. FuzzParseChunk checks the two readings agree.

// fastDecoder is one walk's reusable state.
type fastDecoder struct {
	in     bytes.Buffer
	dec    *jsontext.Decoder
	choice [1]wireChoice
	delta  [2]wireDelta // delta, message
	finish string
	texts  [2][3]string // delta's and message's content, reasoning_content, reasoning
	// spot is where the walk read a text value of the delta; spots counts the text
	// values read in delta and message: a payload with one, in its delta, can be a
	// template (chunkParser).
	spot    textSpot
	spots   [2]int
	scratch []byte // an unquoted string before it is copied
	// slots are the scalar values the walk read, in order, outside the values it skipped
	// whole, for a skeleton of the payload; noSkel says it cannot be one (a message's text).
	slots  []slot
	noSkel bool
}

// textSpot locates a text value of a delta in its payload: data[start:end] is the JSON
// string (quotes included) of field (0 content, 1 reasoning_content, 2 reasoning; -1 when
// the payload has no single such value).
type textSpot struct {
	field, start, end int
}

var fastDecoders = sync.Pool{New: func() any {
	f := &fastDecoder{}
	f.dec = jsontext.NewDecoder(&f.in, jsontext.AllowDuplicateNames(true))
	return f
}}

// Field names encoding/json would match, by object.
var (
	topNames    = []string{"choices", "usage", "error", "timings"}
	choiceNames = []string{"delta", "message", "finish_reason"}
	deltaNames  = []string{"content", "reasoning_content", "reasoning", "tool_calls"}
	usageNames  = []string{"prompt_tokens", "completion_tokens", "completion_tokens_details", "prompt_tokens_details"}
	detailNames = []string{"reasoning_tokens", "cached_tokens"}
)

// fastChunk decodes data as json.Unmarshal into a wireChunk would and returns its Chunk,
// or reports !ok.
func fastChunk(data []byte) (Chunk, bool) {
	c, _, _, ok := fastChunkSpot(data, false)
	return c, ok
}

// fastChunkSpot is fastChunk that also tells where the payload's text value is, when it has
// exactly one, in its delta (spot.field -1 otherwise), and, with skel, returns the payload's
// skeleton when it can have one (nil otherwise).
func fastChunkSpot(data []byte, skel bool) (c Chunk, spot textSpot, sk *skeleton, ok bool) {
	f := fastDecoders.Get().(*fastDecoder)
	defer fastDecoders.Put(f)
	f.in = *bytes.NewBuffer(data)
	f.dec.Reset(&f.in, jsontext.AllowDuplicateNames(true))
	f.spots = [2]int{}
	f.slots, f.noSkel = f.slots[:0], false
	var w wireChunk // its pointers and slice point into f, so it is read before f goes back
	if !f.top(&w) {
		return Chunk{}, textSpot{}, nil, false
	}
	if _, err := f.dec.ReadToken(); err != io.EOF { // only whitespace may follow
		return Chunk{}, textSpot{}, nil, false
	}
	spot = textSpot{field: -1}
	if f.spots == [2]int{1, 0} {
		spot = f.spot
	}
	if skel && !f.noSkel {
		sk = newSkeleton(data, f.slots, &w)
	}
	return w.chunk(), spot, sk, true
}

// mark records the scalar value v the walk just read as a slot of the payload's skeleton.
func (f *fastDecoder) mark(v jsontext.Value, kind byte, role int8) {
	end := int(f.dec.InputOffset())
	f.slots = append(f.slots, slot{start: end - len(v), end: end, kind: kind, role: role})
}

// open reads the opening delimiter of an object or array.
func (f *fastDecoder) open(kind jsontext.Kind) bool {
	if f.dec.PeekKind() != kind {
		return false
	}
	_, err := f.dec.ReadToken()
	return err == nil
}

// name reads an object member's name; tok.String() is the name unescaped (not kept, so
// not allocated).
func (f *fastDecoder) name() (jsontext.Token, bool) {
	tok, err := f.dec.ReadToken()
	return tok, err == nil
}

// skip passes over the value of a member no field takes, unless its name is one encoding/json
// would match case-insensitively to a field.
func (f *fastDecoder) skip(name string, fields []string) bool {
	for _, known := range fields {
		if strings.EqualFold(name, known) {
			return false
		}
	}
	return f.skipValue()
}

// skipValue passes over a value; a string or a number is a slot of the skeleton (an object or
// an array is part of its structure, byte for byte).
func (f *fastDecoder) skipValue() bool {
	switch k := f.dec.PeekKind(); k {
	case '"', '0':
		v, err := f.dec.ReadValue()
		if err != nil {
			return false
		}
		f.mark(v, byte(k), roleNone)
		return true
	}
	return f.dec.SkipValue() == nil
}

// member reads one member's name. A name of names (its index returned) is marked seen — a
// repeat fails the read, as encoding/json would keep the last — and a null value is read
// (null true); any other name's value is skipped (index -1).
func (f *fastDecoder) member(names []string, seen []bool) (i int, null, ok bool) {
	tok, ok := f.name()
	if !ok {
		return -1, false, false
	}
	name := tok.String()
	if i = slices.Index(names, name); i < 0 {
		return -1, false, f.skip(name, names)
	}
	if seen[i] {
		return -1, false, false
	}
	seen[i] = true
	return i, f.null(), true
}

// null reads a null and reports whether the value was one.
func (f *fastDecoder) null() bool {
	if f.dec.PeekKind() != 'n' {
		return false
	}
	_, err := f.dec.ReadToken()
	return err == nil
}

func (f *fastDecoder) top(w *wireChunk) bool {
	if !f.open('{') {
		return false
	}
	var choices, usage bool
	for f.dec.PeekKind() != '}' {
		tok, ok := f.name()
		if !ok {
			return false
		}
		switch name := tok.String(); name {
		case "choices":
			if choices {
				return false
			}
			choices = true
			if !f.choices(w) {
				return false
			}
		case "usage":
			if usage {
				return false
			}
			usage = true
			if !f.null() && !f.usage(w) { // a null leaves the field as absent
				return false
			}
		case "error", "timings":
			if !f.null() { // a null leaves the field as absent
				return false
			}
		default:
			if !f.skip(name, topNames) {
				return false
			}
		}
	}
	_, err := f.dec.ReadToken()
	return err == nil
}

func (f *fastDecoder) choices(w *wireChunk) bool {
	if f.null() {
		return true
	}
	if !f.open('[') {
		return false
	}
	if f.dec.PeekKind() != ']' {
		f.choice[0] = wireChoice{}
		if !f.choiceObject(&f.choice[0]) || f.dec.PeekKind() != ']' { // a second choice: encoding/json decides
			return false
		}
		w.Choices = f.choice[:]
	} else {
		w.Choices = f.choice[:0]
	}
	_, err := f.dec.ReadToken()
	return err == nil
}

func (f *fastDecoder) choiceObject(ch *wireChoice) bool {
	if !f.open('{') {
		return false
	}
	var seen [3]bool
	for f.dec.PeekKind() != '}' {
		tok, ok := f.name()
		if !ok {
			return false
		}
		switch name := tok.String(); name {
		case "delta", "message":
			i := 0
			if name == "message" {
				i = 1
			}
			if seen[i] {
				return false
			}
			seen[i] = true
			if f.null() {
				continue
			}
			f.delta[i] = wireDelta{}
			if !f.deltaObject(&f.delta[i], i) {
				return false
			}
			if i == 0 {
				ch.Delta = &f.delta[0]
			} else {
				ch.Message = &f.delta[1]
			}
		case "finish_reason":
			if seen[2] {
				return false
			}
			seen[2] = true
			if f.null() {
				continue
			}
			s, ok := f.finishReason()
			if !ok {
				return false
			}
			f.finish = s
			ch.FinishReason = &f.finish
		default:
			if !f.skip(name, choiceNames) {
				return false
			}
		}
	}
	_, err := f.dec.ReadToken()
	return err == nil
}

// deltaObject reads a delta (which 0) or a message (which 1).
func (f *fastDecoder) deltaObject(d *wireDelta, which int) bool {
	if !f.open('{') {
		return false
	}
	var seen [4]bool
	for f.dec.PeekKind() != '}' {
		i, null, ok := f.member(deltaNames, seen[:])
		switch {
		case !ok || i == 3 && !null: // tool_calls: only a null is read here
			return false
		case i < 0 || null || i == 3:
			continue
		}
		raw, ok := f.strValue()
		if !ok {
			return false
		}
		if which == 0 {
			end := int(f.dec.InputOffset())
			f.spot = textSpot{field: i, start: end - len(raw), end: end}
			f.mark(raw, '"', roleContent+int8(i))
		} else {
			f.noSkel = true // a message: one per non-streamed answer, never worth a skeleton
		}
		f.spots[which]++
		var err error
		if f.scratch, err = jsontext.AppendUnquote(f.scratch[:0], raw); err != nil {
			return false
		}
		t := &f.texts[which]
		t[i] = string(f.scratch)
		if cap(f.scratch) > 64<<10 {
			f.scratch = nil // a pooled decoder keeps no large buffer
		}
		switch i {
		case 0:
			d.Content = &t[0]
		case 1:
			d.ReasoningContent = &t[1]
		case 2:
			d.Reasoning = &t[2]
		}
	}
	_, err := f.dec.ReadToken()
	return err == nil
}

// strValue reads a string value as it is in the payload (quoted, escapes kept); valid until
// the next read.
func (f *fastDecoder) strValue() (jsontext.Value, bool) {
	if f.dec.PeekKind() != '"' {
		return nil, false
	}
	v, err := f.dec.ReadValue()
	return v, err == nil
}

// finishReason reads the finish_reason string, unescaped, as a slot of the skeleton.
func (f *fastDecoder) finishReason() (string, bool) {
	if f.dec.PeekKind() != '"' {
		return "", false
	}
	v, err := f.dec.ReadValue()
	if err != nil {
		return "", false
	}
	f.mark(v, '"', roleFinish)
	if f.scratch, err = jsontext.AppendUnquote(f.scratch[:0], v); err != nil {
		return "", false
	}
	return finishString(f.scratch), true // a copy: the decoder's buffer is reused
}
