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
	kept   []byte   // tmpl's buffer, kept for the next stream (release)
	spot   textSpot // where its text value is
	finish string   // the template's finish_reason ("" for none or null)
	text   []byte   // the latest unquoted text
	str    string   // a view of text
	hits   int      // payloads read from the template (for tests)
	// shared are the client's skeletons (nil: none), tried after the template: a payload
	// neither reads is parsed afresh and, up to maxLearn a stream, becomes a skeleton.
	shared   *skeletons
	sr       skelRead
	learned  int
	next     int // the skeleton to try first
	skelHits int // payloads read from a skeleton (for tests)
}

// maxLearn bounds the skeletons one stream adds: a server whose every chunk differs in its
// structure (logprobs, say) costs a walk a chunk, not a skeleton a chunk.
const maxLearn = 4

// parse decodes one payload as ParseChunk does.
func (p *chunkParser) parse(data []byte) (Chunk, error) {
	var c Chunk
	err := p.parseInto(data, &c)
	return c, err
}

// parseInto is parse writing the Chunk to *c (the caller's variable, zero on entry): one
// chunk a token is not copied out through the calls that make it.
func (p *chunkParser) parseInto(data []byte, c *Chunk) error {
	if p.fromTemplate(data, c) {
		p.hits++
		return nil
	}
	all := p.shared.all()
	for k := range all {
		// from the skeleton after the last one read: a stream's chunks come in the order
		// their skeletons were made (role, content, finish, usage), so the first try hits
		i := (p.next + k) % len(all)
		sk := all[i]
		if r, ok := sk.read(data, &p.sr); ok {
			*c = r
			p.skelHits++
			p.next = i + 1
			if sk.texts == 1 {
				for i, s := range sk.slots {
					if s.role >= roleContent && s.role <= roleReasoning {
						p.setTemplate(data, textSpot{field: int(s.role - roleContent), start: p.sr.vals[i][0], end: p.sr.vals[i][1]}, r)
					}
				}
			}
			return nil
		}
	}
	r, spot, sk, ok := fastChunkSpot(data, p.shared != nil && p.learned < maxLearn)
	if !ok {
		var err error
		*c, err = parseChunkV1(data)
		return err
	}
	*c = r
	if sk != nil {
		p.shared.add(sk)
		p.learned++
	}
	if spot.field >= 0 {
		p.setTemplate(data, spot, r)
	}
	return nil
}

// setTemplate makes data, read as c with its text value at spot, the template.
func (p *chunkParser) setTemplate(data []byte, spot textSpot, c Chunk) {
	p.tmpl = append(p.kept[:0], data...)
	p.kept = p.tmpl
	p.spot = spot
	p.finish = c.FinishReason // an empty or null finish_reason reads alike
}

// fromTemplate reads data into *c (zero) as the template with another text value, if it is
// one.
func (p *chunkParser) fromTemplate(data []byte, c *Chunk) bool {
	if p.tmpl == nil {
		return false
	}
	pre, post := p.tmpl[:p.spot.start], p.tmpl[p.spot.end:]
	if len(data) < len(pre)+len(post)+2 || !bytes.Equal(data[:len(pre)], pre) || !bytes.Equal(data[len(data)-len(post):], post) {
		return false
	}
	var err error
	if p.text, err = jsontext.AppendUnquote(p.text[:0], data[len(pre):len(data)-len(post)]); err != nil {
		return false
	}
	p.str = unsafe.String(unsafe.SliceData(p.text), len(p.text))
	// what wireChunk.chunk makes of one choice whose delta holds this text at the
	// template's field and the template's finish_reason (built directly: this runs for
	// every token)
	c.Choices, c.FinishReason = 1, p.finish
	switch {
	case p.spot.field == 0:
		c.Content = p.str
	case p.str == "":
	case p.spot.field == 1:
		c.Reasoning, c.ReasoningField = p.str, FieldReasoningContent
	case p.spot.field == 2:
		c.Reasoning, c.ReasoningField = p.str, FieldReasoning
	}
	return true
}

// reset makes p a parser of a new stream of the same client, keeping its buffers (up to
// maxKept each).
func (p *chunkParser) reset() {
	kept, text, shared := p.kept, p.text[:0], p.shared
	sr := skelRead{scratch: p.sr.scratch[:0]}
	for k := range sr.text {
		sr.text[k] = keep(p.sr.text[k])
	}
	*p = chunkParser{kept: keep(kept), text: keep(text), shared: shared, sr: sr}
}

// maxKept bounds a buffer a reset parser keeps.
const maxKept = 16 << 10

func keep(b []byte) []byte {
	if cap(b) > maxKept {
		return nil
	}
	return b[:0]
}
