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
func frontierRow(v *view, cell string, l schema.Load) *schema.AtlasRow {
	for i := range v.rows {
		if r := &v.rows[i]; r.CellID == cell && r.PointLoad() == l {
			return r
		}
	}
	return nil
}

// isRateSearch reports whether a search's probes are request rates (search: {over: rate}):
// its probes are drawn against a request-rate axis, never on one with concurrencies. Read
// from the probes' loads, so it holds whatever else the file says of what was searched.
func isRateSearch(s schema.SweepResult) bool {
	return slices.ContainsFunc(s.Probes, func(p schema.SweepProbe) bool { return p.PointLoad().IsRate() })
}

// loadX is a point's place on a load axis: its concurrency, or its request rate.
func loadX(l schema.Load) float64 {
	if l.IsRate() {
		return l.Rate
	}
	return float64(l.Concurrency)
}

// loadTip names a point in a mark's tooltip: "C=16", "2.5 req/s (cap 64)".
func loadTip(l schema.Load) string {
	if l.IsRate() {
		return l.Label()
	}
	return fmt.Sprintf("C=%d", l.Concurrency)
}

// loadAxisLabel is the x axis of points drawn against load: concurrency, or request rate.
func loadAxisLabel(rate bool) string {
	if rate {
		return "request rate (req/s)"
	}
	return "concurrency"
}

// kneeLoad is a search's knee as a point: its concurrency, or for a search over request rate
// the highest probe that met the SLO below the lowest decided to miss it (the knee a bisection
// on the rate reports). Zero when there is none or it is unknown.
func kneeLoad(s schema.SweepResult) schema.Load {
	if s.KneeUnknown != "" {
		return schema.Load{}
	}
	if s.Over == schema.SearchOverRate { // the search's own answer
		if s.KneeRate > 0 {
			return schema.RateAt(s.KneeRate, s.MaxInFlight)
		}
		return schema.Load{}
	}
	if !isRateSearch(s) {
		if s.Knee > 0 {
			return schema.Conc(s.Knee)
		}
		return schema.Load{}
	}
	miss := firstMiss(s)
	var knee schema.Load
	for _, p := range s.Probes {
		l := p.PointLoad()
		met := p.Verdict == schema.VerdictMeets || (p.Verdict == "" && p.Met)
		if met && !p.NoEvidence && (miss.IsZero() || l.Compare(miss) < 0) && (knee.IsZero() || l.Compare(knee) > 0) {
			knee = l
		}
	}
	return knee
}

// upperBound is the highest point a search could probe, as its reasons name it: c<to>, or
// for a search over request rate its highest probe.
func upperBound(s schema.SweepResult) schema.Load {
	if !isRateSearch(s) {
		return schema.Conc(s.To)
	}
	var top schema.Load
	for _, p := range s.Probes {
		if l := p.PointLoad(); top.IsZero() || l.Compare(top) > 0 {
			top = l
		}
	}
	return top
}

// undecidedLoads lists the probes that measured to their max without a verdict, in order.
func undecidedLoads(s schema.SweepResult) []schema.Load {
	var out []schema.Load
	for _, p := range s.Probes {
		if p.Verdict == schema.VerdictUndecided {
			out = append(out, p.PointLoad())
		}
	}
	slices.SortFunc(out, schema.Load.Compare)
	return out
}

