package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/perfdag/perfdag/engine/plural"

	"github.com/johnfercher/maroto/v2/pkg/consts/align"
	"github.com/johnfercher/maroto/v2/pkg/consts/fontstyle"
	"gonum.org/v1/plot/vg"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/report/charts"
)

const frontierChartH = 78.0

// searches are the sweeps that searched for a knee, in the order loaded.
func searches(in Input) []schema.SweepResult {
	var out []schema.SweepResult
	for _, s := range in.Sweeps {
		if s.Mode == schema.SweepSearch {
			out = append(out, s)
		}
	}
	return out
}

// frontierRow finds the atlas row of a probe (its interval and exact throughput).
func frontierRow(v *view, cell string, c int) *schema.AtlasRow {
	for i := range v.rows {
		if r := &v.rows[i]; r.CellID == cell && r.Concurrency == c {
			return r
		}
	}
	return nil
}

// frontierSeries draws each searched cell's probes as output tok/s against concurrency: filled
// where the SLO held, hollow where it did not, the knee labelled, and each probe's 95 %
// interval of output throughput (when the point has one) as a vertical bar.
func frontierSeries(v *view) []charts.Series {
	var out []charts.Series
	for i, s := range searches(v.in) {
		met := charts.Series{Name: s.Cell + ": meets SLO", Color: charts.Color(i), Marker: charts.Circle}
		miss := charts.Series{Name: s.Cell + ": misses SLO", Color: charts.Color(i), Marker: charts.Circle, Hollow: true}
		undecided := charts.Series{Name: s.Cell + ": undecided", Color: charts.Color(i), Marker: charts.Triangle, Hollow: true}
		for _, p := range s.Probes {
			if p.Throughput == nil {
				continue
			}
			pt := charts.Point{X: float64(p.Concurrency), Y: *p.Throughput, Tip: fmt.Sprintf("cell %s, C=%d", s.Cell, p.Concurrency)}
			if p.Concurrency == s.Knee && s.Knee != 0 {
				pt.Label = "knee " + bandText(&s)
			}
			switch {
			case p.Verdict == schema.VerdictUndecided:
				pt.Tip += ": undecided"
				undecided.Points = append(undecided.Points, pt)
			case p.Met:
				met.Points = append(met.Points, pt)
			default:
				miss.Points = append(miss.Points, pt)
			}
			if r := frontierRow(v, s.Cell, p.Concurrency); r != nil {
				if iv, ok := r.Intervals["output_tok_s"]; ok {
					out = append(out, charts.Series{Color: charts.Color(i), Marker: charts.None, Line: true, NoLegend: true,
						Points: []charts.Point{{X: pt.X, Y: iv.Lo}, {X: pt.X, Y: iv.Hi}}})
				}
			}
		}
		out = append(out, met, miss)
		if len(undecided.Points) > 0 {
			out = append(out, undecided)
		}
	}
	return out
}

// kneeSpans shade each search's knee band (when probes were undecided, so it is wider than
// one concurrency) in the search's colour; a band whose lower end is "none" starts at from.
func kneeSpans(v *view, cells map[string]int) []charts.Span {
	var out []charts.Span
	for _, s := range searches(v.in) {
		i, ok := cells[s.Cell]
		lo, hi := s.KneeBand()
		if !ok || s.KneeUnknown != "" || lo == hi || hi == 0 {
			continue
		}
		out = append(out, charts.Span{Name: s.Cell + ": knee band " + bandRange(&s), X0: float64(max(lo, s.From)), X1: float64(hi), Color: charts.Color(i)})
	}
	return out
}

// bandRange is the band of a knee alone: "c30–c32 at 95 %".
func bandRange(s *schema.SweepResult) string {
	t := bandText(s)
	if i := strings.Index(t, " ("); i >= 0 {
		return strings.TrimSuffix(t[i+2:], ")")
	}
	return t
}

// searchIndex maps every search's cell to its index (its colour).
func searchIndex(v *view) map[string]int {
	out := map[string]int{}
	for i, s := range searches(v.in) {
		out[s.Cell] = i
	}
	return out
}

// sloPanelH is the height of one clause panel; two share a row (one alone spans the page).
const sloPanelH = 62.0

