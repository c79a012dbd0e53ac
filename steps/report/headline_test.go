package report_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/perfdag/perfdag/schema"
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

// TestHeadlineShowsTheInterval: the cover's TTFT p50 carries ± the half-width of the row's
// 95 % interval when the row has one, plain otherwise, with a note saying what ± means.
func TestHeadlineShowsTheInterval(t *testing.T) {
	in := partialInput()
	for i := range in.Atlas {
		r := &in.Atlas[i]
		if r.Concurrency != 1 || !r.PlotReady {
			continue
		}
		p50 := *r.TTFTAvgMs - 10
		r.TTFTP50Ms = &p50
		if r.CellID == "aa-1k" {
			r.Intervals = schema.Intervals{"ttft_p50_ms": {Lo: p50 - 3.25, Hi: p50 + 3.25, Method: "sectioning", N: 10}}
		}
	}
	out := filepath.Join(t.TempDir(), "out.pdf")
	if err := report.Render(context.Background(), in, out); err != nil {
		t.Fatal(err)
	}
	text := pdfText(t, out)
	mustContain(t, text, "402 ± 3.25 at C=1", "1,224 at C=1", "± is the half-width of the 95 % confidence interval")
}