// frontierSeries draws the searched cells' probes of one kind (over concurrency, or over
// request rate) as output tok/s against load: filled where the SLO held, hollow where it did
// not, the knee labelled, and each probe's 95 % interval of output throughput (when the point
// has one) as a vertical bar.
func frontierSeries(v *view, rate bool) []charts.Series {
	var out []charts.Series
	for i, s := range searches(v.in) {
		if isRateSearch(s) != rate {
			continue
		}
		knee := kneeLoad(s)
		met := charts.Series{Name: s.Cell + ": meets SLO", Color: charts.Color(i), Marker: charts.Circle}
		miss := charts.Series{Name: s.Cell + ": misses SLO", Color: charts.Color(i), Marker: charts.Circle, Hollow: true}
		undecided := charts.Series{Name: s.Cell + ": undecided", Color: charts.Color(i), Marker: charts.Triangle, Hollow: true}
		for _, p := range s.Probes {
			if p.Throughput == nil {
				continue
			}
			l := p.PointLoad()
			pt := charts.Point{X: loadX(l), Y: *p.Throughput, Tip: fmt.Sprintf("cell %s, %s", s.Cell, loadTip(l))}
			if l == knee && !knee.IsZero() {
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
			if r := frontierRow(v, s.Cell, l); r != nil {
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

// kneeSpans shade each concurrency search's knee band (when probes were undecided, so it is
// wider than one concurrency) in the search's colour; a band whose lower end is "none" starts
// at from.
func kneeSpans(v *view, cells map[string]int) []charts.Span {
	var out []charts.Span
	for _, s := range searches(v.in) {
		i, ok := cells[s.Cell]
		lo, hi := s.KneeBand()
		if !ok || s.KneeUnknown != "" || lo == hi || hi == 0 || isRateSearch(s) {
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

// frontierKinds says which probe charts the frontier page draws, in order: one for searches
// over concurrency, one for searches over request rate (never both on one axis).
func frontierKinds(v *view) []bool {
	var conc, rate bool
	for _, s := range searches(v.in) {
		if isRateSearch(s) {
			rate = true
		} else {
			conc = true
		}
	}
	var out []bool
	if conc {
		out = append(out, false)
	}
	if rate {
		out = append(out, true)
	}
	return out
}

// frontierChart is the probe chart of the searches of one kind.
func frontierChart(v *view, rate bool) charts.Chart {
	title := "Probes of each SLO search: output throughput by concurrency"
	if rate {
		title = "Probes of each SLO search over request rate: output throughput by request rate"
	}
	ch := charts.Chart{
		Title:  title,
		X:      charts.Axis{Label: loadAxisLabel(rate)},
		Y:      charts.Axis{Label: "output tok/s (bars: 95 % interval)"},
		Series: frontierSeries(v, rate), Legend: true,
		Width: vg.Length(contentW) * vg.Millimeter, Height: vg.Length(frontierChartH) * vg.Millimeter, FontSize: 7,
		Empty: "no probe has a throughput",
	}
	if !rate {
		ch.Spans = kneeSpans(v, searchIndex(v))
	}
	return ch
}

func frontierCharts(v *view, art *artwork) []job {
	if len(searches(v.in)) == 0 {
		return nil
	}
	kinds := frontierKinds(v)
	art.frontier = make([]*figure, len(kinds))
	var jobs []job
	for i, rate := range kinds {
		jobs = append(jobs, func() error {
			f, err := art.chartFig(frontierChart(v, rate))
			if err != nil {
				return fmt.Errorf("frontier chart: %w", err)
			}
			art.mu.Lock()
			art.frontier[i] = f
			art.mu.Unlock()
			return nil
		})
	}
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
		if slices.ContainsFunc(ss, isRateSearch) {
			note += " A search over request rate (search: {over: rate}) bisects on the rate instead: its knee is the highest request rate whose point meets the SLO, " +
				"and its probes are drawn against request rate (req/s) on a chart of their own, never on the concurrency axis."
		}
		d.para(note, 8, fontstyle.Normal, &colorMuted)
		d.space(1)
		for _, f := range art.frontier {
			if f != nil {
				d.images(frontierChartH, f)
				d.space(2)
			}
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
				probes = append(probes, p.PointLoad().Key()+mark)
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

// bandText is the knee with its band as the pages print it: the core PDF fonts have no "≥". A
// search over request rate whose file names no knee its schema can print (a rate knee is no
// concurrency) is named by its knee probe's key (r2.5).
func bandText(s *schema.SweepResult) string {
	t := s.BandText()
	if k := kneeLoad(*s); t == "none" && k.IsRate() {
		t = k.Key()
	}
	return strings.ReplaceAll(t, "≥", ">=")
}

// loadCell is a point in a table's C column: its concurrency, or a rate point's key (r2.5-cap64).
func loadCell(l schema.Load) string {
	if l.IsRate() {
		return l.Key()
	}
	return strconv.Itoa(l.Concurrency)
}
