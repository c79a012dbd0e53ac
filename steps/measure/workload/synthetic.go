package workload

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/perfdag/perfdag/steps/measure/tokens"
)

// fitAttempts is how many window starts a prompt tries for an exact fit before closing the
// gap with filler words; a start fits exactly about 85 % of the time (TestComposeFiller).
const fitAttempts = 8

// synthetic serves prompts of exactly the input budget, each a distinct prefix followed by a
// window of the shared corpus. It is immutable and safe for concurrent use.
type synthetic struct {
	c      *corpus
	budget Budget
	seed   int64
	salt   string
}

// Len is 0: synthetic prompts never run out.
func (s *synthetic) Len() int { return 0 }

// Prompt builds request i's prompt; the same (seed, salt, i) always yields the same text.
func (s *synthetic) Prompt(i int) (Prompt, error) {
	if i < 0 {
		return Prompt{}, fmt.Errorf("synthetic prompt %d: index must not be negative", i)
	}
	h := sha256.Sum256([]byte(strconv.FormatInt(s.seed, 10) + "\x00" + s.salt + "\x00" + strconv.Itoa(i)))
	prefix := "Request " + hex.EncodeToString(h[:8]) + "-" + strconv.Itoa(i) + ":"
	rng := rand.NewPCG(binary.LittleEndian.Uint64(h[8:]), binary.LittleEndian.Uint64(h[16:]))
	text, _, err := s.c.compose(prefix, s.budget.InputTokens, rng, fitAttempts)
	if err != nil {
		return Prompt{}, fmt.Errorf("synthetic prompt %d of %s: %w", i, s.budget.Shape, err)
	}
	return Prompt{Text: text, InputTokens: s.budget.InputTokens, OutputTokens: s.budget.OutputTokens}, nil
}

// intn draws from [0, n) with rng.
func intn(rng *rand.PCG, n int) int {
	hi, _ := bits.Mul64(rng.Uint64(), uint64(n))
	return int(hi)
}

// compose returns prefix + a corpus window (+ filler words) of exactly budget tokens. The
// prefix must end in a non-whitespace character. Window starts are drawn from rng; after
// attempts starts without an exact fit the closest one is padded with one-token words, whose
// number is returned.
func (c *corpus) compose(prefix string, budget int, rng *rand.PCG, attempts int) (string, int, error) {
	head := tokens.Count(prefix)
	need := budget - head
	if need < 0 {
		return "", 0, fmt.Errorf("input budget %d is smaller than the %d-token unique prefix (minimum %d)", budget, head, MinInputTokens)
	}
	best, bestEnd, gap := 0, pos{}, -1
	for range max(attempts, 1) {
		s := c.start[intn(rng, len(c.start))]
		e, d := c.fit(s, need)
		if gap < 0 || d < gap {
			best, bestEnd, gap = s, e, d
		}
		if d == 0 {
			break
		}
	}
	a := pos{0, best}
	var fill strings.Builder
	for range gap {
		fill.WriteByte(' ')
		fill.WriteString(fillerWords[intn(rng, len(fillerWords))])
	}
	if err := c.checkEdges(prefix, head, a, bestEnd, fill.String(), gap); err != nil {
		return "", 0, err
	}
	var b strings.Builder
	b.Grow(len(prefix) + c.sliceLen(a, bestEnd) + fill.Len())
	b.WriteString(prefix)
	c.appendSlice(&b, a, bestEnd)
	b.WriteString(fill.String())
	return b.String(), gap, nil
}

// checkEdges re-counts the two joins of a composed prompt, the only places where its text
// differs from the corpus it was measured in: prefix with the first corpus word, and the last
// corpus word with the filler. It turns a broken assumption into an error, never a prompt of
// the wrong length.
func (c *corpus) checkEdges(prefix string, head int, a, e pos, fill string, gap int) error {
	if a == e {
		if got := tokens.Count(prefix + fill); got != head+gap {
			return fmt.Errorf("edge check: prefix and filler count %d tokens, want %d", got, head+gap)
		}
		return nil
	}
	a1, e0 := c.after(a), c.before(e)
	firstTok := c.tokAt(a1) - c.tokAt(a)
	lastTok := c.tokAt(e) - c.tokAt(e0)
	if a1 == e { // a single word: both joins in one check
		if got := tokens.Count(prefix + c.slice(a, e) + fill); got != head+firstTok+gap {
			return fmt.Errorf("edge check: %d tokens, want %d", got, head+firstTok+gap)
		}
		return nil
	}
	if got := tokens.Count(prefix + c.slice(a, a1)); got != head+firstTok {
		return fmt.Errorf("edge check: prefix join counts %d tokens, want %d", got, head+firstTok)
	}
	if gap > 0 {
		if got := tokens.Count(c.slice(e0, e) + fill); got != lastTok+gap {
			return fmt.Errorf("edge check: filler join counts %d tokens, want %d", got, lastTok+gap)
		}
	}
	return nil
}
