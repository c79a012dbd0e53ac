package report_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

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
		"aa-1k-mbt4k B200 NVFP4 TP8 EP aa-1k mbt 4096 173 at C=10",
		"aa-1k B200 NVFP4 TP8 EP aa-1k mbt 8192 86.3 at C=10",
	)
}

// TestHeadlineNamesTheCell: the Cell column holds the cell id, the variant (the model, when
// nothing else is declared) stands beside it, and two cells of one variant are two rows.
func TestHeadlineNamesTheCell(t *testing.T) {
	in := partialInput()
	var atlas []schema.AtlasRow
	for _, r := range in.Atlas {
		if r.CellID != "aa-1k" {
			continue
		}
		r.Hardware, r.Quant, r.TensorParallel, r.ParallelStrategy, r.Shape = "", "", 0, "", "custom"
		r.Model, r.CellID = "perfdag/sim-model", "chat-a"
		atlas = append(atlas, r)
		r.CellID = "chat-b"
		thr := *r.OutputTokPerSPerGPU * 2
		r.OutputTokPerSPerGPU = &thr
		atlas = append(atlas, r)
	}
	in.Atlas = atlas
	text := coverText(t, in)
	mustContain(t, text, "Cell Variant", "chat-a sim-model 86.3 at C=10 - 0 of 53", "chat-b sim-model 173 at C=10 - 0 of 53")
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
	mustContain(t, text, "402 ± 3.25 at C=1", "1,224 at C=1", "A spaced ± (412 ± 3.2) is the half-width of the TTFT p50's 95 % confidence interval")
}

// TestHeadlineIntervalBesideClientError: a TTFT with both its confidence interval and the
// client's calibrated error shows the interval spaced and the error named.
func TestHeadlineIntervalBesideClientError(t *testing.T) {
	runAt := time.Date(2026, 12, 6, 2, 0, 0, 0, time.UTC)
	in := calibrated("vm", "vm", runAt.Add(-time.Hour))
	for i := range in.Atlas {
		if r := &in.Atlas[i]; r.CellID == "aa-1k" && r.Concurrency == 1 {
			r.Intervals = schema.Intervals{"ttft_p50_ms": {Lo: *r.TTFTP50Ms - 3.25, Hi: *r.TTFTP50Ms + 3.25, Method: "sectioning", N: 10}}
		}
	}
	text := coverText(t, in)
	mustContain(t, text, "412 ± 3.25 (client ±0.18) at C=1", "1,234 ±0.18 at C=1",
		"A spaced ± (412 ± 3.2) is the half-width of the TTFT p50's 95 % confidence interval", "± is this client's own TTFT error")
	mustContain(t, text, report.TitleCompare) // the cover still fits its page
}
