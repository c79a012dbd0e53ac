package openai

import (
	"bytes"
	"unsafe"

	"github.com/go-json-experiment/json/jsontext"
)

// chunkParser parses the chunks of one stream, in order. A stream's chunks differ, as a
// rule, only in their text: vLLM, SGLang and the simulator repeat id, object, created and
// model, and the choice around the delta, byte for byte. So once fastChunk has read a chunk
// whose delta carries exactly one text value (and nothing else carries one), that chunk is
// the template: a later payload whose bytes before and after that value are the template's
// own is the template with another value there, and only that value is decoded, by
// jsontext.AppendUnquote, which accepts exactly one JSON string in valid UTF-8 and nothing
// else (so the bytes around it keep the structure they have in the template). encoding/json
// then reads the same fields from both payloads, but that one text, and the Chunk is made
// from the template's fields by the same wireChunk.chunk. Any other payload is parsed
// afresh, as ParseChunk does, and a fresh one of the template's kind becomes the template.
// FuzzChunkParser checks the readings agree with encoding/json's.
//
// The texts of a Chunk it returns are valid until the next call (views of a reused buffer):
// a caller keeps them by copying.
type chunkParser struct {
	tmpl   []byte   // the template payload (nil: none yet)
	spot   textSpot // where its text value is
	choice [1]wireChoice
	delta  wireDelta
	finish string // the template's finish_reason, when it had one
	text   []byte // the latest unquoted text
	str    string // a view of text
	hits   int    // payloads read from the template (for tests)
}

// parse decodes one payload as ParseChunk does.
func (p *chunkParser) parse(data []byte) (Chunk, error) {
	if c, ok := p.fromTemplate(data); ok {
		p.hits++
		return c, nil
	}
	c, spot, ok := fastChunkSpot(data)
	if !ok {
		return parseChunkV1(data)
	}
	if spot.field >= 0 {
		p.setTemplate(data, spot, c)
	}
	return c, nil
}

// setTemplate makes data, read as c with its text value at spot, the template.
func (p *chunkParser) setTemplate(data []byte, spot textSpot, c Chunk) {
	p.tmpl = append(p.tmpl[:0], data...)
	p.spot = spot
	p.choice[0] = wireChoice{}
	if c.FinishReason != "" { // an empty or null finish_reason reads alike
		p.finish = c.FinishReason
		p.choice[0].FinishReason = &p.finish
	}
}

// fromTemplate reads data as the template with another text value, if it is one.
func (p *chunkParser) fromTemplate(data []byte) (Chunk, bool) {
	if p.tmpl == nil {
		return Chunk{}, false
	}
	pre, post := p.tmpl[:p.spot.start], p.tmpl[p.spot.end:]
	if len(data) < len(pre)+len(post)+2 || !bytes.Equal(data[:len(pre)], pre) || !bytes.Equal(data[len(data)-len(post):], post) {
		return Chunk{}, false
	}
	var err error
	if p.text, err = jsontext.AppendUnquote(p.text[:0], data[len(pre):len(data)-len(post)]); err != nil {
		return Chunk{}, false
	}
	p.str = unsafe.String(unsafe.SliceData(p.text), len(p.text))
	p.delta = wireDelta{}
	switch p.spot.field {
	case 0:
		p.delta.Content = &p.str
	case 1:
		p.delta.ReasoningContent = &p.str
	case 2:
		p.delta.Reasoning = &p.str
	}
	p.choice[0].Delta = &p.delta
	w := wireChunk{Choices: p.choice[:]}
	return w.chunk(), true
}
