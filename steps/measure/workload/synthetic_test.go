package workload

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/tokens"
	"github.com/perfdag/perfdag/steps/testkit"
)

func mustCorpus(t testing.TB) *corpus {
	t.Helper()
	c, err := sharedCorpus()
	if err != nil {
		t.Fatalf("corpus: %v", err)
	}
	return c
}

func mustOpen(t testing.TB, w schema.Workload, salt string) Source {
	t.Helper()
	src, err := Open(w, t.TempDir(), salt)
	if err != nil {
		t.Fatalf("Open(%+v): %v", w, err)
	}
	return src
}

// TestSyntheticExactBudget counts every prompt in full with o200k_base: each must hit its
// budget exactly. The custom budgets cover the minimum and a window wrapping the corpus.
func TestSyntheticExactBudget(t *testing.T) {
	cases := []struct {
		w schema.Workload
		n int // prompts checked
	}{
		{schema.Workload{Shape: "aa-1k"}, 400},
		{schema.Workload{Shape: "aa-10k", Seed: 3}, 40},
		{schema.Workload{Shape: "aa-100k", Seed: 9}, 4},
		{schema.Workload{Shape: "custom", InputTokens: MinInputTokens, OutputTokens: 8}, 300},
		{schema.Workload{InputTokens: 257, OutputTokens: 8, Seed: -4}, 300},
		{schema.Workload{InputTokens: 2*corpusTokens + 12345, OutputTokens: 8}, 1},
	}
	for _, c := range cases {
		b, err := Resolve(c.w)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(fmt.Sprintf("%s/in=%d", b.Shape, b.InputTokens), func(t *testing.T) {
			t.Parallel()
			src := mustOpen(t, c.w, "exact")
			for i := range c.n {
				p, err := src.Prompt(i)
				if err != nil {
					t.Fatal(err)
				}
				if got := tokens.Count(p.Text); got != b.InputTokens || p.InputTokens != b.InputTokens || p.OutputTokens != b.OutputTokens {
					t.Fatalf("prompt %d: %d tokens (reported %d in, %d out), want %d in, %d out", i, got, p.InputTokens, p.OutputTokens, b.InputTokens, b.OutputTokens)
				}
			}
		})
	}
}

// TestSyntheticDistinct: 1,000 prompts of one run are pairwise distinct, and distinct from
// 1,000 of another run (another salt) — down to their first 16 tokens, a vLLM prefix-cache
// block, so no block of any prompt can be served from another's cache.
func TestSyntheticDistinct(t *testing.T) {
	w := schema.Workload{Shape: "aa-1k", Seed: 1}
	seen := map[string]string{}
	for _, salt := range []string{"campaign-a", "campaign-b"} {
		src := mustOpen(t, w, salt)
		for i := range 1000 {
			p, err := src.Prompt(i)
			if err != nil {
				t.Fatal(err)
			}
			// 16 tokens end well inside the first 256 bytes, so the prefix encodes them as
			// the whole prompt does.
			block := tokens.Decode(tokens.Encode(p.Text[:256])[:16])
			id := fmt.Sprintf("%s/%d", salt, i)
			if prev, dup := seen[block]; dup {
				t.Fatalf("prompts %s and %s share their first 16 tokens %q", prev, id, block)
			}
			seen[block] = id
		}
	}
}

func TestSyntheticDeterministic(t *testing.T) {
	base := schema.Workload{Shape: "aa-1k", Seed: 5}
	other := base
	other.Seed = 6
	cases := []struct {
		name     string
		w1, w2   schema.Workload
		s1, s2   string
		i1, i2   int
		wantSame bool
	}{
		{"same inputs", base, base, "x", "x", 7, 7, true},
		{"other index", base, base, "x", "x", 7, 8, false},
		{"other salt", base, base, "x", "y", 7, 7, false},
		{"other seed", base, other, "x", "x", 7, 7, false},
	}
	for _, c := range cases {
		p1, err1 := mustOpen(t, c.w1, c.s1).Prompt(c.i1)
		p2, err2 := mustOpen(t, c.w2, c.s2).Prompt(c.i2)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if (p1.Text == p2.Text) != c.wantSame {
			t.Errorf("%s: same text = %v, want %v", c.name, p1.Text == p2.Text, c.wantSame)
		}
	}
}

// TestComposeFiller forces single-attempt fits so the filler path runs, and checks that
// those prompts are exact too.
func TestComposeFiller(t *testing.T) {
	c := mustCorpus(t)
	filled := 0
	for i := range 300 {
		rng := rand.NewPCG(uint64(i), 1)
		budget := 40 + i*7
		text, gap, err := c.compose("Request test-"+fmt.Sprint(i)+":", budget, rng, 1)
		if err != nil {
			t.Fatal(err)
		}
		if got := tokens.Count(text); got != budget {
			t.Fatalf("budget %d: composed %d tokens: %q", budget, got, text)
		}
		if gap > 0 {
			filled++
		}
	}
	if filled == 0 {
		t.Fatal("no composed prompt was padded: the filler path was not exercised")
	}
	t.Logf("%d of 300 single-attempt prompts were padded", filled)
}

