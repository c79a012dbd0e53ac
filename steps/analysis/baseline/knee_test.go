package baseline

import (
	"strconv"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
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

// banded is a searched cell's snapshot whose knee is known to the band [lo, hi].
func banded(slo string, knee, lo, hi int, probes ...int) *schema.PerfBench {
	d := searched(slo, knee, probes...)
	d.Search.KneeLo, d.Search.KneeHi = lo, hi
	return d
}

// With undecided probes the knees are bands: RED only when the current band lies below the
// baseline's by more than the tolerance (10 %) and one step; a fall of the estimates inside
// overlapping bands is NOTE, not RED.
func TestKneeBandsDiff(t *testing.T) {
	const slo = "ttft_p50_ms <= 250"
	probes := []int{1, 64, 32, 16, 24, 28, 30, 31}
	cases := []struct {
		name      string
		base, cur *schema.PerfBench
		knee      string // the knee row's verdict
		change    [2]float64
		note      string
	}{
		// c31 → c27 is −12.9 %, RED as exact knees; the bands c29–c33 and c26–c30 overlap
		{"overlapping bands", banded(slo, 31, 29, 33, probes...), banded(slo, 27, 26, 30, probes...), WithinNoise, [2]float64{-7, 1},
			"knee fell from c31 (c29–c33) to c27 (c26–c30), but the bands overlap"},
		// the bands do not overlap, but the gap c30 → c29 is one step and 3.3 %
		{"adjacent bands", banded(slo, 31, 30, 32, probes...), banded(slo, 27, 26, 29, probes...), WithinNoise, [2]float64{-6, -1}, "bands overlap or lie within the tolerance"},
		// disjoint beyond the tolerance: c20–c24 lies 6 below c30 (20 %)
		{"disjoint bands", banded(slo, 31, 30, 32, probes...), banded(slo, 22, 20, 24, probes...), Red, [2]float64{-12, -6}, "knee fell from c31 (c30–c32) to c22 (c20–c24)"},
		// one side exact, the other a band: RED needs the band's top below by the tolerance
		{"exact baseline, band below it", searched(slo, 31, probes...), banded(slo, 26, 20, 27, probes...), Red, [2]float64{-11, -4}, "knee fell from c31 to c26 (c20–c27)"},
		// c28 is 3 below c31: 9.7 %, within the tolerance
		{"exact baseline, band within the tolerance", searched(slo, 31, probes...), banded(slo, 26, 20, 28, probes...), WithinNoise, [2]float64{-11, -3}, "lie within the tolerance"},
		{"exact baseline, band reaching it", searched(slo, 31, probes...), banded(slo, 26, 20, 30, probes...), WithinNoise, [2]float64{-11, -1}, "bands overlap"},
		// the current search cannot tell c1 from none: its band's lower end is none, its top c3
		{"current maybe none", banded(slo, 31, 30, 32, probes...), banded(slo, 1, 0, 3, 1, 64, 32, 16, 8, 4, 2), Red, [2]float64{-32, -27}, "to c1 (none–c3)"},
		// decided none now: RED as before
		{"none now", banded(slo, 31, 30, 32, probes...), searched(slo, 0, 1), Red, [2]float64{-32, -30}, "no concurrency from 1 meets the SLO now"},
		// a knee that rose is never RED
		{"rose", banded(slo, 20, 18, 22, probes...), banded(slo, 31, 30, 32, probes...), Green, [2]float64{8, 14}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Diff(tc.base, tc.cur, nil)
			if err != nil {
				t.Fatal(err)
			}
			row := kneeOf(d)
			if row == nil || row.Verdict != tc.knee {
				t.Fatalf("knee row %+v, want %s", row, tc.knee)
			}
			if row.Change == nil || row.Change.Lo != tc.change[0] || row.Change.Hi != tc.change[1] {
				t.Errorf("change %+v, want [%v, %v]", row.Change, tc.change[0], tc.change[1])
			}
			if !strings.Contains(row.Note, tc.note) {
				t.Errorf("note %q lacks %q", row.Note, tc.note)
			}
			if (d.Verdict == Red) != (tc.knee == Red) {
				t.Errorf("diff verdict %s with a %s knee row", d.Verdict, tc.knee)
			}
		})
	}
}

