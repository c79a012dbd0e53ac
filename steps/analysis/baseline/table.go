package baseline

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/perfdag/perfdag/engine/plural"
	"github.com/perfdag/perfdag/schema"
)

// HeadlineConcurrency is the canonical operating point of routine comparisons (seed 002).
const HeadlineConcurrency = 16

// Headline returns the metrics at concurrency want, or at the nearest concurrency present
// (the lower one on a tie); exact says whether want itself was present. ok is false when the
// document has no metrics.
func Headline(doc *schema.PerfBench, want int) (conc int, p schema.PerfBenchPoint, exact, ok bool) {
	best := -1
	for k := range doc.Metrics {
		c, err := strconv.Atoi(k)
		if err != nil {
			continue
		}
		if best < 0 || dist(c, want) < dist(best, want) || (dist(c, want) == dist(best, want) && c < best) {
			best = c
		}
	}
	if best < 0 {
		return 0, p, false, false
	}
	return best, doc.Metrics[strconv.Itoa(best)], best == want, true
}

func dist(a, b int) int {
	if a > b {
		return a - b
	}
	return b - a
}

// WriteHeadline prints the headline metrics, saying which concurrency they are from.
func WriteHeadline(w io.Writer, doc *schema.PerfBench) {
	c, p, exact, ok := Headline(doc, HeadlineConcurrency)
	if !ok {
		fmt.Fprintln(w, "headline: no measured concurrency")
		return
	}
	where := fmt.Sprintf("concurrency %d", c)
	if !exact {
		where += fmt.Sprintf(" (nearest to %d present)", HeadlineConcurrency)
	}
	fmt.Fprintf(w, "headline at %s:\n", where)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	for _, m := range []struct {
		name string
		v    *float64
	}{
		{"throughput_toks_per_s", p.ThroughputToksPerS},
		{"ttft_p50_ms", p.TTFTP50Ms},
		{"ttft_p95_ms", p.TTFTP95Ms},
		{"ttft_p99_ms", p.TTFTP99Ms},
		{"itl_p50_ms", p.ITLP50Ms},
		{"tps_per_user", p.TPSPerUser},
		{"request_latency_p50_ms", p.RequestLatencyP50Ms},
	} {
		fmt.Fprintf(tw, "  %s\t%s\n", m.name, num(m.v))
	}
	fmt.Fprintf(tw, "  errors\t%d\n", p.Errors)
	tw.Flush()
}

// WriteDiff prints a diff as a table: one row per concurrency and metric, then the verdict.
func WriteDiff(w io.Writer, d *schema.BaselineDiff) {
	sha := d.BaselineSHA256
	if len(sha) > 12 {
		sha = sha[:12]
	}
	fmt.Fprintf(w, "baseline %s (%s, sha256 %s…)\ncurrent  %s (cell %s)\n\n", d.BaselineName, d.Baseline, sha, d.Current, d.CurrentCell)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "POINT\tMETRIC\tBASELINE\tCURRENT\tDELTA\tDELTA %\tTOLERANCE\tVERDICT\tCHANGE 95% CI")
	for _, r := range d.Rows {
		c := Cells(r)
		verdict := c.Verdict
		if r.Note != "" {
			verdict += " (" + r.Note + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.Concurrency, c.Metric, c.Baseline, c.Current, c.Delta, c.DeltaPct, c.Tolerance, verdict, c.ChangeCI)
	}
	tw.Flush()
	for _, n := range d.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	if d.WithinNoise > 0 {
		fmt.Fprintf(w, "note: %s beyond the tolerance but within noise (NOTE, not RED): the change's 95%% interval reaches back inside the tolerance\n",
			plural.Of(d.WithinNoise, "row is", "rows are"))
	}
	fmt.Fprintf(w, "\nverdict: %s (%d red, %d green, %d null)\n", d.Verdict, d.Red, d.Green, d.Null)
}

// RowCells is one diff row as the table prints it.
type RowCells struct {
	Concurrency, Metric, Baseline, Current, Delta, DeltaPct, Tolerance, Verdict string
	ChangeCI                                                                    string // the change's 95 % interval, "-" without one
}

// Cells formats a diff row as WriteDiff prints it, for every view of the table (the CLI,
// perfdag serve's comparison page) to show the same figures.
func Cells(r schema.DiffRow) RowCells {
	c := RowCells{Concurrency: "all", Metric: r.Metric, Baseline: num(r.Baseline), Current: num(r.Current),
		Delta: "-", DeltaPct: "-", Tolerance: tolerance(r), Verdict: r.Verdict, ChangeCI: changeCI(r)}
	switch {
	case r.Load != "":
		c.Concurrency = r.Load
	case r.Concurrency > 0:
		c.Concurrency = strconv.Itoa(r.Concurrency)
	}
	if r.DeltaPct != nil {
		c.DeltaPct = fmt.Sprintf("%+.2f%%", *r.DeltaPct)
	}
	if r.Delta != nil {
		c.Delta = signed(*r.Delta)
		if r.Unit == UnitPoints {
			c.Delta += " pts"
		}
	}
	return c
}

// changeCI prints the row's change interval in its tolerance's unit, "-" without one.
func changeCI(r schema.DiffRow) string {
	switch {
	case r.ChangePct != nil:
		return span(r.ChangePct.Lo, r.ChangePct.Hi, UnitPercent)
	case r.Change != nil:
		return span(r.Change.Lo, r.Change.Hi, r.Unit)
	}
	return "-"
}

func tolerance(r schema.DiffRow) string {
	arrow := "↓"
	if r.Direction == HigherIsWorse {
		arrow = "↑"
	}
	v := strconv.FormatFloat(r.Tolerance, 'f', -1, 64)
	switch r.Unit {
	case UnitPercent:
		return arrow + " " + v + "%"
	case UnitPoints:
		return arrow + " " + v + " pts"
	}
	return arrow + " " + v
}

func num(p *float64) string {
	if p == nil {
		return "null"
	}
	return format(*p)
}

func signed(v float64) string {
	if v == 0 {
		return "0"
	}
	s := format(v)
	if v >= 0 && !strings.HasPrefix(s, "+") {
		s = "+" + s
	}
	return s
}

// format prints up to four significant decimals without trailing zeros.
func format(v float64) string {
	switch {
	case math.IsInf(v, 0) || math.IsNaN(v):
		return strconv.FormatFloat(v, 'f', -1, 64)
	case math.Abs(v) >= 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(math.Round(v*10000)/10000, 'f', -1, 64)
}
