package baseline

import (
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
)

func iv(lo, hi float64) *schema.Interval {
	return &schema.Interval{Lo: lo, Hi: hi, Method: "sectioning", N: 8}
}

// TestJudgeNoise walks the interval rule through hand-computed rows of one interval pair
// (scale 1): the change's interval is current − baseline ± √(hb² + hc²).
func TestJudgeNoise(t *testing.T) {
	cases := []struct {
		name    string
		metric  string
		b, c    float64
		bi, ci  *schema.Interval
		verdict string
		note    string
		lo, hi  float64 // change interval in the row's tolerance unit; NaN: none
		aware   bool    // both points carry intervals of other metrics
	}{
		// 100 ±3 → 110 ±4: +10 ± 5 = [+5, +15] %: beyond 5 % by tolerance, but its low end is
		// exactly at the tolerance (equal is within) → NOTE.
		{"ttft at the edge", "ttft_p50_ms", 100, 110, iv(97, 103), iv(106, 114), WithinNoise, "within noise: ±5.00%", 5, 15, false},
		// 100 ±3 → 110.5 ±4: [+5.5, +15.5] % wholly beyond 5 % → RED.
		{"ttft beyond", "ttft_p50_ms", 100, 110.5, iv(97, 103), iv(106.5, 114.5), Red, "beyond noise: change [+5.50, +15.50]%", 5.5, 15.5, false},
		// 100 → 80 is faster: GREEN, the interval is still recorded: −20 ± 5 → [−25, −15] %.
		{"ttft better", "ttft_p50_ms", 100, 80, iv(97, 103), iv(76, 84), Green, "", -25, -15, false},
		// 100 → 104 is within 5 %: GREEN, interval [−1, +9] %.
		{"ttft within", "ttft_p50_ms", 100, 104, iv(97, 103), iv(100, 108), Green, "", -1, 9, false},
		// throughput, lower is worse: 1000 ±10 → 900 ±10: −100 ± 14.142 → [−11.41, −8.59] %,
		// wholly below −3 % → RED.
		{"throughput beyond", "throughput_toks_per_s", 1000, 900, iv(990, 1010), iv(890, 910), Red, "beyond noise: change [-11.41, -8.59]%", -11.4142, -8.5858, false},
		// 1000 ±40 → 950 ±30: −50 ± 50 → [−10, 0] %: the interval reaches 0 → NOTE.
		{"throughput noisy", "throughput_toks_per_s", 1000, 950, iv(960, 1040), iv(920, 980), WithinNoise, "within noise: ±5.00%", -10, 0, false},
		// A legacy baseline: tolerance alone, and the row says so.
		{"no baseline interval", "itl_p50_ms", 20, 22, nil, iv(21, 23), Red, NoteNoInterval, math.NaN(), math.NaN(), false},
		{"no current interval, green", "itl_p50_ms", 20, 20.2, iv(19, 21), nil, Green, "", math.NaN(), math.NaN(), false},
		// Both points carry intervals, but not of this tail (too few requests for a p95): a
		// breach cannot be told from noise → NOTE, not RED.
		{"too few for the tail", "ttft_p95_ms", 100, 130, nil, nil, WithinNoise, NoteTooFew, math.NaN(), math.NaN(), true},
		{"too few, within tolerance", "ttft_p95_ms", 100, 102, nil, nil, Green, "", math.NaN(), math.NaN(), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, cur := c.b, c.c
			row := compare(c.metric, &b, &cur, nil)
			judgeNoise(&row, b, cur, c.bi, c.ci, 1, 1, c.aware)
			if row.Verdict != c.verdict || row.Note != c.note {
				t.Errorf("verdict %s note %q, want %s %q", row.Verdict, row.Note, c.verdict, c.note)
			}
			if math.IsNaN(c.lo) {
				if row.Change != nil || row.ChangePct != nil {
					t.Errorf("change interval %+v without both intervals", row.Change)
				}
				return
			}
			if row.ChangePct == nil || math.Abs(row.ChangePct.Lo-c.lo) > 1e-4 || math.Abs(row.ChangePct.Hi-c.hi) > 1e-4 {
				t.Errorf("change interval %+v, want [%v, %v] %%", row.ChangePct, c.lo, c.hi)
			}
		})
	}
}