// A snapshot carries its search's band from sweep_probes.json; an exact knee stays as before
// (no knee_lo, knee_hi), so a snapshot of an all-decided search reads as it always did.
func TestSnapshotSearchBand(t *testing.T) {
	for _, tc := range []struct {
		r      schema.SweepResult
		lo, hi int
		stored bool
	}{
		{schema.SweepResult{SLO: "s", From: 1, To: 64, Knee: 31, KneeLo: 30, KneeHi: 32}, 30, 32, true},
		{schema.SweepResult{SLO: "s", From: 1, To: 64, Knee: 1, KneeLo: 0, KneeHi: 3}, 0, 3, true},
		{schema.SweepResult{SLO: "s", From: 1, To: 64, Knee: 31, KneeLo: 31, KneeHi: 31}, 31, 31, false},
		{schema.SweepResult{SLO: "s", From: 1, To: 64, Knee: 31}, 31, 31, false}, // written before bands
	} {
		dir := t.TempDir()
		rel, err := campaigndir.WriteJSON(dir, campaigndir.Sweep("k"), tc.r)
		if err != nil {
			t.Fatal(err)
		}
		digest, err := campaigndir.DigestFile(dir, rel)
		if err != nil {
			t.Fatal(err)
		}
		d := &campaignData{dir: dir, files: campaigndir.Reader{Dir: dir, Digest: campaigndir.Digests(map[string]string{rel: digest})}}
		s, err := d.search("k")
		if err != nil {
			t.Fatal(err)
		}
		if lo, hi := s.Band(); lo != tc.lo || hi != tc.hi || (s.KneeHi != 0) != tc.stored {
			t.Errorf("%+v: band [%d, %d] stored %v, want [%d, %d] stored %v", tc.r, lo, hi, s.KneeHi != 0, tc.lo, tc.hi, tc.stored)
		}
	}
}

// rateSearched is a cell searched over request rate: identical points at the probes (keys of
// uncapped rates), the given knee in requests/s with its band.
func rateSearched(slo string, knee, lo, hi float64, probes ...float64) *schema.PerfBench {
	m := map[string]schema.PerfBenchPoint{}
	var keys []string
	for _, r := range probes {
		k := schema.RateAt(r, 0).Key()
		m[k] = point(100*r, 50, 0)
		keys = append(keys, k)
	}
	d := doc(m)
	d.Search = &schema.PerfBenchSearch{SLO: slo, Over: schema.SearchOverRate, FromRate: 1, ToRate: 64, ResolutionPct: 2,
		KneeRate: knee, KneeRateLo: lo, KneeRateHi: hi, ProbeLoads: keys, Probes: []int{}}
	return d
}

// TestRateKneeDiff: two searches over request rate compare their knees in requests/s — RED when
// the current band lies below the baseline's by more than the tolerance (10 %) and a grid step,
// NOTE when the bands overlap, GREEN within a step — and a rate probed by one search only is not
// a point missing from the other (before, a rate search's knee was not in the snapshot and every
// moved probe was RED "not measured in the current run").
func TestRateKneeDiff(t *testing.T) {
	const slo = "ttft_p50_ms <= 250"
	cases := []struct {
		name             string
		base, cur        *schema.PerfBench
		verdict, kneeRow string
	}{
		{"same knee, other probes", rateSearched(slo, 29.9, 0, 0, 1, 64, 8, 29.9, 31.1), rateSearched(slo, 29.9, 0, 0, 1, 64, 8, 29.9, 30.5), Green, Green},
		{"within one step", rateSearched(slo, 29.9, 0, 0, 1, 64, 29.9), rateSearched(slo, 29.4, 0, 0, 1, 64, 29.4), Green, Green},
		{"knee fell 20 %", rateSearched(slo, 30, 0, 0, 1, 64, 30), rateSearched(slo, 24, 0, 0, 1, 64, 24), Red, Red},
		{"bands overlap", rateSearched(slo, 30, 26, 31, 1, 64, 30), rateSearched(slo, 24, 22, 27, 1, 64, 24), Green, WithinNoise},
		{"no rate meets it now", rateSearched(slo, 30, 0, 0, 1, 64, 30), rateSearched(slo, 0, 0, 0, 1), Red, Red},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Diff(tc.base, tc.cur, nil)
			if err != nil {
				t.Fatal(err)
			}
			var row *schema.DiffRow
			for i := range d.Rows {
				if d.Rows[i].Metric == KneeRateMetric {
					row = &d.Rows[i]
				}
			}
			if d.Verdict != tc.verdict || row == nil || row.Verdict != tc.kneeRow {
				t.Errorf("verdict %s, knee row %+v; want %s, %s (rows %+v, notes %q)", d.Verdict, row, tc.verdict, tc.kneeRow, d.Rows, d.Notes)
			}
		})
	}
}