// TestCorpusCuts checks the corpus's bookkeeping against full counts: the whole text, random
// windows between cuts, and windows that wrap from the end to the start.
func TestCorpusCuts(t *testing.T) {
	c := mustCorpus(t)
	if got := tokens.Count(c.text); got != c.total {
		t.Fatalf("corpus counts %d tokens, bookkeeping says %d", got, c.total)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 1500 {
		a := rng.IntN(len(c.cuts))
		b := min(a+rng.IntN(150), len(c.cuts)-1)
		want := c.cuts[b].tok - c.cuts[a].tok
		if got := tokens.Count(c.text[c.cuts[a].at:c.cuts[b].at]); got != want {
			t.Fatalf("window cuts %d..%d counts %d, want %d", a, b, got, want)
		}
	}
	for _, k := range []int{1, 5, 40} {
		a, b := pos{0, len(c.cuts) - k}, pos{1, k}
		want := c.tokAt(b) - c.tokAt(a)
		if got := tokens.Count(c.slice(a, b)); got != want {
			t.Fatalf("wrapping window of %d cuts each side counts %d, want %d", k, got, want)
		}
	}
}

func TestSyntheticErrors(t *testing.T) {
	src := mustOpen(t, schema.Workload{Shape: "aa-1k"}, "")
	if _, err := src.Prompt(-1); err == nil || !strings.Contains(err.Error(), "negative") {
		t.Errorf("Prompt(-1) error = %v, want a negative-index error", err)
	}
	if src.Len() != 0 {
		t.Errorf("synthetic Len = %d, want 0 (unbounded)", src.Len())
	}
	_, err := Open(schema.Workload{InputTokens: 20, OutputTokens: 5}, "", "")
	if err == nil || !strings.Contains(err.Error(), "workload.input_tokens: 20 is below the synthetic minimum of 32") {
		t.Errorf("Open with 20 input tokens: error = %v", err)
	}
}

// BenchmarkPromptAA100k is the per-request cost of one aa-100k prompt once the corpus exists:
// what the load generator pays between two requests.
func BenchmarkPromptAA100k(b *testing.B) {
	benchPrompt(b, "aa-100k")
}

// BenchmarkPromptAA1k is the same for the smallest shape.
func BenchmarkPromptAA1k(b *testing.B) {
	benchPrompt(b, "aa-1k")
}

func benchPrompt(b *testing.B, shape string) {
	src := mustOpen(b, schema.Workload{Shape: shape}, "bench")
	i := 0
	for b.Loop() {
		if _, err := src.Prompt(i); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkCorpusSetup is the one-time cost (per process) of generating and tokenizing the
// synthetic corpus; the o200k_base ranks are loaded before the timer starts.
func BenchmarkCorpusSetup(b *testing.B) {
	if err := tokens.Load(); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := buildCorpus(corpusSeed, corpusTokens); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBodyAA100k is the cost of encoding one aa-100k request body.
func BenchmarkBodyAA100k(b *testing.B) {
	w := schema.Workload{Shape: "aa-100k", ExtraBody: map[string]any{"chat_template_kwargs": map[string]any{"enable_thinking": false}}}
	p, err := mustOpen(b, w, "bench").Prompt(0)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Body("bench-model", p, w); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSyntheticConcurrent: run-shape's workers share one Source; concurrent calls must give
// the same prompts as sequential ones (run with -race).
func TestSyntheticConcurrent(t *testing.T) {
	src := mustOpen(t, schema.Workload{Shape: "aa-1k"}, "race")
	const n = 64
	want := make([]string, n)
	for i := range n {
		p, err := src.Prompt(i)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = p.Text
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := range 4 {
		wg.Go(func() {
			for i := w; i < n; i += 4 {
				p, err := src.Prompt(i)
				if err != nil || p.Text != want[i] {
					errs <- fmt.Errorf("prompt %d differs under concurrency (err %v)", i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestSyntheticGolden pins one prompt: the same (seed, salt, index) must give the same text
// on every machine and release, or resumed and repeated campaigns would send other prompts.
func TestSyntheticGolden(t *testing.T) {
	p, err := mustOpen(t, schema.Workload{Shape: "custom", InputTokens: 300, OutputTokens: 10, Seed: 42}, "golden").Prompt(3)
	if err != nil {
		t.Fatal(err)
	}
	testkit.Golden(t, filepath.Join("testdata", "synthetic-300.golden"), []byte(p.Text+"\n"))
}
