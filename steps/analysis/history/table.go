package history

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/perfdag/perfdag/engine/plural"
	"github.com/perfdag/perfdag/schema"
)

// labels are the table's column heads of Metrics.
var labels = map[string]string{"output_tok_s": "TOK/S", "ttft_p50_ms": "TTFT P50 MS", "ttft_p95_ms": "TTFT P95 MS",
	"itl_p50_ms": "ITL P50 MS", "goodput_req_s": "GOODPUT REQ/S", "slo_attainment": "ATTAINMENT"}

// WriteTable prints each campaign's history: its runs (when, trigger, verdict, baseline,
// versions, directory), the knees of its searched cells with their bands, and every point's
// headline metrics with their 95 % intervals ([lo, hi]), run by run; then any marks.
func WriteTable(w io.Writer, hs []*History) error {
	for i, h := range hs {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if err := writeOne(w, h); err != nil {
			return err
		}
	}
	return nil
}

func writeOne(w io.Writer, h *History) error {
	fmt.Fprintf(w, "%s: %s\n", h.Campaign, plural.N(len(h.Runs), "run"))
	if len(h.Runs) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tSTARTED\tTRIGGER\tVERDICT\tRED\tBASELINE\tVERSIONS\tDIR")
	for _, r := range h.Runs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", r.ID, dash(r.Started), r.Trigger, r.Verdict, r.RedRows,
			dash(r.Baseline), dash(versions(r.Versions, r.HistoryRow)), dash(r.Dir))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range h.Runs {
		if r.Note != "" {
			fmt.Fprintf(w, "  %s: %s\n", r.ID, r.Note)
		}
		if r.Error != "" {
			fmt.Fprintf(w, "  %s: %s\n", r.ID, r.Error)
		}
	}
	knees := false
	for _, r := range h.Runs {
		knees = knees || len(r.Knees) > 0
	}
	if knees {
		fmt.Fprintln(w, "\nknees (the band each lies in; one value when every probe was decided)")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "RUN\tCELL\tKNEE\tSLO")
		for _, r := range h.Runs {
			for _, k := range r.Knees {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.ID, k.Cell, kneeOf(k), k.SLO)
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	fmt.Fprintln(w, "\npoints (value [95 % interval] when the point carries one)")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := []string{"RUN", "CELL", "LOAD"}
	for _, m := range Metrics {
		head = append(head, labels[m])
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, r := range h.Runs {
		for _, p := range r.Points {
			cells := []string{r.ID, p.Cell, p.Load}
			for _, m := range Metrics {
				v, ok := p.Metrics[m]
				if !ok {
					cells = append(cells, "-")
					continue
				}
				cells = append(cells, value(v))
			}
			fmt.Fprintln(tw, strings.Join(cells, "\t"))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// a run's marks repeat its series' (ChangePoints puts each on both): print each once, in
	// run order
	var marks []Mark
	seen := map[string]bool{}
	for _, r := range h.Runs {
		for _, m := range r.Marks {
			k := m.Kind + "\x00" + m.Run + "\x00" + m.Cell + "\x00" + m.Load + "\x00" + m.Metric
			if !seen[k] {
				seen[k] = true
				marks = append(marks, m)
			}
		}
	}
	for _, s := range h.Series {
		for _, m := range s.Marks {
			if k := m.Kind + "\x00" + m.Run + "\x00" + m.Cell + "\x00" + m.Load + "\x00" + m.Metric; !seen[k] {
				seen[k] = true
				marks = append(marks, m)
			}
		}
	}
	if len(marks) > 0 {
		fmt.Fprintln(w, "\nmarks (change points: docs/schedule.md#change-points)")
		for _, m := range marks {
			where := strings.Join(strings.Fields(m.Cell+" "+m.Load+" "+m.Metric), " ")
			if m.Worse {
				where += " (regression)"
			}
			fmt.Fprintf(w, "  %s %s %s: %s\n", m.Run, m.Kind, where, m.Detail)
		}
	}
	return nil
}

// kneeOf writes a knee as its search found it: a concurrency (c37 (c36–c38)) or a request
// rate (r29.9 (r28.4–r31.5)).
func kneeOf(k schema.Knee) string {
	if k.Over != schema.SearchOverRate || k.Unknown != "" {
		return knee(k.Knee, k.KneeLo, k.KneeHi, k.AtTop, k.Unknown)
	}
	s := "r" + schema.FormatRate(k.KneeRate)
	if k.KneeRate == 0 {
		s = "none"
	}
	if k.KneeRateLo != k.KneeRateHi {
		s += fmt.Sprintf(" (r%s–r%s)", schema.FormatRate(k.KneeRateLo), schema.FormatRate(k.KneeRateHi))
	}
	if k.AtTop {
		s += " at the top of the range"
	}
	return s
}

func knee(k, lo, hi int, atTop bool, unknown string) string {
	if unknown != "" {
		return "unknown (" + unknown + ")"
	}
	s := "c" + strconv.Itoa(k)
	if k == 0 {
		s = "none"
	}
	if lo != hi {
		s += fmt.Sprintf(" (c%d–c%d)", lo, hi)
	}
	if atTop {
		s += " at the top of the range"
	}
	return s
}

func value(v Value) string {
	s := fig(v.Value)
	if v.Lo != nil && v.Hi != nil {
		s += " [" + fig(*v.Lo) + ", " + fig(*v.Hi) + "]"
	}
	return s
}

// fig prints four significant digits at most (the JSON keeps the exact value).
func fig(x float64) string { return strconv.FormatFloat(x, 'g', 4, 64) }

func versions(v Versions, row schema.HistoryRow) string {
	var parts []string
	if e := strings.TrimSpace(v.Engine + " " + v.EngineVersion); e != "" {
		parts = append(parts, e)
	}
	if v.Commit != "" {
		parts = append(parts, "commit "+v.Commit)
	}
	if v.Delivery != "" {
		parts = append(parts, v.Delivery)
	}
	parts = append(parts, v.Models...)
	for _, e := range row.Endpoints {
		if e.Server != "" {
			parts = append(parts, e.Name+" server "+e.Server)
		}
	}
	if row.PerfdagVersion != "" {
		parts = append(parts, "perfdag "+row.PerfdagVersion)
	}
	if row.Host != "" {
		parts = append(parts, "on "+row.Host)
	}
	return strings.Join(parts, " · ")
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
