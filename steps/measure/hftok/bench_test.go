package hftok

import (
	"strings"
	"testing"

	"github.com/perfdag/perfdag/steps/measure/tokens"
)

// BenchmarkCount counts a ~10,000-token English text (o200k_base) with the fixture, beside
// o200k_base on the same text: the per-request cost of the tokenizer basis after a window.
func BenchmarkCount(b *testing.B) {
	tk, err := Load(fixture)
	if err != nil {
		b.Fatal(err)
	}
	text := strings.Repeat("The quick brown fox jumps over the lazy dog, and researchers measured 80 ms. ", 600)
	b.Run("tokenizer.json", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			if _, err := tk.Count(text); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("o200k_base", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			tokens.Count(text)
		}
	})
}
