package openai

import (
	"reflect"
	"strings"
	"testing"
)

// checkShared reads payloads as one stream of a client whose streams share skel, holding
// every reading to encoding/json's, and returns the stream's parser.
func checkShared(t *testing.T, skel *skeletons, payloads ...[]byte) *chunkParser {
	t.Helper()
	p := chunkParser{shared: skel}
	for _, data := range payloads {
		got, gerr := p.parse(data)
		want, werr := parseChunkV1(data)
		if (gerr != nil) != (werr != nil) {
			t.Fatalf("%q: err %v, encoding/json %v", data, gerr, werr)
		}
		if gerr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q read as %+v; encoding/json reads %+v", data, got, want)
		}
	}
	return &p
}

// simUsage is a usage chunk as the simulator sends it.
func simUsage(id, counts string) string {
	return `{"choices":[],"created":1764765000,"id":"` + id + `","model":"sim-model","object":"chat.completion.chunk","usage":{` + counts + `}}`
}

// TestSkeletonReadsTheNextStream: the role, finish and usage chunks of a client's second
// stream (another id, another time, other counts) are read from the skeletons its first
// stream's made (else the optimisation has silently gone), and read as encoding/json reads
// them.
func TestSkeletonReadsTheNextStream(t *testing.T) {
	stream := func(id, created, counts string) [][]byte {
		c := func(delta, finish string) []byte {
			return []byte(strings.NewReplacer("chatcmpl-b1-17", id, "1764765000", created).Replace(simChunk(delta, finish)))
		}
		return [][]byte{c(`"role":"assistant","content":""`, "null"), c(`"content":" w"`, "null"), c(`"content":" x"`, "null"),
			c(``, `"length"`), []byte(simUsage(id, counts))}
	}
	var skel skeletons
	first := checkShared(t, &skel, stream("chatcmpl-1", "1764765000", `"completion_tokens":2,"prompt_tokens":9,"total_tokens":11`)...)
	if first.skelHits != 0 || len(skel.all()) != 4 {
		t.Fatalf("first stream: %d skeleton reads, %d skeletons made; want 0 and 4 (role, content, finish, usage)", first.skelHits, len(skel.all()))
	}
	second := checkShared(t, &skel, stream("chatcmpl-22", "1764765001", `"completion_tokens":20,"prompt_tokens":123,"total_tokens":143`)...)
	if second.skelHits != 4 || second.hits != 1 || len(skel.all()) != 4 {
		t.Errorf("second stream: %d skeleton reads and %d template reads, %d skeletons; want 4 (role, first content, finish, usage), 1 (the second content chunk) and still 4",
			second.skelHits, second.hits, len(skel.all()))
	}
}

// Values put in a skeleton's slots: strings of every kind, numbers, and bytes that are not
// one JSON scalar of the slot's kind (which must not be read from the skeleton).
var slotValues = append(append([]string(nil), templateValues...),
	`0`, `-0`, `7`, `-12`, `1.5`, `1e3`, `2E+2`, `1.`, `.5`, `01`, `-`, `1e`, `9999999999999999999999`, `1,"x":2`, `"7"`, `true`, `{}`, `[]`, ``)

// TestSkeletonSlotsAgreeWithEncodingJSON: with a skeleton made, every value put in each of its
// slots reads as encoding/json reads the whole payload.
func TestSkeletonSlotsAgreeWithEncodingJSON(t *testing.T) {
	payloads := []string{
		simChunk(`"role":"assistant","content":""`, "null"),
		simChunk(``, `"length"`),
		simChunk(`"reasoning_content":"r","content":"c"`, `"stop"`),
		simUsage("chatcmpl-1", `"completion_tokens":2,"prompt_tokens":9,"total_tokens":11,"completion_tokens_details":{"reasoning_tokens":1},"prompt_tokens_details":{"cached_tokens":4}`),
		`{"id":"x","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":null}}`,
	}
	for _, pl := range payloads {
		var skel skeletons
		checkShared(t, &skel, []byte(pl))
		sks := skel.all()
		if len(sks) != 1 {
			t.Fatalf("%s: %d skeletons, want 1", pl, len(sks))
		}
		for _, s := range sks[0].slots {
			for _, v := range slotValues {
				checkShared(t, &skel, []byte(pl[:s.start]+v+pl[s.end:]))
			}
		}
	}
}

// TestSkeletonNeighbours: a payload that differs from a skeleton's by one byte anywhere reads
// as encoding/json reads it.
func TestSkeletonNeighbours(t *testing.T) {
	for _, pl := range []string{simChunk(``, `"length"`), simUsage("chatcmpl-1", `"completion_tokens":2,"prompt_tokens":9,"total_tokens":11`)} {
		var skel skeletons
		checkShared(t, &skel, []byte(pl))
		for i := range len(pl) {
			for _, c := range []byte{'x', '"', '}', ' ', 'n', '1', '\\', '.', '-', 0} {
				b := []byte(pl)
				b[i] = c
				checkShared(t, &skel, b)
			}
		}
	}
}

func FuzzSkeleton(f *testing.F) {
	f.Add([]byte(simChunk(``, `"length"`)), []byte(strings.Replace(simChunk(``, `"stop"`), "b1-17", "b2", 1)))
	f.Add([]byte(simUsage("a", `"completion_tokens":2,"prompt_tokens":9`)), []byte(simUsage("bb", `"completion_tokens":2.5,"prompt_tokens":9`)))
	f.Add([]byte(simChunk(`"role":"assistant","content":""`, "null")), []byte(simChunk(`"role":"assistant","content":"\u00e9"`, "null")))
	f.Fuzz(func(t *testing.T, first, second []byte) {
		var skel skeletons
		checkShared(t, &skel, first)
		checkShared(t, &skel, second, first, second)
	})
}

// skeletonPayloads are chunks of the shapes a stream sends, for FuzzSkeletonSlot.
var skeletonPayloads = []string{
	simChunk(`"role":"assistant","content":""`, "null"),
	simChunk(`"content":" w"`, "null"),
	simChunk(``, `"length"`),
	simChunk(`"reasoning_content":"r","content":"c"`, `"stop"`),
	simUsage("chatcmpl-1", `"completion_tokens":2,"prompt_tokens":9,"total_tokens":11,"completion_tokens_details":{"reasoning_tokens":1},"prompt_tokens_details":{"cached_tokens":4}`),
}

// FuzzSkeletonSlot puts any bytes in one slot of a skeleton's payload: the reading agrees
// with encoding/json's whether the skeleton reads it or not.
func FuzzSkeletonSlot(f *testing.F) {
	for i := range skeletonPayloads {
		for _, v := range slotValues {
			f.Add(uint8(i), uint8(i*3), []byte(v))
		}
	}
	f.Fuzz(func(t *testing.T, which, at uint8, value []byte) {
		pl := skeletonPayloads[int(which)%len(skeletonPayloads)]
		var skel skeletons
		checkShared(t, &skel, []byte(pl))
		slots := skel.all()[0].slots
		s := slots[int(at)%len(slots)]
		checkShared(t, &skel, []byte(pl[:s.start]+string(value)+pl[s.end:]))
	})
}
