package workload

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/perfdag/perfdag/engine/bounded"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/tokens"
)

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

const replayFile = `{"text_input": "What is the capital of France?", "output_length": 20}
{"text_input": "Explain quantum computing in simple terms.", "timestamp": 10}
{"text_input": "Summarize the main causes of World War II.", "output_length": 200}
`

func TestReplayOutputBudgets(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "data/q.jsonl", replayFile)
	cases := []struct {
		name    string
		w       schema.Workload
		wantOut []int
	}{
		// The line's output_length wins over the shape; the shape fills a missing one.
		{"shape fallback", schema.Workload{Shape: "aa-1k"}, []int{20, 1000, 200}},
		// An explicit output_tokens overrides every line.
		{"forced", schema.Workload{Shape: "aa-1k", OutputTokens: 64}, []int{64, 64, 64}},
		{"custom output only", schema.Workload{OutputTokens: 7}, []int{7, 7, 7}},
	}
	for _, c := range cases {
		c.w.Mode, c.w.Dataset = ModeReplay, "data/q.jsonl"
		src, err := Open(c.w, dir, "ignored")
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if src.Len() != 3 {
			t.Fatalf("%s: Len = %d, want 3", c.name, src.Len())
		}
		for i, want := range c.wantOut {
			p, err := src.Prompt(i)
			if err != nil || p.OutputTokens != want {
				t.Errorf("%s: prompt %d output = %d, %v; want %d", c.name, i, p.OutputTokens, err, want)
			}
		}
	}
}

func TestReplayCyclesAndCounts(t *testing.T) {
	dir := t.TempDir()
	abs := writeFile(t, dir, "q.jsonl", replayFile)
	// An absolute dataset path ignores baseDir.
	src, err := Open(schema.Workload{Mode: ModeReplay, Dataset: abs, Shape: "aa-10k"}, "/nonexistent", "")
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{"What is the capital of France?", "Explain quantum computing in simple terms.", "Summarize the main causes of World War II."}
	for i := range 7 {
		p, err := src.Prompt(i)
		if err != nil {
			t.Fatal(err)
		}
		want := texts[i%3]
		if p.Text != want || p.InputTokens != tokens.Count(want) {
			t.Errorf("prompt %d = %q (%d tokens), want %q (%d tokens)", i, p.Text, p.InputTokens, want, tokens.Count(want))
		}
	}
	// "What is the capital of France?" is 7 o200k_base tokens: What, is, the, capital, of, France, ?
	if p, _ := src.Prompt(0); p.InputTokens != 7 {
		t.Errorf("first prompt counts %d tokens, want 7", p.InputTokens)
	}
	if _, err := src.Prompt(-1); err == nil {
		t.Error("Prompt(-1) succeeded")
	}
}

func TestReplayErrors(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "noout.jsonl", "{\"text_input\": \"a\", \"output_length\": 3}\n\n{\"text_input\": \"b\"}\n")
	writeFile(t, dir, "lengths.jsonl", `{"timestamp": 0, "input_length": 655, "output_length": 52, "hash_ids": [46, 47]}`+"\n")
	cases := []struct {
		w    schema.Workload
		want string
	}{
		{schema.Workload{Mode: ModeReplay, Dataset: "noout.jsonl"}, filepath.Join(dir, "noout.jsonl") + ":3: output_length: missing, and the workload sets neither shape nor output_tokens"},
		{schema.Workload{Mode: ModeReplay, Dataset: "lengths.jsonl", Shape: "aa-1k"}, filepath.Join(dir, "lengths.jsonl") + ":1: text_input: missing; replay sends real text"},
		{schema.Workload{Mode: ModeReplay, Dataset: "absent.jsonl", Shape: "aa-1k"}, "workload.dataset: stat " + filepath.Join(dir, "absent.jsonl")},
		{schema.Workload{Mode: ModeReplay, Dataset: "noout.jsonl", Shape: "aa-2k"}, `workload.shape: unknown shape "aa-2k"`},
	}
	for _, c := range cases {
		_, err := Open(c.w, dir, "")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Open(%+v) error = %v, want it to contain %q", c.w, err, c.want)
		}
	}
}

// Only regular files are read, and never past the size limit: /dev/zero, a FIFO or a directory
// fails at once, a file over the limit before any of it is read.
func TestDatasetBounds(t *testing.T) {
	dir := t.TempDir()
	line := `{"text_input": "hello", "output_length": 4}` + "\n"
	writeFile(t, dir, "at.jsonl", line)
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.jsonl"), 0o644); err != nil {
		t.Fatal(err)
	}
	sparse := filepath.Join(dir, "huge.jsonl")
	writeFile(t, dir, "huge.jsonl", line)
	if err := os.Truncate(sparse, MaxDatasetBytes+1); err != nil {
		t.Fatal(err)
	}
	limit := int64(len(line))
	cases := []struct {
		path  string
		limit int64
		want  error
	}{
		{filepath.Join(dir, "at.jsonl"), limit, nil},
		{filepath.Join(dir, "at.jsonl"), limit - 1, bounded.ErrTooLarge},
		{sparse, MaxDatasetBytes, bounded.ErrTooLarge},
		{"/dev/zero", MaxDatasetBytes, bounded.ErrNotRegular},
		{filepath.Join(dir, "fifo.jsonl"), MaxDatasetBytes, bounded.ErrNotRegular},
		{dir, MaxDatasetBytes, bounded.ErrNotRegular},
	}
	for _, c := range cases {
		entries, err := readDataset(c.path, c.limit)
		if c.want == nil {
			if err != nil || len(entries) != 1 {
				t.Errorf("readDataset(%s, %d) = %d entries, %v", c.path, c.limit, len(entries), err)
			}
			continue
		}
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), "workload.dataset "+c.path) {
			t.Errorf("readDataset(%s, %d) error %v, want class %v naming the path", c.path, c.limit, err, c.want)
		}
	}
	// through the workload, as run-shape opens it
	if _, err := Open(schema.Workload{Mode: ModeReplay, Dataset: "/dev/zero", Shape: "aa-1k"}, dir, ""); !errors.Is(err, bounded.ErrNotRegular) {
		t.Errorf("Open(dataset: /dev/zero) error %v, want not_regular_file", err)
	}
}

func TestReplayCanceled(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "q.jsonl", replayFile)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := OpenContext(ctx, schema.Workload{Mode: ModeReplay, Dataset: "q.jsonl", Shape: "aa-1k"}, dir, "")
	if err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Errorf("OpenContext with a canceled context: error = %v", err)
	}
}
