package openai

import (
	"bytes"
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
