package workload

import (
	"context"
	"fmt"
	"runtime"

	"golang.org/x/sync/errgroup"

	"github.com/perfdag/perfdag/engine/bounded"
	"github.com/perfdag/perfdag/steps/measure/tokens"
)

// MaxDatasetBytes bounds a replay dataset: every prompt is held in memory with its token
// count, so the file's size is the run's memory. 256 MiB is hundreds of thousands of aa-10k
// prompts; a larger file, or a device such as /dev/zero, is refused before it is read.
const MaxDatasetBytes = 256 << 20

// readDataset parses a dataset of at most limit bytes; a device, FIFO or directory is refused
// before it is opened for reading, and a larger file before a byte of it is read.
func readDataset(path string, limit int64) ([]TraceEntry, error) {
	const what = "workload.dataset"
	f, st, err := bounded.Open(what, path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st.Size() > limit {
		return nil, &bounded.Error{What: what, Path: path, Limit: limit, Err: bounded.ErrTooLarge}
	}
	return ReadTrace(bounded.LimitReader(f, what, path, limit), path)
}

// replay serves the prompts of a mooncake_trace file in file order, cycling. It is immutable
// after openReplay and safe for concurrent use.
type replay struct {
	path    string
	prompts []Prompt
}

// Len is the number of requests in the file.
func (r *replay) Len() int { return len(r.prompts) }

// Prompt returns line (i mod Len) of the file.
func (r *replay) Prompt(i int) (Prompt, error) {
	if i < 0 {
		return Prompt{}, fmt.Errorf("replay %s: prompt index %d must not be negative", r.path, i)
	}
	return r.prompts[i%len(r.prompts)], nil
}

// openReplay reads a dataset and counts every prompt's tokens (in parallel) ahead of the run.
// Output budgets: forced (the workload's output_tokens) wins over the line's output_length,
// which wins over defaultOut (the shape's answer length).
func openReplay(ctx context.Context, path string, defaultOut int, forced bool) (*replay, error) {
	entries, err := readDataset(path, MaxDatasetBytes)
	if err != nil {
		return nil, err
	}
	if err := tokens.Load(); err != nil {
		return nil, err
	}
	r := &replay{path: path, prompts: make([]Prompt, len(entries))}
	for i, e := range entries {
		out := e.OutputLength
		if forced || out == 0 {
			out = defaultOut
		}
		if out == 0 {
			return nil, fmt.Errorf("%s:%d: output_length: missing, and the workload sets neither shape nor output_tokens to fall back on", path, e.Line)
		}
		r.prompts[i] = Prompt{Text: e.TextInput, OutputTokens: out}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i := range r.prompts {
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			r.prompts[i].InputTokens = tokens.Count(r.prompts[i].Text)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, fmt.Errorf("count tokens of %s: %w", path, err)
	}
	return r, nil
}
