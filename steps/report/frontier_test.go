package report_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/report"
)

// A campaign with an SLO search gets the frontier page (knee, goodput, every probe, the stopped
// list and why) and its cover's headline names the knee instead of the peak.
func TestFrontierPageAndKneeHeadline(t *testing.T) {
	in := partialInput()
	in.Atlas[1].Intervals = schema.Intervals{"output_tok_s": {Lo: 650, Hi: 730, Method: "batch-means", N: 10}}
	in.Sweeps = []schema.SweepResult{
		{Schema: schema.SchemaSweep, Cell: "aa-1k", Mode: schema.SweepSearch, SLO: "ttft_avg_ms < 700", From: 1, To: 10, Bound: 6,
			Knee: 10, GoodputTokS: f(690.7), GoodputReqS: f(0.69), Probes: []schema.SweepProbe{
				{Concurrency: 1, Met: true, Status: "ok", Throughput: f(86.2)},
				{Concurrency: 10, Met: true, Status: "ok", Throughput: f(690.7)}}},
		{Schema: schema.SchemaSweep, Cell: "aa-10k", Mode: schema.SweepList, StopWhen: "gain_pct < 3", Skipped: []int{20, 40},
			StopReason: "stop_when \"gain_pct < 3\" held after c10 (gain_pct = 1.2)", Probes: []schema.SweepProbe{{Concurrency: 1}, {Concurrency: 10}}},
	}
	out := filepath.Join(t.TempDir(), "r.pdf")
	if err := report.Render(context.Background(), in, out); err != nil {
		t.Fatal(err)
	}
	text := pdfText(t, out)
	mustContain(t, text, report.TitleFrontier, "ttft_avg_ms < 700", "c1+ c10+", "2 probes of <= 6",
		"Sweeps that stop early", "c20 c40", "held after c10", "at knee C=10")
	if strings.Contains(text, "no data: No SLO search") {
		t.Errorf("the cover calls the frontier page empty")
	}
}