// sloPanelW is a clause panel's width: the page's when it is the only one, else half.
func sloPanelW(n int) float64 {
	if n == 1 {
		return contentW
	}
	return contentW / 2
}

func frontierCharts(v *view, art *artwork) []job {
	if len(searches(v.in)) == 0 {
		return nil
	}
	jobs := []job{func() error {
		ch := charts.Chart{
			Title:  "Probes of each SLO search: output throughput by concurrency",
			X:      charts.Axis{Label: "concurrency"},
			Y:      charts.Axis{Label: "output tok/s (bars: 95 % interval)"},
			Series: frontierSeries(v), Spans: kneeSpans(v, searchIndex(v)), Legend: true,
			Width: vg.Length(contentW) * vg.Millimeter, Height: vg.Length(frontierChartH) * vg.Millimeter, FontSize: 7,
			Empty: "no probe has a throughput",
		}
		f, err := art.chartFig(ch)
		if err != nil {
			return fmt.Errorf("frontier chart: %w", err)
		}
		art.mu.Lock()
		art.frontier = f
		art.mu.Unlock()
		return nil
	}}
	panels, _ := sloPanels(v)
	art.slo = make([]*figure, len(panels))
	for i, p := range panels {
		jobs = append(jobs, func() error {
			f, err := art.chartFig(p.chart(sloPanelW(len(panels)), sloPanelH))
			if err != nil {
				return fmt.Errorf("SLO panel %s: %w", p.clause.Clause, err)
			}
			art.mu.Lock()
			art.slo[i] = f
			art.mu.Unlock()
			return nil
		})
	}
	return jobs
}

// frontierPage shows each cell's knee under its SLO, the goodput there and every probe, then
// the list sweeps that stopped early and why.
func frontierPage(d sink, v *view, art *artwork) {
	d.newPage(TitleFrontier)
	ss := searches(v.in)
	if len(ss) > 0 {
		note := "The knee is the highest concurrency whose point meets the cell's SLO, found by bisection over concurrency " +
			"(docs/search.md): every probe is an ordinary measured point. Knee tok/s and req/s are the knee point's throughput, every valid request counted."
		if slices.ContainsFunc(ss, func(s schema.SweepResult) bool { lo, hi := s.KneeBand(); return lo != hi }) {
			note += " Where probes near the threshold measured to their max without a verdict (undecided), the knee is a band (shaded): " +
				"from the highest concurrency decided to meet the SLO to one below the lowest decided to miss it, each end decided at 95 %; " +
				"the knee named is the best estimate inside it."
		}
		goodput := slices.ContainsFunc(ss, func(s schema.SweepResult) bool { return s.KneeGoodputReqS != nil })
		if goodput {
			note += " Goodput is the knee point's requests per second that met every per-request target of the cell's slo (DistServe's goodput), " +
				"with the SLO attainment (the fraction of its requests, failed ones included, that met them) in brackets."
		}
		d.para(note, 8, fontstyle.Normal, &colorMuted)
		d.space(1)
		if art.frontier != nil {
			d.images(frontierChartH, art.frontier)
			d.space(2)
		}
		cols := []tcol{{head: "Cell", w: 5}, {head: "SLO", w: 8}, {head: "Knee", w: 3, align: align.Right},
			{head: "Knee tok/s", w: 3, align: align.Right}, {head: "req/s", w: 2, align: align.Right},
			{head: "Probes (+ met, - missed, ~ undecided, ? no valid request)", w: 11}}
		if goodput {
			cols[1].w, cols[5].w = 6, 9
			cols = slices.Insert(cols, 5, tcol{head: "Goodput req/s (attainment)", w: 4, align: align.Right})
		}
		if slices.ContainsFunc(ss, func(s schema.SweepResult) bool { lo, hi := s.KneeBand(); return lo != hi }) {
			cols[2].w, cols[len(cols)-1].w = 6, cols[len(cols)-1].w-3 // a band: "c31 (c30–c32 at 95 %)"
		}
		var rows [][]tcell
		for _, s := range ss {
			knee := bandText(&s)
			var probes []string
			for _, p := range s.Probes {
				mark := "-"
				switch {
				case p.Verdict == schema.VerdictUndecided:
					mark = "~"
				case p.Met:
					mark = "+"
				case p.NoEvidence:
					mark = "?"
				}
				probes = append(probes, fmt.Sprintf("c%d%s", p.Concurrency, mark))
			}
			row := []tcell{plain(s.Cell), plain(s.SLO), {text: knee, bold: true}, plain(num(s.KneeOutputTokS)), plain(num(s.KneeRequestThroughput)),
				plain(fmt.Sprintf("%s of <= %d: %s", plural.N(len(s.Probes), "probe"), s.Bound, strings.Join(probes, " ")))}
			if goodput {
				row = slices.Insert(row, 5, plain(kneeGoodput(s)))
			}
			rows = append(rows, row)
		}
		d.table(cols, nil, rows)
		sloSection(d, v, art)
	}
	var lists [][]tcell
	for _, s := range v.in.Sweeps {
		if s.Mode != schema.SweepList {
			continue
		}
		reason := "ran the whole list"
		if len(s.Skipped) > 0 {
			reason = s.StopReason
		}
		lists = append(lists, []tcell{plain(s.Cell), plain(s.StopWhen), plain(fmt.Sprint(len(s.Probes))), plain(fmtLoads(s.Skipped)), plain(reason)})
	}
	if len(lists) > 0 {
		d.space(2)
		d.heading("Sweeps that stop early (stop_when)")
		d.table([]tcol{{head: "Cell", w: 5}, {head: "stop_when", w: 7}, {head: "Measured", w: 2, align: align.Right},
			{head: "Skipped", w: 4}, {head: "Why", w: 14}}, nil, lists)
	}
}

