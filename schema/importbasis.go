package schema

import "strings"

// ImportedBasisPrefix starts the token basis of a point read from another tool's output:
// "imported:<source> <what the source counted>", e.g. "imported:vllm-bench server usage, else
// tokenizer meta-llama/Llama-3.1-8B-Instruct". perfdag counted none of such a point's tokens
// (ISL and OSL are both the source's); it is never a campaign token_basis value.
const ImportedBasisPrefix = "imported:"

// Counted is what an imported point's token counts are, as its source tool made them.
const (
	CountedServer          = "server usage"     // the server's usage (completion_tokens, ...)
	CountedTokenizerPrefix = "tokenizer "       // + the tokenizer the tool re-encoded the text with
	CountedRequested       = "requested length" // the output length the tool asked for, not a count
)

// ImportedBasis names the basis of a point imported from source whose tokens were counted as
// counted says (one of the Counted* forms, or a combination of them).
func ImportedBasis(source, counted string) string {
	return ImportedBasisPrefix + source + " " + counted
}

// IsImportedBasis reports whether a point's basis is an imported one: the source tool's counts.
func IsImportedBasis(basis string) bool { return strings.HasPrefix(basis, ImportedBasisPrefix) }

// SplitImportedBasis returns the source and what it counted of an imported basis; ok is false
// for perfdag's own bases.
func SplitImportedBasis(basis string) (source, counted string, ok bool) {
	rest, ok := strings.CutPrefix(basis, ImportedBasisPrefix)
	if !ok {
		return "", "", false
	}
	source, counted, _ = strings.Cut(rest, " ")
	return source, counted, true
}
