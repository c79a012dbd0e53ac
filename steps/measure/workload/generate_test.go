package workload

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/tokens"
)

// TestGenerateRoundTrip writes datasets, reads them back through the replay source and checks
// every prompt's full o200k_base count against the shape's budget.
func TestGenerateRoundTrip(t *testing.T) {
	cases := []struct {
		opts GenerateOptions
		in   int
		out  int
	}{
		{GenerateOptions{Shape: "aa-1k", Count: 25, Seed: 1}, 1000, 1000},
		{GenerateOptions{Shape: "aa-10k", Count: 3, Seed: 2}, 10000, 1500},
		{GenerateOptions{Shape: "aa-100k", Count: 1, Seed: 3, Workers: 1}, 100000, 2000},
		// Too small for the instruction: prose only.
		{GenerateOptions{Shape: "custom", InputTokens: MinInputTokens, OutputTokens: 16, Count: 30, Seed: 4}, MinInputTokens, 16},
		{GenerateOptions{InputTokens: 333, OutputTokens: 99, Count: 30, Seed: 5}, 333, 99},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/in=%d", c.opts.Shape, c.in), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "d.jsonl")
			var calls []int
			c.opts.Progress = func(done, total int) {
				if total != c.opts.Count {
					t.Errorf("progress total %d, want %d", total, c.opts.Count)
				}
				calls = append(calls, done)
			}
			if err := GenerateFile(context.Background(), c.opts, path); err != nil {
				t.Fatal(err)
			}
			if len(calls) != c.opts.Count || calls[len(calls)-1] != c.opts.Count {
				t.Errorf("progress calls %v, want 1..%d", calls, c.opts.Count)
			}
			src, err := Open(schema.Workload{Mode: ModeReplay, Dataset: "d.jsonl"}, dir, "")
			if err != nil {
				t.Fatal(err)
			}
			if src.Len() != c.opts.Count {
				t.Fatalf("read back %d prompts, want %d", src.Len(), c.opts.Count)
			}
			seen := map[string]bool{}
			for i := range src.Len() {
				p, _ := src.Prompt(i)
				if p.InputTokens != c.in || p.OutputTokens != c.out {
					t.Errorf("prompt %d: %d in / %d out, want %d / %d", i, p.InputTokens, p.OutputTokens, c.in, c.out)
				}
				if seen[p.Text] {
					t.Errorf("prompt %d repeats an earlier one", i)
				}
				seen[p.Text] = true
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 1 {
				t.Errorf("directory holds %d entries, want only the dataset (no temp files)", len(entries))
			}
		})
	}
}

func TestGenerateDeterministic(t *testing.T) {
	gen := func(seed int64, workers int) string {
		var b bytes.Buffer
		if err := Generate(context.Background(), GenerateOptions{Shape: "aa-1k", Count: 5, Seed: seed, Out: &b, Workers: workers}); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	a, b, c := gen(7, 1), gen(7, 3), gen(8, 2)
	if a != b {
		t.Error("same seed, other worker count: different datasets")
	}
	if a == c {
		t.Error("different seeds: same dataset")
	}
	first := strings.SplitN(a, "\n", 2)[0]
	if !strings.HasPrefix(first, `{"text_input":"`) || !strings.HasSuffix(first, `","output_length":1000}`) {
		t.Errorf("line is not mooncake_trace text_input/output_length: %.120s", first)
	}
}

// TestNaturalPromptExact sweeps small budgets, where the instruction is dropped or barely
// fits and the last paragraph is cut after a word or two: every one must count exactly.
func TestNaturalPromptExact(t *testing.T) {
	filled := 0
	for budget := MinInputTokens; budget < MinInputTokens+150; budget++ {
		// Attempts 0 takes the filler path whenever the first candidate paragraph has no
		// word ending at the exact count.
		for _, attempts := range []int{0, 2 * fitAttempts} {
			text, padded, err := naturalPrompt(int64(budget), budget, budget, attempts)
			if err != nil {
				t.Fatal(err)
			}
			if got := tokens.Count(text); got != budget {
				t.Fatalf("budget %d, %d attempts: %d tokens", budget, attempts, got)
			}
			if padded > 0 {
				filled++
			}
		}
	}
	if filled == 0 {
		t.Error("the filler path never ran")
	}
	t.Logf("%d of 150 single-attempt prompts were padded", filled)
}

func TestGenerateErrors(t *testing.T) {
	var b bytes.Buffer
	cases := []struct {
		opts GenerateOptions
		want string
	}{
		{GenerateOptions{Shape: "aa-1k", Count: 1}, "no output writer"},
		{GenerateOptions{Shape: "aa-1k", Count: 0, Out: &b}, "count 0"},
		{GenerateOptions{Shape: "aa-3k", Count: 1, Out: &b}, `workload.shape: unknown shape "aa-3k"`},
		{GenerateOptions{Shape: "custom", InputTokens: 10, OutputTokens: 1, Count: 1, Out: &b}, "input budget 10 is below the minimum of 32"},
	}
	for _, c := range cases {
		err := Generate(context.Background(), c.opts)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Generate(%+v) error = %v, want it to contain %q", c.opts, err, c.want)
		}
	}
	if err := GenerateFile(context.Background(), GenerateOptions{Shape: "aa-1k", Count: 1, Out: &b}, filepath.Join(t.TempDir(), "x")); err == nil {
		t.Error("GenerateFile accepted an Out writer")
	}
}

