package report_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/report"
	"github.com/perfdag/perfdag/steps/report/smoke"
	"github.com/perfdag/perfdag/steps/report/svgchart"
	"github.com/perfdag/perfdag/steps/testkit"
)

func smokeHTML(t testing.TB) (report.Input, string) {
	t.Helper()
	in, err := smoke.Input()
	if err != nil {
		t.Fatal(err)
	}
	b, err := report.BuildHTML(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	return in, string(b)
}

var (
	sectionTitle = regexp.MustCompile(`<section class="page" id="page-\d+">\n<h2>([^<]*)</h2>`)
	chartCount   = regexp.MustCompile(`data-charts="(\d+)"`)
	externalRef  = regexp.MustCompile(`(?i)(src|href|action|poster|data)\s*=\s*["']?\s*(https?:|//|ftp:)`)
)

// TestHTMLSamePagesAsPDF: the HTML report has the PDF's pages in the PDF's order (pages with
// data; the rest are lines of the cover's contents), and its structure is the golden one.
func TestHTMLSamePagesAsPDF(t *testing.T) {
	in, doc := smokeHTML(t)
	var want []string
	for _, p := range report.Contents(in) {
		if p.HasData {
			want = append(want, p.Title)
		}
	}
	var got []string
	for _, m := range sectionTitle.FindAllStringSubmatch(doc, -1) {
		got = append(got, m[1])
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("pages\n got %q\nwant %q", got, want)
	}
	testkit.Golden(t, "testdata/smoke_html_structure.txt", []byte(structure(doc)))
}

// structure summarises a report page by page: title, charts, marks, tables, table rows.
func structure(doc string) string {
	var b strings.Builder
	parts := strings.Split(doc, `<section class="page"`)
	for _, p := range parts[1:] {
		title := sectionTitle.FindStringSubmatch(`<section class="page"` + p)
		fmt.Fprintf(&b, "%s: charts=%d legends=%d marks=%d tables=%d rows=%d\n", title[1],
			strings.Count(p, `<figure class="chart">`), strings.Count(p, `<div class="legend">`),
			strings.Count(p, `class="pt"`), strings.Count(p, "<table>"), strings.Count(p, "<tr>"))
	}
	return b.String()
}

// TestHTMLSelfContained: one file, nothing fetched: no external reference of any kind, one
// script (the tooltip one, allowed by hash in the Content-Security-Policy), every chart an
// inline SVG with hoverable marks.
func TestHTMLSelfContained(t *testing.T) {
	_, doc := smokeHTML(t)
	if m := externalRef.FindString(doc); m != "" {
		t.Errorf("external reference %q", m)
	}
	for _, bad := range []string{"<link", "<img", "<iframe", "<object", "<embed", "@import", "url("} {
		if strings.Contains(doc, bad) {
			t.Errorf("the report contains %q: it must not fetch anything", bad)
		}
	}
	if n := strings.Count(doc, "<script"); n != 1 {
		t.Errorf("%d <script> elements, want the one tooltip script", n)
	}
	if !strings.Contains(doc, `http-equiv="Content-Security-Policy" content="default-src 'none';`) {
		t.Error("no Content-Security-Policy forbidding fetches")
	}
	m := chartCount.FindStringSubmatch(doc)
	if m == nil {
		t.Fatal("no data-charts count")
	}
	figs := strings.Split(doc, `<figure class="chart">`)[1:]
	if fmt.Sprint(len(figs)) != m[1] || strings.Count(doc, `<svg xmlns="http://www.w3.org/2000/svg" class="svgchart`) != len(figs) {
		t.Errorf("data-charts=%s, %d chart figures, %d chart SVGs", m[1], len(figs), strings.Count(doc, `class="svgchart`))
	}
	if len(figs) < 10 {
		t.Errorf("the smoke fixture has every chart page; only %d charts", len(figs))
	}
	for i, f := range figs {
		f = f[:strings.Index(f, "</figure>")]
		if !strings.Contains(f, `class="pt"`) {
			t.Errorf("chart %d has no hoverable mark:\n%.300s", i, f)
		}
	}
}

// hostile is what a campaign file or a server's error text could carry.
const hostile = `<script>alert(1)</script>"><img src=x onerror=alert(2)>`

// hostileInput puts hostile text in the campaign name, the title, a cell id (the scatter
// tooltips, the gaps note, the tables) and a gate's error text.
func hostileInput(t testing.TB) report.Input {
	in, err := smoke.Input()
	if err != nil {
		t.Fatal(err)
	}
	c := *in.Campaign
	c.Campaign = "camp" + hostile
	c.Description = "desc" + hostile
	if c.Report != nil {
		r := *c.Report
		r.Title = "title" + hostile
		c.Report = &r
	}
	in.Campaign = &c
	rows := append([]schema.AtlasRow(nil), in.Atlas...)
	first := rows[0].CellID
	for i := range rows {
		if rows[i].CellID == first {
			rows[i].CellID = "cell" + hostile
		}
	}
	in.Atlas = rows
	in.Gates = []schema.GateVerdict{{Gate: "gate" + hostile, Node: "node" + hostile, Severity: schema.SeverityWarn, Rule: "ttft_p50_ms < 1", Error: "error" + hostile}}
	return in
}

func TestHTMLEscapesHostileText(t *testing.T) {
	b, err := report.BuildHTML(context.Background(), hostileInput(t))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	if n := strings.Count(doc, "<script"); n != 1 {
		t.Errorf("%d <script> elements, want 1: hostile text became markup", n)
	}
	for _, bad := range []string{"<img", "onerror=alert(2)>"} {
		if strings.Contains(doc, bad) {
			t.Errorf("hostile text reached the page unescaped: %q", bad)
		}
	}
	for _, where := range []string{"camp", "title", "cell", "error", "gate"} {
		if !strings.Contains(doc, where+"&lt;script&gt;alert(1)&lt;/script&gt;&#34;&gt;&lt;img src=x onerror=alert(2)&gt;") {
			t.Errorf("the %s text is not shown escaped", where)
		}
	}
}

// BenchmarkBuildHTML builds the HTML report of two cells (the quickstart's size: 12 points)
// and of the whole 40-cell smoke fixture (232 plot-ready points, every page).
func BenchmarkBuildHTML(b *testing.B) {
	all, err := smoke.Input()
	if err != nil {
		b.Fatal(err)
	}
	small := all
	small.Atlas = nil
	cells := map[string]bool{}
	for _, r := range all.Atlas {
		if len(cells) < 2 || cells[r.CellID] {
			cells[r.CellID] = true
			small.Atlas = append(small.Atlas, r)
		}
	}
	for _, c := range []struct {
		name string
		in   report.Input
	}{{"cells=2", small}, {"cells=40", all}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			size := 0
			for b.Loop() {
				doc, err := report.BuildHTML(context.Background(), c.in)
				if err != nil {
					b.Fatal(err)
				}
				size = len(doc)
			}
			b.ReportMetric(float64(size)/1024, "KiB")
		})
	}
}

