// Package tokens counts o200k_base tokens, the encoding AIPerf's builtin tokenizer and
// Artificial Analysis use, from the ranks embedded in the binary: nothing is downloaded.
package tokens

import (
	"fmt"
	"sync"

	tiktoken "github.com/pkoukk/tiktoken-go"
	loader "github.com/pkoukk/tiktoken-go-loader"
)

// Encoding is the only encoding perfdag counts with.
const Encoding = "o200k_base"

var (
	once sync.Once
	enc  *tiktoken.Tiktoken
	err  error
)

// get builds the encoder once; the offline loader is installed before the first encoding is
// built, so tiktoken-go never reaches for the network.
func get() (*tiktoken.Tiktoken, error) {
	once.Do(func() {
		tiktoken.SetBpeLoader(loader.NewOfflineLoader())
		enc, err = tiktoken.GetEncoding(Encoding)
		if err != nil {
			err = fmt.Errorf("load %s: %w", Encoding, err)
		}
	})
	return enc, err
}

// Load builds the encoder ahead of time so the first count does not pay for it mid-run.
func Load() error {
	_, err := get()
	return err
}

func must() *tiktoken.Tiktoken {
	e, err := get()
	if err != nil {
		// The ranks are embedded in the binary; failing to parse them is a build defect.
		panic(err)
	}
	return e
}

// Count returns the number of o200k_base tokens in s, special-token text counted as ordinary
// text (tiktoken's disallowed_special=()).
func Count(s string) int {
	if s == "" {
		return 0
	}
	return len(must().EncodeOrdinary(s))
}

// Encode returns the o200k_base token ids of s.
func Encode(s string) []int { return must().EncodeOrdinary(s) }

// Decode returns the text of token ids.
func Decode(ids []int) string { return must().Decode(ids) }