// TestGenerateFileCanceled: an interrupted generation leaves neither the dataset nor a
// temporary file, and an existing dataset is untouched.
func TestGenerateFileCanceled(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "d.jsonl", "old\n")
	ctx, cancel := context.WithCancel(context.Background())
	opts := GenerateOptions{Shape: "aa-1k", Count: 50, Workers: 1, Progress: func(done, _ int) {
		if done == 2 {
			cancel()
		}
	}}
	err := GenerateFile(ctx, opts, path)
	if err == nil || !strings.Contains(err.Error(), "context canceled") || !strings.Contains(err.Error(), path) {
		t.Fatalf("GenerateFile error = %v, want a cancellation naming %s", err, path)
	}
	if got, _ := os.ReadFile(path); string(got) != "old\n" {
		t.Errorf("existing dataset changed to %q", got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("directory holds %d entries after a canceled run, want 1", len(entries))
	}
}

// TestGenerateRefusesOversize: a count whose file would pass the bound is refused after the
// first batch (about how many fit said), with nothing but the first batch built; the same
// count under a bound it fits is written whole.
func TestGenerateRefusesOversize(t *testing.T) {
	var buf bytes.Buffer
	opts := GenerateOptions{Shape: "custom", InputTokens: 64, OutputTokens: 8, Count: 1000, Seed: 1, Workers: 2, Out: &buf, MaxBytes: 4000}
	err := Generate(context.Background(), opts)
	if err == nil || !regexp.MustCompile(`^generate dataset: too many requests: 1000 of 64 input tokens make about [0-9]+ bytes, more than the 4000 bytes a dataset-replay cell reads: about [0-9]+ fit`).MatchString(err.Error()) {
		t.Fatalf("err = %v", err)
	}
	if !errors.Is(err, ErrTooManyRequests) {
		t.Errorf("err %v is not ErrTooManyRequests", err)
	}
	if buf.Len() != 0 {
		t.Errorf("%d bytes written before the refusal", buf.Len())
	}
	m := regexp.MustCompile(`about (\d+) fit`).FindStringSubmatch(err.Error())
	if m == nil {
		t.Fatalf("no count that fits in %q", err)
	}
	fit, _ := strconv.Atoi(m[1])
	buf.Reset()
	opts.Count = fit - 2 // lines differ by a few bytes
	if err := Generate(context.Background(), opts); err != nil {
		t.Fatalf("%d requests, said to fit: %v", opts.Count, err)
	}
	if int64(buf.Len()) > opts.MaxBytes || bytes.Count(buf.Bytes(), []byte("\n")) != opts.Count {
		t.Errorf("%d bytes, %d lines; want at most %d bytes, %d lines", buf.Len(), bytes.Count(buf.Bytes(), []byte("\n")), opts.MaxBytes, opts.Count)
	}
}
