package workload

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/textgen"
	"github.com/perfdag/perfdag/steps/measure/tokens"
)

// GenerateOptions says what replay dataset to write.
type GenerateOptions struct {
	Shape        string                // AA shape (aa-1k, aa-10k, aa-100k) or custom
	InputTokens  int                   // overrides the shape's input budget (required for custom)
	OutputTokens int                   // overrides the shape's answer length (required for custom)
	Count        int                   // number of requests (lines)
	Seed         int64                 // the same seed writes the same file
	Out          io.Writer             // where Generate writes the JSONL (GenerateFile sets it)
	Workers      int                   // parallel prompt builders; 0 means GOMAXPROCS
	Progress     func(done, total int) // called after each written line when set
	// MaxBytes bounds the file (0: MaxDatasetBytes, the most a dataset-replay cell reads): a
	// count that cannot fit is refused after the first prompts, before the rest are built.
	MaxBytes int64
}

// instructions open every generated prompt, so a model (a reasoning one above all) meets a
// real task with bounded thinking, not filler.
var instructions = []string{
	"Read the following notes carefully, then summarize their main points in plain language.",
	"The passage below comes from a set of field reports. Explain what it says and what remains uncertain.",
	"Below is a collection of short essays. Write a detailed commentary on the ideas they raise.",
	"Review the text that follows and list the questions an expert reviewer would ask about it.",
	"Here are some working notes. Rewrite them as a clear, well organized report.",
	"Study the material below and describe the most important causes and effects it mentions.",
}

// traceLine is one line Generate writes: the fields AIPerf's mooncake_trace loader reads.
type traceLine struct {
	TextInput    string `json:"text_input"`
	OutputLength int    `json:"output_length"`
}

