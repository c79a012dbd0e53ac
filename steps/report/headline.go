package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/perfdag/perfdag/engine/plural"

	"github.com/johnfercher/maroto/v2/pkg/consts/align"
	"github.com/johnfercher/maroto/v2/pkg/consts/fontstyle"

	"github.com/perfdag/perfdag/schema"
)

// verdict is the cover's one-line answer to "is it good": the gate outcome, then what the
// coverage lacks.
func verdict(v *view) (string, bool) {
	failed, warned, passed := 0, 0, 0
	for _, g := range v.in.Gates {
		switch {
		case g.Passed:
			passed++
		case g.Severity == schema.SeverityFail:
			failed++
		default:
			warned++
		}
	}
	var s string
	ok := true
	switch {
	case len(v.in.Gates) == 0:
		s = "Verdict: NOT GATED (no quality gates were evaluated)"
	case failed > 0:
		s, ok = fmt.Sprintf("Verdict: FAIL (%s failed, %d warned, %d passed)", plural.N(failed, "gate check"), warned, passed), false
	case warned > 0:
		s = fmt.Sprintf("Verdict: PASS WITH WARNINGS (%d warned, %d passed)", warned, passed)
	default:
		s = fmt.Sprintf("Verdict: PASS (all %d gate checks passed)", passed)
		if passed == 1 {
			s = "Verdict: PASS (the 1 gate check passed)"
		}
	}
	if n := v.coverage.Failed + v.coverage.Partial; n > 0 {
		s += fmt.Sprintf("; %s incomplete", plural.N(n, "cell"))
		ok = false
	}
	return s + ".", ok
}

// headline is one row per cell, named by its id beside its variant (hardware, quant,
// parallelism, and whatever else differs: the model when nothing else does), variants in their
// order: its peak output throughput (and where), TTFT p50 at its lowest concurrency, and how
// many requests failed.
func headlinePart(d sink, v *view) {
	var rows [][]tcell
	var peaks []float64
	var used [][]int // per row: the calibrated concurrency its ± came from
	var ivs []bool   // per row: its TTFT carries a confidence interval
	for _, x := range v.variants {
		var mbts []int
		for i := range v.rows {
			if r := &v.rows[i]; keyOf(r) == x.key && !slices.Contains(mbts, r.MaxNumBatchedTokens) {
				mbts = append(mbts, r.MaxNumBatchedTokens)
			}
		}
		slices.Sort(mbts)
		for _, mbt := range mbts {
			label := x.label
			if len(mbts) > 1 {
				label += fmt.Sprintf(" mbt %d", mbt)
			}
			var cells []string
			for i := range v.rows {
				if r := &v.rows[i]; keyOf(r) == x.key && r.MaxNumBatchedTokens == mbt && !slices.Contains(cells, r.CellID) {
					cells = append(cells, r.CellID)
				}
			}
			for _, cell := range cells {
				row, peak, cal, iv := headlineRow(v, cell, label)
				rows, peaks, used, ivs = append(rows, row), append(peaks, peak), append(used, cal), append(ivs, iv)
			}
		}
	}
	if len(rows) == 0 {
		return
	}
	shown := topHeadline(peaks, maxHeadlineRows)
	d.heading("Headline numbers")
	kept := make([][]tcell, 0, len(shown))
	var cals []int
	anyIV := false
	for _, i := range shown {
		kept, anyIV = append(kept, rows[i]), anyIV || ivs[i]
		for _, c := range used[i] {
			if !slices.Contains(cals, c) {
				cals = append(cals, c)
			}
		}
	}
	slices.Sort(cals)
	peakHead := "Peak output tok/s/GPU"
	if len(searches(v.in)) > 0 {
		peakHead = "Output tok/s/GPU: peak, or at the SLO knee"
	}
	d.table([]tcol{{head: "Cell", w: 9}, {head: "Variant", w: 10}, {head: v.dev(peakHead), w: 7, align: align.Right},
		{head: "TTFT p50 (ms), lowest C", w: 9, align: align.Right}, {head: "Failed requests", w: 5, align: align.Right}}, nil, kept)
	if len(kept) < len(rows) {
		d.para(fmt.Sprintf("The %d of %d rows with the highest peak %s; the heatmap pages show every cell.",
			len(kept), len(rows), v.dev("output tok/s/GPU")), 7.5, fontstyle.Italic, nil)
	}
	if anyIV {
		d.para("A spaced ± (412 ± 3.2) is the half-width of the TTFT p50's 95 % confidence interval (sectioning over batches of requests; docs/statistics.md).", 7.5, fontstyle.Italic, nil)
	}
	note, warn := calibrationNote(v.in, cals)
	if note != "" {
		d.para(note, 7.5, fontstyle.Italic, nil)
	}
	if warn != "" {
		d.para(warn, 7.5, fontstyle.Italic, &colorWarn)
	}
	if e := v.in.CalibrationErr; e != "" {
		d.para("Client calibration not used: "+e, 7.5, fontstyle.Italic, &colorWarn)
	}
	d.space(2)
}

// maxHeadlineRows keeps the cover one page: a campaign of more variants shows its best ones.
const maxHeadlineRows = 8

