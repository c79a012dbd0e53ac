package workload

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/perfdag/perfdag/steps/measure/textgen"
	"github.com/perfdag/perfdag/steps/measure/tokens"
)

// Why exact budgets can be built without re-tokenizing 100k-token prompts.
//
// o200k_base first splits text into pieces with a regular expression, then byte-pair encodes
// each piece on its own. A "cut" is a byte position p where text[p] is a space, text[p+1] an
// ASCII letter and text[p-1] not whitespace. No piece can run across a cut: only the
// whitespace-only alternatives of the pattern admit a space after their first character, and
// the character before p is not whitespace. The piece that ends at p ends in a non-space, so
// the pattern's one lookahead (\s+(?!\S)) cannot see past p either. Hence the tokens of
// text[a:b] for two cuts a < b are exactly the tokens the whole text has between a and b, and
// the count of a concatenation of such slices is the sum of their counts.
//
// A paragraph ends in ".\n\n" and the next begins with a capital letter; the pattern's
// punctuation alternative takes ".\n\n" whole, so paragraphs join additively too, which lets
// a window wrap from the corpus's end back to its start. A prefix that ends in a
// non-whitespace character joins a cut additively, and so do filler words " w", each a
// one-token piece. buildCorpus checks the wrap join and every filler word, and a synthetic
// prompt re-counts its two edges before it is returned.

// corpusSeed fixes the shared corpus: prompts vary by window and nonce, not by corpus.
const corpusSeed = 0x5eed_c0de

// corpusTokens is the corpus size: larger than an aa-100k window, so windows of the largest
// AA shape start anywhere and rarely repeat text.
const corpusTokens = 160_000

// fillerWords are one-token words (with their leading space) that close a gap of a few tokens
// when no window fits the budget exactly.
var fillerWords = []string{"the", "of", "and", "to", "in", "for", "on", "with", "as", "by", "at", "from", "that", "this", "was", "are"}

// cut is a position where text may be split without changing its tokens.
type cut struct {
	at  int  // byte offset
	tok int  // tokens of the text before at
	sen bool // a sentence starts here (the character before is . or ?)
}

// corpus is generated prose, tokenized once, with the positions where it may be cut.
type corpus struct {
	text  string
	cuts  []cut
	total int   // tokens in text
	start []int // indexes into cuts of sentence starts: where windows begin
}

// sharedCorpus is built on first use and never modified afterwards.
var sharedCorpus = sync.OnceValues(func() (*corpus, error) {
	return buildCorpus(corpusSeed, corpusTokens)
})

// cutsOf lists the cut positions of text (see the comment at the top of this file).
func cutsOf(text string) []cut {
	var out []cut
	for p := 1; p+1 < len(text); p++ {
		if text[p] == ' ' && isLetter(text[p+1]) && !isSpace(text[p-1]) {
			out = append(out, cut{at: p, sen: text[p-1] == '.' || text[p-1] == '?'})
		}
	}
	return out
}

