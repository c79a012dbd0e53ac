// Package hftok counts tokens with a Hugging Face tokenizer.json read from a local file (the
// `tokenizer: PATH` token basis), through github.com/sugarme/tokenizer's pretrained.FromReader:
// the file's bytes are read here and decoded in memory, so nothing reaches for the network,
// the home directory or the library's cache (its CachedPath, which downloads, is never called).
package hftok

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/sugarme/tokenizer"
	"github.com/sugarme/tokenizer/pretrained"

	"github.com/perfdag/perfdag/schema"
)

// MaxFileBytes bounds a tokenizer.json (the largest public ones, 250k-entry vocabularies with
// their merges, are ~35 MB).
const MaxFileBytes = 128 << 20

// Models are the tokenizer.json model types the library builds.
var Models = []string{"BPE", "Unigram", "WordPiece", "WordLevel"}

// Tokenizer is one loaded tokenizer.json.
type Tokenizer struct {
	// Digest is the SHA-256 of the file's bytes (hex): what a measurement's fingerprint reads.
	Digest string
	mu     sync.Mutex
	tk     *tokenizer.Tokenizer
	// byteFallback: a BPE model with byte_fallback, whose characters outside the vocabulary
	// are one <0xXX> token per UTF-8 byte. The library's BPE ignores byte_fallback and emits
	// one unknown token per such character instead; Count adds the missing byte tokens.
	byteFallback bool
	vocab        map[string]int
	// split: the file has SentencePiece's shape (see splittable), so a text counts as the sum
	// of its pieces cut at word starts; the library's normalizer and BPE are quadratic in the
	// length of what they are given (a 45 KB prompt took 158 s whole, see BenchmarkCount).
	split bool
}

// header is the part of tokenizer.json checked before the library sees it: the library
// guesses (and logs) when model.type is absent, and panics on some malformed fields.
type header struct {
	Model *struct {
		Type         string `json:"type"`
		ByteFallback bool   `json:"byte_fallback"`
	} `json:"model"`
	Normalizer   json.RawMessage `json:"normalizer"`
	PreTokenizer json.RawMessage `json:"pre_tokenizer"`
	AddedTokens  []struct {
		Content string `json:"content"`
	} `json:"added_tokens"`
}

// wordMark is SentencePiece's word-start piece, what the normalizer turns a space into.
const wordMark = "▁"

// spmNormalizer is the normalizer of a SentencePiece BPE converted to tokenizer.json (the
// Llama/Mistral shape): a "▁" before the text, every space as "▁".
var spmNormalizer = []any{
	map[string]any{"type": "Prepend", "prepend": wordMark},
	map[string]any{"type": "Replace", "pattern": map[string]any{"String": " "}, "content": wordMark},
}

// splittable reports whether counting a text piece by piece gives its count whole: a BPE
// with exactly the SentencePiece normalizer and no pre-tokenizer, whose vocabulary has no
// token holding "▁" after another character and whose added tokens hold no space. Then no
// token spans a space that follows a non-space, and a piece cut there, without that one
// space, normalises (the "▁" prepended) to exactly its part of the whole text's normal form.
func splittable(h header, vocab map[string]int) bool {
	if h.Model.Type != "BPE" || (len(h.PreTokenizer) > 0 && string(h.PreTokenizer) != "null") {
		return false
	}
	var norm struct {
		Type        string `json:"type"`
		Normalizers []any  `json:"normalizers"`
	}
	if json.Unmarshal(h.Normalizer, &norm) != nil || norm.Type != "Sequence" || !reflect.DeepEqual(norm.Normalizers, spmNormalizer) {
		return false
	}
	for tok := range vocab {
		if strings.Contains(strings.TrimLeft(tok, wordMark), wordMark) {
			return false
		}
	}
	for _, a := range h.AddedTokens {
		if strings.ContainsAny(a.Content, " "+wordMark) {
			return false
		}
	}
	return true
}

// pieceBytes is the length past which Count cuts a splittable text at the next word start.
const pieceBytes = 256

