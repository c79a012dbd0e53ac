package schema

import (
	"path/filepath"
	"testing"
)

// TestEndpointBasis: the basis a point names, and a tokenizer file named by its path under the
// campaign file's directory, or by its base name when it lies outside (never a machine path).
func TestEndpointBasis(t *testing.T) {
	base := filepath.FromSlash("/home/me/campaigns")
	cases := []struct {
		name string
		ep   Endpoint
		want string
	}{
		{"default", Endpoint{}, ""},
		{"server", Endpoint{TokenBasis: TokenBasisServer}, "server"},
		{"o200k", Endpoint{TokenBasis: TokenBasisO200k}, "o200k_base"},
		{"file implies the basis", Endpoint{Tokenizer: "tok/tokenizer.json"}, "tokenizer:tok/tokenizer.json"},
		{"explicit basis", Endpoint{TokenBasis: TokenBasisTokenizer, Tokenizer: "./tok/../t.json"}, "tokenizer:t.json"},
		{"absolute inside", Endpoint{Tokenizer: filepath.Join(base, "m", "tokenizer.json")}, "tokenizer:m/tokenizer.json"},
		{"absolute outside", Endpoint{Tokenizer: filepath.FromSlash("/srv/models/llama/tokenizer.json")}, "tokenizer:tokenizer.json"},
		{"relative outside", Endpoint{Tokenizer: "../models/llama.json"}, "tokenizer:llama.json"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.ep.Basis(base); got != c.want {
				t.Errorf("Basis = %q, want %q", got, c.want)
			}
			if IsTokenizerBasis(c.want) != (c.ep.Tokenizer != "") {
				t.Errorf("IsTokenizerBasis(%q) disagrees with the endpoint", c.want)
			}
		})
	}
}