func isLetter(b byte) bool { return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' }
func isSpace(b byte) bool  { return b == ' ' || b == '\n' || b == '\r' || b == '\t' }

// measure tokenizes text once and returns its token count and its cuts with the tokens
// before each; a cut that falls inside a token (never expected) is dropped.
func measure(text string) ([]cut, int) {
	ids := tokens.Encode(text)
	cand := cutsOf(text)
	out := cand[:0]
	off, k := 0, 0
	for i, id := range ids {
		for k < len(cand) && cand[k].at < off {
			k++ // inside the previous token: not a real boundary
		}
		if k < len(cand) && cand[k].at == off {
			c := cand[k]
			c.tok = i
			out = append(out, c)
			k++
		}
		off += len(tokens.Decode([]int{id}))
	}
	return out, len(ids)
}

// buildCorpus generates paragraphs until the corpus holds at least minTokens tokens.
func buildCorpus(seed int64, minTokens int) (*corpus, error) {
	if err := tokens.Load(); err != nil {
		return nil, err
	}
	for _, w := range fillerWords {
		if n := tokens.Count(" " + w); n != 1 {
			return nil, fmt.Errorf("corpus: filler word %q is %d tokens in %s, want 1", w, n, tokens.Encoding)
		}
	}
	g := textgen.New(seed)
	c := &corpus{}
	var text []byte
	var first, last string
	for c.total < minTokens {
		par := g.Paragraph() + "\n\n"
		cuts, n := measure(par)
		for _, k := range cuts {
			k.at += len(text)
			k.tok += c.total
			if k.sen {
				c.start = append(c.start, len(c.cuts))
			}
			c.cuts = append(c.cuts, k)
		}
		text = append(text, par...)
		c.total += n
		if first == "" {
			first = par
		}
		last = par
	}
	c.text = string(text)
	if got, want := tokens.Count(last+first), tokens.Count(last)+tokens.Count(first); got != want {
		return nil, fmt.Errorf("corpus: wrapping from the last paragraph to the first changes the token count (%d, want %d)", got, want)
	}
	if len(c.start) == 0 {
		return nil, fmt.Errorf("corpus: no sentence starts in %d tokens", c.total)
	}
	return c, nil
}

// pos is a cut in the corpus repeated end to end: cut index i of copy rep.
type pos struct{ rep, i int }

// tokAt is the token offset of a position in the repeated corpus.
func (c *corpus) tokAt(p pos) int { return p.rep*c.total + c.cuts[p.i].tok }

// before returns the position just before p in the repeated corpus (rep -1 when none).
func (c *corpus) before(p pos) pos {
	if p.i > 0 {
		return pos{p.rep, p.i - 1}
	}
	return pos{p.rep - 1, len(c.cuts) - 1}
}

// after returns the position just after p in the repeated corpus.
func (c *corpus) after(p pos) pos {
	if p.i+1 < len(c.cuts) {
		return pos{p.rep, p.i + 1}
	}
	return pos{p.rep + 1, 0}
}

// fit returns the last cut at most n tokens after cut s (copy 0), never before s, and the
// tokens still missing to reach n.
func (c *corpus) fit(s, n int) (pos, int) {
	target := c.cuts[s].tok + n
	rep, rem := target/c.total, target%c.total
	j := sort.Search(len(c.cuts), func(k int) bool { return c.cuts[k].tok > rem }) - 1
	e := pos{rep, j}
	if j < 0 {
		e = pos{rep - 1, len(c.cuts) - 1}
	}
	if e.rep < 0 || (e.rep == 0 && e.i < s) {
		e = pos{0, s}
	}
	return e, target - c.tokAt(e)
}

// slice returns the corpus text from position a to position b, wrapping as often as needed.
func (c *corpus) slice(a, b pos) string {
	if a.rep == b.rep {
		return c.text[c.cuts[a.i].at:c.cuts[b.i].at]
	}
	var sb strings.Builder
	sb.Grow(c.sliceLen(a, b))
	c.appendSlice(&sb, a, b)
	return sb.String()
}

// sliceLen is the length in bytes of slice(a, b).
func (c *corpus) sliceLen(a, b pos) int {
	return (b.rep-a.rep)*len(c.text) + c.cuts[b.i].at - c.cuts[a.i].at
}

// appendSlice writes slice(a, b) to sb without an intermediate copy.
func (c *corpus) appendSlice(sb *strings.Builder, a, b pos) {
	if a.rep == b.rep {
		sb.WriteString(c.text[c.cuts[a.i].at:c.cuts[b.i].at])
		return
	}
	sb.WriteString(c.text[c.cuts[a.i].at:])
	for range b.rep - a.rep - 1 {
		sb.WriteString(c.text)
	}
	sb.WriteString(c.text[:c.cuts[b.i].at])
}