// pieces cuts s at word starts (a space after a non-space, not the last character) once a
// piece holds pieceBytes, dropping that one space: the normalizer's prepended "▁" stands for it.
func pieces(s string) []string {
	var out []string
	start := 0
	for i := 1; i < len(s)-1; i++ {
		if s[i] == ' ' && s[i-1] != ' ' && i-start >= pieceBytes {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

var (
	cacheMu sync.Mutex
	cache   = map[string]*Tokenizer{} // by digest: a run loads each file once
)

// Load reads and builds the tokenizer.json at path; the same bytes are built once per
// process however often they are loaded (validation, then every measuring step).
func Load(path string) (*Tokenizer, error) {
	b, err := readFile(path)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(b)
	digest := hex.EncodeToString(sum[:])
	cacheMu.Lock()
	defer cacheMu.Unlock()
	if t, ok := cache[digest]; ok {
		return t, nil
	}
	t, err := build(b)
	if err != nil {
		return nil, fmt.Errorf("%s is not a tokenizer.json the tokenizer library can load: %w", path, err)
	}
	t.Digest = digest
	cache[digest] = t
	return t, nil
}

// Digest is the SHA-256 (hex) of the file at path, without building the tokenizer.
func Digest(path string) (string, error) {
	b, err := readFile(path)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(b) > MaxFileBytes {
		return nil, fmt.Errorf("%s is larger than %d MiB", path, MaxFileBytes>>20)
	}
	return b, nil
}

// build decodes b; a panic inside the library (a field of an unexpected JSON type) is an error.
func build(b []byte) (t *Tokenizer, err error) {
	var h header
	if err := json.Unmarshal(b, &h); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	if h.Model == nil {
		return nil, errors.New("no model object")
	}
	known := false
	for _, m := range Models {
		known = known || h.Model.Type == m
	}
	if !known {
		return nil, fmt.Errorf("model.type %q: want one of %v", h.Model.Type, Models)
	}
	defer func() {
		if r := recover(); r != nil {
			t, err = nil, fmt.Errorf("malformed: %v", r)
		}
	}()
	tk, err := pretrained.FromReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	t = &Tokenizer{tk: tk, byteFallback: h.Model.Type == "BPE" && h.Model.ByteFallback, vocab: tk.GetVocab(false)}
	t.split = splittable(h, t.vocab)
	if _, err := t.Count("Hello, world"); err != nil {
		return nil, fmt.Errorf("cannot encode a probe text: %w", err)
	}
	return t, nil
}

// Count returns the number of tokens s encodes to, without special tokens added around it
// (no BOS/EOS: what the text itself costs).
func (t *Tokenizer) Count(s string) (n int, err error) {
	if s == "" {
		return 0, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	defer func() {
		if r := recover(); r != nil {
			n, err = 0, fmt.Errorf("tokenizer: %v", r)
		}
	}()
	parts := []string{s}
	if t.split {
		parts = pieces(s)
	}
	for _, p := range parts {
		enc, err := t.tk.EncodeSingle(p, false)
		if err != nil {
			return 0, fmt.Errorf("tokenizer: %w", err)
		}
		n += len(enc.Ids)
	}
	if t.byteFallback {
		for _, r := range s {
			if r == ' ' { // normalised to the word-boundary piece, never a byte
				continue
			}
			if _, ok := t.vocab[string(r)]; !ok {
				n += utf8.RuneLen(r) - 1
			}
		}
	}
	return n, nil
}

// Path resolves an endpoint's tokenizer path against the campaign file's directory.
func Path(baseDir, p string) string {
	if filepath.IsAbs(p) || baseDir == "" {
		return p
	}
	return filepath.Join(baseDir, p)
}

// ForEndpoint loads the tokenizer an endpoint's points count with; nil when its basis is not
// a tokenizer file's.
func ForEndpoint(ep *schema.Endpoint, baseDir string) (*Tokenizer, error) {
	if ep == nil || !schema.IsTokenizerBasis(ep.Basis(baseDir)) {
		return nil, nil
	}
	return Load(Path(baseDir, ep.Tokenizer))
}

// Counts fills a record's tokenizer counts of its prompt, answer and reasoning texts; a text
// the library fails on leaves the record without them (stats count it on o200k_base and say so).
func (t *Tokenizer) Counts(rec *schema.RequestRecord, prompt, content, reasoning string) {
	var n [3]int
	for i, s := range []string{prompt, content, reasoning} {
		c, err := t.Count(s)
		if err != nil {
			rec.TokenizerInput, rec.TokenizerOutput, rec.TokenizerReasoning = nil, nil, nil
			return
		}
		n[i] = c
	}
	rec.TokenizerInput, rec.TokenizerOutput, rec.TokenizerReasoning = &n[0], &n[1], &n[2]
}

type stamp struct {
	size  int64
	mtime int64
}

var (
	digestMu sync.Mutex
	digests  = map[string]struct {
		stamp
		sum string
	}{}
)

// FileDigest is Digest remembered by path, size and modification time, for fingerprints that
// ask for it once per node.
func FileDigest(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	s := stamp{st.Size(), st.ModTime().UnixNano()}
	digestMu.Lock()
	defer digestMu.Unlock()
	if d, ok := digests[path]; ok && d.stamp == s {
		return d.sum, nil
	}
	sum, err := Digest(path)
	if err != nil {
		return "", err
	}
	digests[path] = struct {
		stamp
		sum string
	}{s, sum}
	return sum, nil
}
