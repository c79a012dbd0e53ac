package report_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/report"
)

// bandedInput is a campaign whose search of 1..16 for ttft_p50_ms <= 250 left c9 and c10
// undecided: its knee is c9, known to the band c8–c10 at 95 %.
func bandedInput() report.Input {
	in := partialInput()
	base := in.Atlas[0]
	for _, p := range []struct {
		c    int
		ttft float64
	}{{1, 40}, {8, 200}, {9, 245}, {10, 256}, {11, 300}, {12, 350}, {16, 500}} {
		r := base
		r.CellID, r.Concurrency, r.TTFTP50Ms = "chat", p.c, f(p.ttft)
		r.OutputTokPerS, r.OutputTokPerSPerGPU = f(60*float64(p.c)), f(7.5*float64(p.c))
		r.Intervals = schema.Intervals{"ttft_p50_ms": {Lo: p.ttft - 10, Hi: p.ttft + 10, Method: "sectioning", N: 10}}
		in.Atlas = append(in.Atlas, r)
	}
	probe := func(c int, met bool, verdict string) schema.SweepProbe {
		return schema.SweepProbe{Concurrency: c, Met: met, Status: "ok", Verdict: verdict, Throughput: f(60 * float64(c))}
	}
	in.Sweeps = []schema.SweepResult{{Schema: schema.SchemaSweep, Cell: "chat", Mode: schema.SweepSearch, SLO: "ttft_p50_ms <= 250",
		From: 1, To: 16, Bound: 10, Knee: 9, KneeLo: 8, KneeHi: 10, BandLevel: 0.95, Probes: []schema.SweepProbe{
			probe(1, true, schema.VerdictMeets), probe(16, false, schema.VerdictMisses), probe(8, true, schema.VerdictMeets),
			probe(12, false, schema.VerdictMisses), probe(10, false, schema.VerdictUndecided), probe(9, true, schema.VerdictUndecided),
			probe(11, false, schema.VerdictMisses)}}}
	return in
}

// A search with undecided probes shows its knee as a band: on the cover's headline, in the
// frontier table (undecided probes marked ~), in the reason line, and shaded on the frontier's
// charts in the PDF and the HTML.
func TestFrontierKneeBand(t *testing.T) {
	in := bandedInput()
	out := filepath.Join(t.TempDir(), "r.pdf")
	if err := report.Render(context.Background(), in, out); err != nil {
		t.Fatal(err)
	}
	text := pdfText(t, out)
	if dir := os.Getenv("PERFDAG_KEEP_REPORT"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, "kneeband.pdf"), mustRead(t, out), 0o644)
	}
	mustContain(t, text, "67.5 at knee c9 (c8–c10 at", // the cover (its cell wraps)
		"c9 (c8–c10 at 95 %)", "c10~ c9~ c11-", "undecided, ? no valid request)", // the table's knee and probes
		"- chat: knee c9 (c8–c10 at 95 %) because c11 misses ttft_p50_ms <= 250 (ttft_p50_ms = 300); c9 c10 undecided.",
		"the knee is a band (shaded)")

	page, err := report.BuildHTML(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if dir := os.Getenv("PERFDAG_KEEP_REPORT"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, "kneeband.html"), page, 0o644)
	}
	doc := string(page)
	i := strings.Index(doc, "<h2>"+report.TitleFrontier+"</h2>")
	if i < 0 {
		t.Fatal("the HTML has no frontier page")
	}
	doc = doc[i:]
	for _, want := range []string{
		`<title>chat: knee band c8–c10 at 95 %: 8 to 10</title><rect class="span"`, // shaded on the charts
		"chat: SLO undecided", "cell chat, C=10: misses this clause; the SLO undecided at the probe&#39;s max requests",
		"knee c9 (c8–c10 at 95 %)",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("the HTML frontier page lacks %q", want)
		}
	}
	if n := strings.Count(doc, `<rect class="span"`); n < 2 {
		t.Errorf("%d shaded bands on the frontier page, want one on the throughput chart and one on the SLO panel (plus legend swatches)", n)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