// sloSection draws each clause of the searches' SLOs against load, two panels a row, and says
// per search which clause its first miss missed: why the knee is where it is.
func sloSection(d sink, v *view, art *artwork) {
	panels, notDrawn := sloPanels(v)
	d.space(2)
	d.heading("The SLO against load")
	if len(panels) > 0 {
		d.para("One panel per clause of the SLO: the value the clause reads at each probe (filled: the clause holds there; hollow: "+
			"it does not; triangles: the probe's SLO verdict undecided at its max requests; bars: the point's 95 % interval when it has one) "+
			"against the clause's limit (dashed red), the knee a dashed vertical line and, when probes were undecided, its band shaded. "+
			"The knee sits below the first probe decided to miss a clause.", 8, fontstyle.Normal, &colorMuted)
		d.space(1)
	}
	for i := 0; i < len(art.slo); i += 2 {
		figs := art.slo[i:min(i+2, len(art.slo))]
		if len(figs) == 1 && len(art.slo) > 1 {
			figs = append(figs, nil)
		}
		d.images(sloPanelH, figs...)
		d.space(1)
	}
	for _, r := range kneeReasons(v, panels) {
		d.para("- "+r, bodySize, fontstyle.Normal, nil)
	}
	if len(notDrawn) > 0 {
		d.para("Not drawn (not a field compared with a number): "+strings.Join(notDrawn, "; ")+".", 8, fontstyle.Italic, &colorMuted)
	}
}

// fmtLoads lists points by key: "c16 c32", "r2 r4".
func fmtLoads(ls []schema.Load) string {
	if len(ls) == 0 {
		return "-"
	}
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.Key()
	}
	return strings.Join(out, " ")
}

func fmtConcs(cs []int) string {
	if len(cs) == 0 {
		return "-"
	}
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = fmt.Sprintf("c%d", c)
	}
	return strings.Join(out, " ")
}

// kneeGoodput words a search's goodput at its knee with the knee's SLO attainment: "3.1 (99.2 %)";
// "-" when the cell declares no slo or the search found no knee.
func kneeGoodput(s schema.SweepResult) string {
	if s.KneeGoodputReqS == nil {
		return "-"
	}
	out := fnum(*s.KneeGoodputReqS)
	if s.KneeSLOAttainment != nil {
		out += " (" + attainment(s.KneeSLOAttainment) + ")"
	}
	return out
}

// bandText is the knee with its band as the pages print it: the core PDF fonts have no "≥".
func bandText(s *schema.SweepResult) string { return strings.ReplaceAll(s.BandText(), "≥", ">=") }

// loadCell is a point in a table's C column: its concurrency, or a rate point's key (r2.5-cap64).
func loadCell(l schema.Load) string {
	if l.IsRate() {
		return l.Key()
	}
	return strconv.Itoa(l.Concurrency)
}
