package openai

import (
	"bytes"
	"mime"
	"strings"
	"testing"
)

// TestReadBoundedAtAndPast: a body of exactly the bound is read; one byte more is oversized.
func TestReadBoundedAtAndPast(t *testing.T) {
	for _, tc := range []struct {
		size     int
		oversize bool
	}{{MaxJSONBody, false}, {MaxJSONBody + 1, true}, {0, false}} {
		b, err := readBounded(bytes.NewReader(make([]byte, tc.size)), MaxJSONBody)
		if got := oversized(err); got != tc.oversize {
			t.Fatalf("%d bytes: oversized %v (err %v), want %v", tc.size, got, err, tc.oversize)
		}
		if !tc.oversize && (err != nil || len(b) != tc.size) {
			t.Fatalf("%d bytes: read %d, err %v", tc.size, len(b), err)
		}
	}
	if _, err := readBounded(strings.NewReader("abcd"), 3); err == nil || !strings.Contains(err.Error(), "larger than 3 bytes") {
		t.Fatalf("err %v, want it to name the bound", err)
	}
}

// TestMediaTypeAsParsed: the media types known without parsing are what mime reads.
func TestMediaTypeAsParsed(t *testing.T) {
	for _, ct := range []string{"text/event-stream", "text/event-stream; charset=utf-8", "Text/Event-Stream", "text/event-stream;charset=UTF-8",
		"application/json", "", "text/event-stream; x", "nonsense"} {
		want, _, _ := mime.ParseMediaType(ct)
		if got := mediaType(ct); got != want {
			t.Errorf("%q: %q, mime reads %q", ct, got, want)
		}
	}
}
