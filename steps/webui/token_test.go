package webui

import (
	"strings"
	"testing"
)

// The bearer scheme is matched without regard to case (RFC 7235), with one or more spaces
// before the token; another scheme, or a token that differs, is refused.
func TestBearerSchemeAnyCase(t *testing.T) {
	root := t.TempDir()
	finished(t, root, "tiny-1")
	const tok = "0123456789abcdef-serve"
	ts := serve(t, Options{Roots: []string{root}, Token: tok})
	for auth, want := range map[string]int{
		"Bearer " + tok: 200, "bearer " + tok: 200, "BEARER " + tok: 200, "bEaReR  " + tok: 200,
		"Basic " + tok: 401, "bearer" + tok: 401, "bearer " + tok + "x": 401, "bearer": 401, "bearer ": 401, tok: 401,
	} {
		if code, _ := get(t, ts, "/", "Authorization", auth, "Host", "box.example"); code != want {
			t.Errorf("Authorization %q: %d, want %d", auth, code, want)
		}
	}
}

// A token shorter than MinTokenLen (after trimming, as --token-file is) is refused by New.
func TestWeakTokenRefused(t *testing.T) {
	for _, tok := range []string{" ", "a", "   short-token   ", strings.Repeat("x", MinTokenLen-1)} {
		if _, err := New(Options{Roots: []string{t.TempDir()}, Service: service(t), Token: tok}); err == nil || !strings.Contains(err.Error(), "16 characters") {
			t.Errorf("token %q: %v, want a refusal naming the minimum", tok, err)
		}
	}
	s, err := New(Options{Roots: []string{t.TempDir()}, Service: service(t), Token: strings.Repeat("x", MinTokenLen)})
	if err != nil {
		t.Fatalf("a %d-character token: %v", MinTokenLen, err)
	}
	s.Close()
}
