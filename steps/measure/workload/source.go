package workload

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/perfdag/perfdag/schema"
)

// Prompt is one request's input and answer budget.
type Prompt struct {
	Text         string // the user message
	InputTokens  int    // o200k_base tokens of Text
	OutputTokens int    // answer length asked for (max_tokens = min_tokens)
}

// Source hands run-shape its prompts; implementations are safe for concurrent use.
type Source interface {
	// Prompt returns request i's prompt (i >= 0); replay cycles through its file.
	Prompt(i int) (Prompt, error)
	// Len is the number of distinct prompts: 0 means unbounded (synthetic).
	Len() int
}

// Open returns the prompt source of a workload; see OpenContext.
func Open(w schema.Workload, baseDir string, salt string) (Source, error) {
	return OpenContext(context.Background(), w, baseDir, salt)
}

// OpenContext returns the prompt source of a workload, doing all one-time work now (building
// and tokenizing the synthetic corpus, reading and counting a replay dataset) so that Prompt
// never delays the request schedule. A dataset path resolves relative to baseDir. salt is
// mixed into every synthetic prompt: pass a value unique to the campaign run so prompts
// differ across campaigns as well as across requests (replay sends its file unchanged).
func OpenContext(ctx context.Context, w schema.Workload, baseDir string, salt string) (Source, error) {
	m, err := mode(w)
	if err != nil {
		return nil, err
	}
	if m == ModeReplay {
		path := w.Dataset
		if !filepath.IsAbs(path) {
			path = filepath.Join(baseDir, path)
		}
		defaultOut := 0
		if w.Shape != "" || w.OutputTokens > 0 {
			// Only the answer length matters here; the placeholder input budget lets a
			// custom shape with just output_tokens resolve.
			b, err := Resolve(schema.Workload{Shape: w.Shape, OutputTokens: w.OutputTokens, InputTokens: 1})
			if err != nil {
				return nil, err
			}
			defaultOut = b.OutputTokens
		}
		return openReplay(ctx, path, defaultOut, w.OutputTokens > 0)
	}
	b, err := Resolve(w)
	if err != nil {
		return nil, err
	}
	if b.InputTokens < MinInputTokens {
		return nil, fmt.Errorf("workload.input_tokens: %d is below the synthetic minimum of %d (room for the unique per-request prefix)", b.InputTokens, MinInputTokens)
	}
	c, err := sharedCorpus()
	if err != nil {
		return nil, fmt.Errorf("build synthetic corpus: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return &synthetic{c: c, budget: b, seed: w.Seed, salt: salt}, nil
}
