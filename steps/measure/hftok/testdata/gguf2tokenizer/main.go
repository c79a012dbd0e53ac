// Command gguf2tokenizer writes the Hugging Face tokenizer.json of a llama (SentencePiece BPE)
// GGUF vocabulary the way transformers' GGUF converter does (GGUFLlamaConverter with merges
// built from the scores, as GGUFTokenizerSkeleton does when a GGUF has none): a BPE model over
// the vocabulary, merges ranked by the merged piece's score, byte fallback, a "▁" prefix and
// spaces as "▁". It made testdata/tiny-llama-2L-256.tokenizer.json.gz:
//
//	go run ./steps/measure/hftok/testdata/gguf2tokenizer MODEL.gguf | gzip -9n > OUT.json.gz
package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// GGUF value types (gguf.md).
const (
	tUint8 = iota
	tInt8
	tUint16
	tInt16
	tUint32
	tInt32
	tFloat32
	tBool
	tString
	tArray
	tUint64
	tInt64
	tFloat64
)

type reader struct {
	r   *bufio.Reader
	err error
}

func (r *reader) read(v any) {
	if r.err == nil {
		r.err = binary.Read(r.r, binary.LittleEndian, v)
	}
}

func (r *reader) u32() uint32 { var v uint32; r.read(&v); return v }
func (r *reader) u64() uint64 { var v uint64; r.read(&v); return v }

func (r *reader) str() string {
	n := r.u64()
	if r.err != nil || n > 1<<30 {
		r.err = errors.Join(r.err, fmt.Errorf("string of %d bytes", n))
		return ""
	}
	b := make([]byte, n)
	_, err := io.ReadFull(r.r, b)
	if r.err == nil {
		r.err = err
	}
	return string(b)
}

func (r *reader) value(t uint32) any {
	switch t {
	case tUint8, tInt8, tBool:
		var v uint8
		r.read(&v)
		return int64(v)
	case tUint16, tInt16:
		var v uint16
		r.read(&v)
		return int64(v)
	case tUint32:
		return int64(r.u32())
	case tInt32:
		return int64(int32(r.u32()))
	case tFloat32:
		var v float32
		r.read(&v)
		return float64(v)
	case tString:
		return r.str()
	case tArray:
		et, n := r.u32(), r.u64()
		if n > 1<<24 {
			r.err = errors.Join(r.err, fmt.Errorf("array of %d values", n))
			return nil
		}
		out := make([]any, 0, n)
		for i := uint64(0); i < n && r.err == nil; i++ {
			out = append(out, r.value(et))
		}
		return out
	case tUint64, tInt64:
		return int64(r.u64())
	case tFloat64:
		var v float64
		r.read(&v)
		return v
	}
	r.err = errors.Join(r.err, fmt.Errorf("unknown GGUF value type %d", t))
	return nil
}

// metadata reads a GGUF file's key/value header.
func metadata(path string) (map[string]any, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := &reader{r: bufio.NewReader(f)}
	var magic [4]byte
	r.read(&magic)
	if r.err == nil && string(magic[:]) != "GGUF" {
		return nil, fmt.Errorf("%s: not a GGUF file", path)
	}
	_, _, n := r.u32(), r.u64(), r.u64()
	kv := map[string]any{}
	for i := uint64(0); i < n && r.err == nil; i++ {
		k := r.str()
		kv[k] = r.value(r.u32())
	}
	return kv, r.err
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "gguf2tokenizer:", err)
		os.Exit(1)
	}
}