// Generate writes Count mooncake_trace lines whose text_input is natural prose (textgen) of
// exactly the input budget in o200k_base, each verified by a full count, with output_length
// the answer budget. Lines are written in order; output depends only on the options.
func Generate(ctx context.Context, opts GenerateOptions) error {
	if opts.Out == nil {
		return errors.New("generate dataset: no output writer")
	}
	if opts.Count <= 0 {
		return fmt.Errorf("generate dataset: count %d: want a positive number of requests", opts.Count)
	}
	b, err := Resolve(schema.Workload{Shape: opts.Shape, InputTokens: opts.InputTokens, OutputTokens: opts.OutputTokens})
	if err != nil {
		return fmt.Errorf("generate dataset: %w", err)
	}
	if b.InputTokens < MinInputTokens {
		return fmt.Errorf("generate dataset: input budget %d is below the minimum of %d tokens", b.InputTokens, MinInputTokens)
	}
	if err := tokens.Load(); err != nil {
		return err
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	limit := opts.MaxBytes
	if limit <= 0 {
		limit = MaxDatasetBytes
	}
	var written int64
	// Build a batch in parallel, then write it in order: memory stays bounded by the batch.
	batch := make([][]byte, workers)
	for lo := 0; lo < opts.Count; lo += workers {
		hi := min(lo+workers, opts.Count)
		g, gctx := errgroup.WithContext(ctx)
		for i := lo; i < hi; i++ {
			g.Go(func() error {
				if err := gctx.Err(); err != nil {
					return err
				}
				text, _, err := naturalPrompt(opts.Seed, i, b.InputTokens, 2*fitAttempts)
				if err != nil {
					return fmt.Errorf("generate request %d: %w", i, err)
				}
				line, err := json.Marshal(traceLine{TextInput: text, OutputLength: b.OutputTokens})
				batch[i-lo] = append(line, '\n')
				return err
			})
		}
		if err := g.Wait(); err != nil {
			return err
		}
		if err := checkSize(opts.Count, hi, written+lineBytes(batch[:hi-lo]), limit, b.InputTokens); err != nil {
			return err
		}
		for i := lo; i < hi; i++ {
			if _, err := opts.Out.Write(batch[i-lo]); err != nil {
				return fmt.Errorf("write request %d: %w", i, err)
			}
			written += int64(len(batch[i-lo]))
			if opts.Progress != nil {
				opts.Progress(i+1, opts.Count)
			}
		}
	}
	return nil
}

// lineBytes is the size of a batch of lines.
func lineBytes(lines [][]byte) int64 {
	var n int64
	for _, l := range lines {
		n += int64(len(l))
	}
	return n
}

// ErrTooManyRequests says a dataset would pass its size bound: the count asked is too large.
var ErrTooManyRequests = errors.New("too many requests")

// checkSize refuses a dataset whose size — built bytes of the first done requests, extrapolated
// to count (lines of one budget differ by a few bytes) — passes limit, saying how many fit.
func checkSize(count, done int, built, limit int64, inputTokens int) error {
	if built <= limit && built/int64(done)*int64(count) <= limit+limit/20 {
		return nil
	}
	fit := limit * int64(done) / built
	return fmt.Errorf("generate dataset: %w: %d of %d input tokens make about %s, more than the %s a dataset-replay cell reads: about %d fit (a replay cycles through its prompts)",
		ErrTooManyRequests, count, inputTokens, size(built/int64(done)*int64(count)), size(limit), fit)
}

// size words a byte count in MiB, or in bytes below one.
func size(n int64) string {
	if n < 1<<20 {
		return strconv.FormatInt(n, 10) + " bytes"
	}
	return strconv.FormatInt(n>>20, 10) + " MiB"
}

// naturalPrompt returns an instruction and generated paragraphs of exactly budget tokens.
// Whole paragraphs are added while they fit; the last is cut at a word boundary where the
// count is exact (trying up to attempts fresh paragraphs when none is, then padding with
// one-token words, whose number is returned), and the result is counted in full.
func naturalPrompt(seed int64, i, budget, attempts int) (string, int, error) {
	h := sha256.Sum256([]byte("dataset\x00" + strconv.FormatInt(seed, 10) + "\x00" + strconv.Itoa(i)))
	g := textgen.New(int64(binary.LittleEndian.Uint64(h[:8])))
	total := budget
	var b strings.Builder
	instr := instructions[i%len(instructions)] + "\n\n"
	if n := tokens.Count(instr); n+8 <= budget {
		b.WriteString(instr)
		budget -= n
	}
	left, padded := budget, 0
	for attempt := 0; left > 0; {
		par := g.Paragraph() + "\n\n"
		cuts, n := measure(par)
		if n < left {
			b.WriteString(par)
			left -= n
			continue
		}
		if k := cutWith(cuts, left); k >= 0 {
			b.WriteString(par[:cuts[k].at])
			left = 0
			break
		}
		if attempt++; attempt <= attempts {
			continue
		}
		// No paragraph ends a word at the right count: stop at the closest word and pad
		// with one-token words.
		k := cutBelow(cuts, left)
		if k < 0 {
			continue
		}
		b.WriteString(par[:cuts[k].at])
		padded = left - cuts[k].tok
		for j := range padded {
			b.WriteString(" " + fillerWords[(i+j)%len(fillerWords)])
		}
		left = 0
	}
	text := b.String()
	if got := tokens.Count(text); got != total {
		return "", 0, fmt.Errorf("prompt counts %d tokens, want %d", got, total)
	}
	return text, padded, nil
}

// cutWith returns the index of the cut with exactly n tokens before it, or -1.
func cutWith(cuts []cut, n int) int {
	for k, c := range cuts {
		if c.tok == n {
			return k
		}
		if c.tok > n {
			break
		}
	}
	return -1
}

// cutBelow returns the index of the last cut with at most n tokens before it, or -1.
func cutBelow(cuts []cut, n int) int {
	k := -1
	for j, c := range cuts {
		if c.tok > n {
			break
		}
		k = j
	}
	return k
}

// GenerateFile writes the dataset to path atomically: a temporary file in the same directory,
// fsynced, then renamed over path, so a crash never leaves a half-written dataset behind.
func GenerateFile(ctx context.Context, opts GenerateOptions, path string) (err error) {
	if opts.Out != nil {
		return errors.New("generate dataset: GenerateFile writes to its path; leave Out unset")
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	w := bufio.NewWriterSize(tmp, 1<<20)
	opts.Out = w
	if err := Generate(ctx, opts); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("close %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("rename %s to %s: %w", tmp.Name(), path, err)
	}
	if d, derr := os.Open(dir); derr == nil {
		// Make the rename itself durable; not every filesystem supports syncing a directory.
		_ = d.Sync()
		d.Close()
	}
	return nil
}