// TestFamilyScale pins the Bonferroni widening: z(1 − 0.025/m) ÷ z(0.975).
func TestFamilyScale(t *testing.T) {
	for _, c := range []struct {
		m    int
		want float64
	}{{0, 1}, {1, 1}, {2, 2.241403 / 1.959964}, {10, 2.807034 / 1.959964}} {
		if got := familyScale(c.m); math.Abs(got-c.want) > 1e-5 {
			t.Errorf("familyScale(%d) = %v, want %v", c.m, got, c.want)
		}
	}
}

// TestDiffIntervals: a diff with intervals on two rows widens both by the two-row scale, says
// so in the method, counts NOTE rows apart, and names the rows left on tolerance alone.
func TestDiffIntervals(t *testing.T) {
	doc := func(ttft, itl float64, ivs schema.Intervals) *schema.PerfBench {
		return &schema.PerfBench{Schema: schema.SchemaPerfBench, Metrics: map[string]schema.PerfBenchPoint{
			"4": {TTFTP50Ms: f(ttft), ITLP50Ms: f(itl), ThroughputToksPerS: f(1000), Intervals: ivs}}}
	}
	base := doc(100, 10, schema.Intervals{"ttft_p50_ms": *iv(97, 103), "itl_p50_ms": *iv(9.9, 10.1)})
	cur := doc(110, 12, schema.Intervals{"ttft_p50_ms": *iv(106, 114), "itl_p50_ms": *iv(11.9, 12.1)})
	d, err := Diff(base, cur, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ttft, itl schema.DiffRow
	for _, r := range d.Rows {
		switch r.Metric {
		case "ttft_p50_ms":
			ttft = r
		case "itl_p50_ms":
			itl = r
		}
	}
	// ttft: +10 ± 5 × 1.1436 → low end 4.28 % < 5 % → NOTE; itl: +20 % ± 1.99 % → RED.
	if ttft.Verdict != WithinNoise || itl.Verdict != Red || d.Verdict != Red || d.WithinNoise != 1 || d.Red != 1 {
		t.Errorf("ttft %s, itl %s, diff %s (%d red, %d within noise)", ttft.Verdict, itl.Verdict, d.Verdict, d.Red, d.WithinNoise)
	}
	if !strings.Contains(ttft.Change.Method, "over 2 rows (Bonferroni)") || math.Abs(ttft.ChangePct.Lo-(10-5*familyScale(2))) > 1e-9 {
		t.Errorf("ttft change %+v", ttft.ChangePct)
	}
	// The table says it: k = 1.1436 → ttft ±5.72 %, itl 20 ± 1.62 %.
	var tab strings.Builder
	WriteDiff(&tab, d)
	for _, want := range []string{`ttft_p50_ms .* NOTE \(within noise: ±5\.72%\) +\[\+4\.28, \+15\.72\]%`,
		`itl_p50_ms .* RED \(beyond noise: change \[\+18\.38, \+21\.62\]%\) +\[\+18\.38, \+21\.62\]%`,
		`note: 1 row is beyond the tolerance but within noise \(NOTE, not RED\)`} {
		if !regexp.MustCompile(want).MatchString(tab.String()) {
			t.Errorf("table lacks %s:\n%s", want, tab.String())
		}
	}
	// throughput has values but no intervals; the other metrics are null and not compared.
	want := "1 of 3 per-concurrency rows judged on tolerance only: no 95 % interval in the baseline for 1, in the current run for 1"
	if len(d.Notes) != 1 || !strings.HasPrefix(d.Notes[0], want) {
		t.Errorf("notes %q, want one starting %q", d.Notes, want)
	}
}
