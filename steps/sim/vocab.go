package sim

import (
	"fmt"
	"strings"

	"github.com/perfdag/perfdag/steps/measure/tokens"
)

// words are common English words that are each exactly one o200k_base token when preceded
// by a space; a text made of " word" pieces therefore has exactly as many tokens as pieces,
// which is what lets the simulator's usage equal the client's count. Start verifies it.
var words = strings.Fields(`the of and to in is that for it as was with be by on not he this are or his from
at which but have an they you were her she there one all we their been has would when more will if no out so
said what up its about into than them can only other new some could time these two may then do first any my
now such like our over man me even most made after also did many before must through back years where much
your way well down should because each just those people how too little state good very make world still own
see men work long get here between both life being under never day same another know while last might us great
old year off come since against go came right used take three`)

// thinkTags are the inline reasoning markers of the "think" reasoning field, emitted one
// o200k_base token per chunk like any other piece.
const (
	thinkOpen  = "<think>"
	thinkClose = "</think>"
)

// vocabulary holds the output pieces: one token each.
type vocabulary struct {
	words []string // " word"
	open  []string // pieces of <think>
	close []string // pieces of </think>
}

// newVocabulary builds the pieces and proves the one-token-per-piece property with the same
// tokenizer the client counts with, so a drift in either can never go unnoticed.
func newVocabulary() (*vocabulary, error) {
	v := &vocabulary{}
	for _, w := range words {
		p := " " + w
		if n := tokens.Count(p); n != 1 {
			return nil, fmt.Errorf("sim vocabulary: %q is %d o200k_base tokens, want 1", p, n)
		}
		v.words = append(v.words, p)
	}
	for _, id := range tokens.Encode(thinkOpen) {
		v.open = append(v.open, tokens.Decode([]int{id}))
	}
	for _, id := range tokens.Encode(thinkClose) {
		v.close = append(v.close, tokens.Decode([]int{id}))
	}
	probe := thinkOpen + v.words[0] + v.words[1] + thinkClose + v.words[2]
	if got, want := tokens.Count(probe), len(v.open)+len(v.close)+3; got != want {
		return nil, fmt.Errorf("sim vocabulary: %q is %d tokens, want %d", probe, got, want)
	}
	return v, nil
}
