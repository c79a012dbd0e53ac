package tokens

import "testing"

func TestCount(t *testing.T) {
	// "hello world" is 2 tokens in every OpenAI BPE; the special-token text must count as
	// ordinary text (several tokens), never as the single <|endoftext|> special token.
	cases := []struct {
		text string
		want int
	}{
		{"", 0},
		{"hello world", 2},
		{"Hello, world!", 4},
		{"<|endoftext|>", 7},
	}
	for _, c := range cases {
		if got := Count(c.text); got != c.want {
			t.Errorf("Count(%q) = %d, want %d", c.text, got, c.want)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	s := "The quick brown fox jumps over the lazy dog. 12345 ünïcödé"
	if got := Decode(Encode(s)); got != s {
		t.Fatalf("round trip = %q, want %q", got, s)
	}
}