func run() error {
	if len(os.Args) != 2 {
		return errors.New("usage: gguf2tokenizer MODEL.gguf > tokenizer.json")
	}
	kv, err := metadata(os.Args[1])
	if err != nil {
		return err
	}
	if m, _ := kv["tokenizer.ggml.model"].(string); m != "llama" {
		return fmt.Errorf("tokenizer.ggml.model %q: only llama (SentencePiece BPE) vocabularies are converted", m)
	}
	rawTokens, _ := kv["tokenizer.ggml.tokens"].([]any)
	rawScores, _ := kv["tokenizer.ggml.scores"].([]any)
	rawTypes, _ := kv["tokenizer.ggml.token_type"].([]any)
	if len(rawTokens) == 0 || len(rawScores) != len(rawTokens) || len(rawTypes) != len(rawTokens) {
		return errors.New("tokens, scores and token_type missing or of different lengths")
	}
	tokens := make([]string, len(rawTokens))
	scores := make([]float64, len(rawTokens))
	for i := range rawTokens {
		tokens[i], scores[i] = rawTokens[i].(string), rawScores[i].(float64)
	}
	j, err := convert(tokens, scores, rawTypes, kv)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	return enc.Encode(j)
}

// convert builds the tokenizer.json document.
func convert(tokens []string, scores []float64, types []any, kv map[string]any) (map[string]any, error) {
	id := make(map[string]int, len(tokens))
	score := make(map[string]float64, len(tokens))
	for i, t := range tokens {
		id[t], score[t] = i, scores[i]
	}
	// Merges as GGUFTokenizerSkeleton builds them: every split of every piece into two
	// pieces of the vocabulary, the splits of one piece by their parts' scores, all of them
	// ranked by the piece's score (stable, so vocabulary order breaks ties).
	type merge struct {
		l, r  string
		score float64
	}
	var merges []merge
	for _, t := range tokens {
		runes := []rune(t)
		var local []merge
		for k := 1; k < len(runes); k++ {
			l, r := string(runes[:k]), string(runes[k:])
			if _, ok := id[l]; !ok {
				continue
			}
			if _, ok := id[r]; !ok {
				continue
			}
			local = append(local, merge{l, r, score[t]})
		}
		sort.SliceStable(local, func(a, b int) bool {
			if score[local[a].l] != score[local[b].l] {
				return score[local[a].l] > score[local[b].l]
			}
			return score[local[a].r] > score[local[b].r]
		})
		merges = append(merges, local...)
	}
	sort.SliceStable(merges, func(a, b int) bool {
		if merges[a].score != merges[b].score {
			return merges[a].score > merges[b].score
		}
		// SentencePiece breaks a tie leftmost; a word-initial piece is leftmost in its word.
		return strings.HasPrefix(merges[a].l, "▁") && !strings.HasPrefix(merges[b].l, "▁")
	})
	mergeList := make([]string, len(merges))
	for i, m := range merges {
		mergeList[i] = m.l + " " + m.r
	}
	// Control tokens (GGUF token type 3) and the unknown token are special added tokens.
	unkID, _ := kv["tokenizer.ggml.unknown_token_id"].(int64)
	var added []map[string]any
	for i, t := range types {
		if ty, _ := t.(int64); ty == 3 || ty == 2 || int64(i) == unkID {
			added = append(added, map[string]any{"id": i, "content": tokens[i], "single_word": false, "lstrip": false,
				"rstrip": false, "normalized": false, "special": true})
		}
	}
	return map[string]any{
		"version":        "1.0",
		"truncation":     nil,
		"padding":        nil,
		"added_tokens":   added,
		"normalizer":     map[string]any{"type": "Sequence", "normalizers": []any{map[string]any{"type": "Prepend", "prepend": "▁"}, map[string]any{"type": "Replace", "pattern": map[string]any{"String": " "}, "content": "▁"}}},
		"pre_tokenizer":  nil,
		"post_processor": nil,
		"decoder": map[string]any{"type": "Sequence", "decoders": []any{
			map[string]any{"type": "Replace", "pattern": map[string]any{"String": "▁"}, "content": " "},
			map[string]any{"type": "ByteFallback"}, map[string]any{"type": "Fuse"},
			map[string]any{"type": "Strip", "content": " ", "start": 1, "stop": 0}}},
		"model": map[string]any{"type": "BPE", "dropout": nil, "unk_token": tokens[unkID], "continuing_subword_prefix": nil,
			"end_of_word_suffix": nil, "fuse_unk": true, "byte_fallback": true, "ignore_merges": false, "vocab": id, "merges": mergeList},
	}, nil
}