// topHeadline returns the indexes of the n rows with the highest peaks (rows without a peak,
// NaN, last), in their original order.
func topHeadline(peaks []float64, n int) []int {
	idx := make([]int, len(peaks))
	for i := range idx {
		idx[i] = i
	}
	if len(idx) <= n {
		return idx
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		pa, pb := peaks[a], peaks[b]
		switch {
		case math.IsNaN(pa) && math.IsNaN(pb):
			return 0
		case math.IsNaN(pa):
			return 1
		case math.IsNaN(pb):
			return -1
		}
		return cmp.Compare(pb, pa)
	})
	idx = idx[:n]
	slices.Sort(idx)
	return idx
}

// headlineRow is the headline of one cell's rows, its variant's label beside its id.
// The second result is the peak (NaN when no row has one), which ranks the row on the cover;
// the third the calibrated concurrency whose client error bar its TTFT carries (none for a TTFT
// another tool measured: the calibration is perfdag's client); the fourth whether its TTFT
// is shown with its confidence interval.
func headlineRow(v *view, cell, label string) ([]tcell, float64, []int, bool) {
	var peak, low *schema.AtlasRow
	reqs, errs := 0, 0
	for i := range v.rows {
		r := &v.rows[i]
		if r.CellID != cell {
			continue
		}
		reqs, errs = reqs+r.RequestCount+r.ErrorCount, errs+r.ErrorCount
		if !r.PlotReady {
			continue
		}
		if r.OutputTokPerSPerGPU != nil && (peak == nil || *r.OutputTokPerSPerGPU > *peak.OutputTokPerSPerGPU) {
			peak = r
		}
		if r.TTFTP50Ms != nil && (low == nil || r.Concurrency < low.Concurrency) {
			low = r
		}
	}
	row := []tcell{plain(cell), plain(label), plain("-"), plain("-"), plain(fmt.Sprintf("%d of %d", errs, reqs))}
	best := math.NaN()
	if k, s := kneeRow(v, cell); k != nil { // a search ran: the answer is the knee, not the peak
		text := fmt.Sprintf("%s at knee %s", fnum(*k.OutputTokPerSPerGPU), atPoint(k))
		if lo, hi := s.KneeBand(); lo != hi || s.KneeRateLo != s.KneeRateHi { // undecided probes: the knee is known to a band
			text = fmt.Sprintf("%s at knee %s", fnum(*k.OutputTokPerSPerGPU), bandText(s))
		}
		row[2] = plain(text)
		best = *k.OutputTokPerSPerGPU
	} else if peak != nil {
		row[2] = plain(fmt.Sprintf("%s at %s", fnum(*peak.OutputTokPerSPerGPU), atPoint(peak)))
		best = *peak.OutputTokPerSPerGPU
	}
	var cal []int
	iv := false
	if low != nil {
		ttft := withInterval(low, "ttft_p50_ms", *low.TTFTP50Ms)
		_, iv = low.Intervals["ttft_p50_ms"]
		if p := clientError(v.in.Calibration, low.Concurrency); p != nil && !schema.IsImportedBasis(low.TokenBasis) {
			if iv {
				ttft += " (client " + errorBar(p) + ")"
			} else {
				ttft += " " + errorBar(p)
			}
			cal = append(cal, p.Concurrency)
		}
		row[3] = plain(fmt.Sprintf("%s at %s", ttft, atPoint(low)))
	}
	return row, best, cal, iv
}

// withInterval formats v with ± the half-width of the row's 95 % interval for key, when the
// row has one, so a reader sees at a glance what difference is noise.
func withInterval(r *schema.AtlasRow, key string, v float64) string {
	iv, ok := r.Intervals[key]
	if !ok {
		return fnum(v)
	}
	return fnum(v) + " ± " + fnum(iv.HalfWidth())
}

// requestErrors totals requests and failed requests over the serving rows.
func requestErrors(v *view) (reqs, errs, points int) {
	for _, r := range v.rows {
		reqs += r.RequestCount + r.ErrorCount // RequestCount counts the valid ones
		errs += r.ErrorCount
		if r.ErrorCount > 0 {
			points++
		}
	}
	return reqs, errs, points
}

// kneeRow is the knee point of the cell's search (the highest concurrency that met the SLO)
// and the search, nil when the cell did not search or found no knee.
func kneeRow(v *view, cell string) (*schema.AtlasRow, *schema.SweepResult) {
	for i, s := range v.in.Sweeps {
		knee := kneeLoad(s)
		if s.Mode != schema.SweepSearch || knee.IsZero() || s.Cell != cell {
			continue
		}
		if r := frontierRow(v, cell, knee); r != nil && r.OutputTokPerSPerGPU != nil {
			return r, &v.in.Sweeps[i]
		}
	}
	return nil, nil
}

// atPoint names a row's point after "at": C=16 for a concurrency, its key (r2.5-cap64) for a rate.
func atPoint(r *schema.AtlasRow) string {
	if l := r.PointLoad(); l.IsRate() {
		return l.Key()
	}
	return fmt.Sprintf("C=%d", r.Concurrency)
}