// TestHTMLRedactsSecrets: the value of an endpoint's API-key variable never reaches the HTML,
// wherever a campaign string carries it.
func TestHTMLRedactsSecrets(t *testing.T) {
	in, err := smoke.Input()
	if err != nil {
		t.Fatal(err)
	}
	const secret = "sk-html-report-secret-9431"
	t.Setenv(in.Campaign.Endpoints["main"].APIKeyEnv, secret)
	c := *in.Campaign
	c.Description = "pasted by mistake: " + secret
	in.Campaign = &c
	b, err := report.BuildHTML(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), secret) {
		t.Fatal("the API key's value is in the HTML report")
	}
	if !strings.Contains(string(b), "pasted by mistake: [redacted]") {
		t.Error("the redacted description is missing")
	}
}

// TestHTMLHeatmapCellsCarryExactValues: a heatmap cell shows a rounded number, and carries the
// atlas value unrounded (title and data-value) for a reader who hovers it.
func TestHTMLHeatmapCellsCarryExactValues(t *testing.T) {
	in, doc := smokeHTML(t)
	checked := 0
	for _, r := range in.Atlas {
		if r.Concurrency != 32 || !r.PlotReady || r.OutputTokPerSPerGPU == nil || r.TTFTP50Ms == nil {
			continue
		}
		for _, v := range []float64{*r.OutputTokPerSPerGPU, *r.TTFTP50Ms} {
			if !strings.Contains(doc, fmt.Sprintf(`data-value="%s">`, svgchart.Exact(v))) {
				t.Errorf("%s C=32: no heatmap cell carries %v exactly", r.CellID, v)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no plot-ready row at C=32 in the smoke fixture")
	}
}

// TestHTMLFrontierPage: the SLO frontier page (merged from main after the HTML report) is in
// the HTML too, its probes hoverable with their exact throughput.
func TestHTMLFrontierPage(t *testing.T) {
	in := partialInput()
	in.Sweeps = []schema.SweepResult{{Schema: schema.SchemaSweep, Cell: "aa-1k", Mode: schema.SweepSearch, SLO: "ttft_avg_ms < 700",
		From: 1, To: 10, Bound: 6, Knee: 10, KneeOutputTokS: f(690.7), Probes: []schema.SweepProbe{
			{Concurrency: 1, Met: true, Status: "ok", Throughput: f(86.25)}, {Concurrency: 10, Met: true, Status: "ok", Throughput: f(690.7)}}}}
	b, err := report.BuildHTML(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	if !strings.Contains(doc, "<h2>"+report.TitleFrontier+"</h2>") {
		t.Fatal("no SLO frontier page")
	}
	page := doc[strings.Index(doc, "<h2>"+report.TitleFrontier):]
	for _, want := range []string{`data-y="86.25"`, `data-y="690.7"`, "cell aa-1k, C=10", "ttft_avg_ms &lt; 700"} {
		if !strings.Contains(page, want) {
			t.Errorf("the frontier page lacks %q", want)
		}
	}
}
