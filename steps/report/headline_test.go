package report_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/perfdag/perfdag/steps/report"
)

// TestHeadlineKeepsBatchedTokensApart: two cells differing only in max_num_batched_tokens
// are two headline rows with their own numbers, not one merged row.
func TestHeadlineKeepsBatchedTokensApart(t *testing.T) {
	in := partialInput()
	n := len(in.Atlas)
	for _, r := range in.Atlas[:n] {
		if r.CellID != "aa-1k" {
			continue
		}
		r.CellID, r.MaxNumBatchedTokens = "aa-1k-mbt4k", 4096
		thr := *r.OutputTokPerSPerGPU * 2
		r.OutputTokPerSPerGPU = &thr
		in.Atlas = append(in.Atlas, r)
	}
	out := filepath.Join(t.TempDir(), "out.pdf")
	if err := report.Render(context.Background(), in, out); err != nil {
		t.Fatal(err)
	}
	text := pdfText(t, out)
	mustContain(t, text,
		"B200 NVFP4 TP8 EP aa-1k mbt 4096 173 at C=10",
		"B200 NVFP4 TP8 EP aa-1k mbt 8192 86.3 at C=10",
	)
}
