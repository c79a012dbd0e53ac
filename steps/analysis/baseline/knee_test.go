package baseline

import (
	"strconv"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
)

// searched is a searched cell's snapshot: identical points at the probes, the given knee.
func searched(slo string, knee int, probes ...int) *schema.PerfBench {
	m := map[string]schema.PerfBenchPoint{}
	for _, c := range probes {
		m[itoa(c)] = point(100*float64(c), 50, 0)
	}
	d := doc(m)
	d.Search = &schema.PerfBenchSearch{SLO: slo, From: 1, To: 64, Knee: knee, Probes: probes}
	return d
}

func itoa(c int) string { return strconv.Itoa(c) }

func kneeOf(d *schema.BaselineDiff) *schema.DiffRow {
	for i := range d.Rows {
		if d.Rows[i].Metric == KneeMetric {
			return &d.Rows[i]
		}
	}
	return nil
}

func TestSearchedCellsDiff(t *testing.T) {
	const slo = "itl_avg_ms <= 50"
	cases := []struct {
		name      string
		base, cur *schema.PerfBench
		verdict   string // of the whole diff
		knee      string // of the knee row, "" when none
		note      string // a note the diff must carry
	}{
		{"same knee, same probes", searched(slo, 37, 1, 64, 32, 48, 40, 36, 38, 37), searched(slo, 37, 1, 64, 32, 48, 40, 36, 38, 37), Green, Green, ""},
		// the knee moved one step: other probes, none of them a missing point, GREEN
		{"one step", searched(slo, 37, 1, 64, 32, 48, 40, 36, 38, 37), searched(slo, 36, 1, 64, 32, 48, 40, 36, 38, 37), Green, Green, ""},
		{"probes only the baseline made", searched(slo, 37, 1, 64, 32, 48, 40, 36, 38, 37), searched(slo, 36, 1, 64, 32, 48, 40, 36, 38), Green, Green,
			"concurrency 37 was probed by the baseline's search only"},
		// 37 → 33: −10.8 % and four steps: RED
		{"knee fell", searched(slo, 37, 1, 64, 32, 48, 40, 36, 38, 37), searched(slo, 33, 1, 64, 32, 48, 40, 36, 34, 33), Red, Red, ""},
		{"no knee now", searched(slo, 37, 1, 64, 32, 48, 40, 36, 38, 37), searched(slo, 0, 1), Red, Red, ""},
		{"SLO changed", searched(slo, 37, 1, 64, 32), searched("itl_avg_ms <= 40", 28, 1, 64, 32), Green, "", "the SLO changed"},
		{"searched vs swept", searched(slo, 37, 1, 64, 32), doc(map[string]schema.PerfBenchPoint{"1": point(100, 50, 0), "64": point(6400, 50, 0), "32": point(3200, 50, 0)}), Green, "", "knees not compared"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Diff(tc.base, tc.cur, nil)
			if err != nil {
				t.Fatal(err)
			}
			if d.Verdict != tc.verdict {
				t.Errorf("verdict %s, want %s (rows %+v)", d.Verdict, tc.verdict, d.Rows)
			}
			row := kneeOf(d)
			switch {
			case tc.knee == "" && row != nil:
				t.Errorf("a knee row %+v, want none", row)
			case tc.knee != "" && (row == nil || row.Verdict != tc.knee):
				t.Errorf("knee row %+v, want %s", row, tc.knee)
			}
			if tc.note != "" && !strings.Contains(strings.Join(d.Notes, "\n"), tc.note) {
				t.Errorf("notes %q lack %q", d.Notes, tc.note)
			}
		})
	}
}
