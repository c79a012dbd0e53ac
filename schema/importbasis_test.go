package schema

import "testing"

// TestImportedBasisRoundTrip: the basis an import writes splits back into its source and what
// it counted, and is never mistaken for one of perfdag's own bases (nor they for it).
func TestImportedBasisRoundTrip(t *testing.T) {
	const counted = "server usage, else tokenizer meta-llama/Llama-3.1-8B-Instruct"
	b := ImportedBasis("vllm-bench", counted)
	if b != "imported:vllm-bench "+counted {
		t.Errorf("basis %q", b)
	}
	src, got, ok := SplitImportedBasis(b)
	if !ok || src != "vllm-bench" || got != counted || IsTokenizerBasis(b) || !IsImportedBasis(b) {
		t.Errorf("%q splits into %q %q %v", b, src, got, ok)
	}
	for _, own := range []string{TokenBasisServer, TokenBasisO200k, TokenizerBasisPrefix + "tok.json", ""} {
		if _, _, ok := SplitImportedBasis(own); ok || IsImportedBasis(own) {
			t.Errorf("%q read as imported", own)
		}
	}
}
