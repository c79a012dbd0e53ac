package openai

import (
	"reflect"
	"strings"
	"testing"
)

// simChunk is a chunk as vLLM and the simulator send it: id, object, created and model
// around one choice.
func simChunk(delta, finish string) string {
	return `{"id":"chatcmpl-b1-17","object":"chat.completion.chunk","created":1764765000,"model":"sim-model","choices":[{"index":0,"delta":{` +
		delta + `},"logprobs":null,"finish_reason":` + finish + `}]}`
}

// Values put where a template's text is: strings of every kind, and bytes that are not one
// JSON string (which must not be read from the template).
var templateValues = []string{
	`" the"`, `""`, `"é\n\"x\""`, `"\u00e9\ud83d\ude00"`, `"\ud800"`, "\"a\xff\"", `"a\"`, `"a" `, ` "a"`,
	`"a","content":"b"`, `"a"},"delta":{"content":"b"`, `"a","reasoning":"r"`, `5`, `null`, `"a" "b"`, `"\/\b\f\r\t\\"`,
	`"a\u0000"`, "\"tab\there\"", `"ſ"`,
}

// checkParser feeds payloads to one chunkParser and holds every reading to encoding/json's
// (ParseChunk's: the fast path agrees with it).
func checkParser(t *testing.T, payloads ...[]byte) *chunkParser {
	t.Helper()
	var p chunkParser
	for _, data := range payloads {
		got, gerr := p.parse(data)
		want, werr := parseChunkV1(data)
		if (gerr != nil) != (werr != nil) {
			t.Fatalf("after a template, %q: err %v, encoding/json %v", data, gerr, werr)
		}
		if gerr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("after a template, %q read as %+v; encoding/json reads %+v", data, got, want)
		}
	}
	return &p
}

// TestChunkParserAgreesWithEncodingJSON: after each template shape, every value put in
// its text's place reads as encoding/json reads the whole payload.
func TestChunkParserAgreesWithEncodingJSON(t *testing.T) {
	templates := [][2]string{ // the payload around %s, and a value to make it a template
		{simChunk(`"content":%s`, "null"), `" a"`},
		{simChunk(`"role":"assistant","content":%s`, "null"), `""`},
		{simChunk(`"reasoning_content":%s`, "null"), `" r"`},
		{simChunk(`"reasoning":%s,"content":null`, "null"), `" r"`},
		{simChunk(`"content":%s`, `"length"`), `" a"`},
		{`{"choices":[{"finish_reason":null,"index":0,"delta":{"content":%s}}],"created":1,"id":"x","object":"chat.completion.chunk"}`, `"a"`},
		{`{"choices":[{"delta":{"content":%s},"message":{}}]}`, `"a"`},
		{`{"choices":[{"delta":{"content":%s},"message":{"content":null}}]}`, `"a"`},
	}
	for _, tm := range templates {
		first := []byte(strings.Replace(tm[0], "%s", tm[1], 1))
		for _, v := range templateValues {
			checkParser(t, first, []byte(strings.Replace(tm[0], "%s", v, 1)))
		}
	}
}

// TestChunkParserNeighbours: a payload that differs from the template by one byte outside
// its text, with the text changed or not, reads as encoding/json reads it.
func TestChunkParserNeighbours(t *testing.T) {
	for _, tm := range []string{simChunk(`"content":%s`, "null"), simChunk(`"reasoning_content":%s`, `"stop"`)} {
		first := strings.Replace(tm, "%s", `" a"`, 1)
		at := strings.Index(tm, "%s")
		for i := range len(tm) - 2 {
			for _, c := range []byte{'x', '"', '}', ' ', 'n', '1'} {
				b := []byte(tm)
				if b[i] == '%' || b[i] == 's' && i == at+1 {
					continue
				}
				b[i] = c
				for _, v := range []string{`" a"`, `"b"`} {
					checkParser(t, []byte(first), []byte(strings.Replace(string(b), "%s", v, 1)))
				}
			}
		}
	}
}

// TestChunkParserUsesTheTemplate: an ordinary stream is read from its template after its
// first content chunk (else the optimisation has silently gone), and a change of shape
// (another id, the finish chunk, usage) is read afresh and correctly.
func TestChunkParserUsesTheTemplate(t *testing.T) {
	in := [][]byte{[]byte(simChunk(`"role":"assistant","content":""`, "null"))}
	for i := range 100 {
		in = append(in, []byte(simChunk(`"content":" w`+strings.Repeat("x", i%3)+`"`, "null")))
	}
	in = append(in, []byte(strings.Replace(simChunk(`"content":" y"`, "null"), "b1-17", "b1-18", 1)),
		[]byte(simChunk(``, `"length"`)), []byte(usage), []byte(simChunk(`"content":" z"`, "null")))
	p := checkParser(t, in...)
	if p.hits != 99 {
		t.Errorf("%d of 100 content chunks read from the template, want all but the first", p.hits)
	}
}

func FuzzChunkParser(f *testing.F) {
	for _, v := range templateValues {
		f.Add([]byte(simChunk(`"content":" a"`, "null")), []byte(simChunk(`"content":`+v, "null")))
	}
	f.Add([]byte(content(" a")), []byte(reasoningOf(FieldReasoning, "x")))
	f.Add([]byte(reasoningOf(FieldReasoningContent, "x")), []byte(reasoningOf(FieldReasoningContent, "")))
	f.Fuzz(func(t *testing.T, first, second []byte) {
		checkParser(t, first, second, first)
	})
}

// TestChunkParserTemplateFinishChanges: a template with a finish_reason followed by one
// without reads the second's chunks with none (the template's fields are its own, not a
// former template's).
func TestChunkParserTemplateFinishChanges(t *testing.T) {
	p := checkParser(t, []byte(simChunk(`"content":" a"`, `"length"`)), []byte(simChunk(`"content":" b"`, "null")),
		[]byte(simChunk(`"content":" c"`, "null")), []byte(simChunk(`"reasoning":" r"`, `"stop"`)), []byte(simChunk(`"reasoning":" s"`, `"stop"`)),
		[]byte(simChunk(`"reasoning":""`, `"stop"`)))
	if p.hits != 3 {
		t.Errorf("%d chunks read from a template, want 3", p.hits)
	}
}
