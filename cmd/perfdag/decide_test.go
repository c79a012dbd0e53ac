package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// atlasRows reads a campaign's atlas.jsonl.
func atlasRows(t *testing.T, dir string) []schema.AtlasRow {
	t.Helper()
	var out []schema.AtlasRow
	if err := campaigndir.ScanLines(dir, campaigndir.Atlas(), 1<<20, func(_ int, r *schema.AtlasRow) error {
		out = append(out, *r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// Issue 28: on the deterministic simulator (no variance; ITL known by formula, so the knee is
// too), a search whose probes measure until the SLO's verdict is known finds the exact knee,
// every probe decided with its confidence within 10 turns of its slots, for at most twice the
// requests the fixed 3x rule spends on the same search (measured: 1.33 ×, as every probe decides
// at its first look, 4 turns; the rel_ci 0.02 rule's spend is logged beside it).
func TestDecideSearchExactKnee(t *testing.T) {
	const to = 48
	for _, k := range []int{1, 20, 31, 47} {
		limit := fmt.Sprintf("%.2f", itlAt(k)+0.55)
		slo := "itl_avg_ms <= " + limit
		total := map[string]int{}
		for _, count := range []string{"{auto: {decide: slo}}", "3x", "{auto: {metric: itl_avg_ms, rel_ci: 0.02}}"} {
			dir := t.TempDir()
			path := filepath.Join(dir, "knee.yaml")
			body := strings.Replace(fmt.Sprintf(kneeCampaign, limit, to), "requests_per_point: 2x", "requests_per_point: "+count, 1)
			if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "out")
			if b, err := perfdagChild("run", path, "--out", out).CombinedOutput(); err != nil {
				t.Fatalf("%s %s: %v\n%s", slo, count, err, b)
			}
			r := readSweep(t, out)
			if r.Knee != k || r.KneeAtTop {
				t.Errorf("%s (%s): knee c%d, want c%d; probes %v", slo, count, r.Knee, k, probeSet(r))
			}
			for _, row := range atlasRows(t, out) {
				total[count] += row.NumPrompts
				if !strings.Contains(count, "decide") {
					continue
				}
				d := row.Decision
				if d == nil || !d.Known() || d.Alpha != 0.05 || len(d.Clauses) != 1 || d.Clauses[0].HiLevel < 0.95 || d.Clauses[0].Hi == nil {
					t.Errorf("%s c%d: decision %+v, want a verdict with its bounds and their confidence", slo, row.Concurrency, d)
					continue
				}
				if want := itlAt(row.Concurrency) <= itlAt(k)+0.55; (d.Verdict == schema.VerdictMeets) != want {
					t.Errorf("%s c%d: %s, the formula says meets = %v", slo, row.Concurrency, d.Verdict, want)
				}
				if row.NumPrompts > 10*row.Concurrency {
					t.Errorf("%s c%d: %d requests, more than 10 turns of its slots", slo, row.Concurrency, row.NumPrompts)
				}
			}
		}
		dec, fixed, relci := total["{auto: {decide: slo}}"], total["3x"], total["{auto: {metric: itl_avg_ms, rel_ci: 0.02}}"]
		t.Logf("%s: knee c%d; decide %d requests, fixed 3x %d (%.2f ×), rel_ci 0.02 %d (%.1f ×)", slo, k, dec, fixed,
			float64(dec)/float64(fixed), relci, float64(relci)/float64(fixed))
		if dec > 2*fixed {
			t.Errorf("%s: decide spent %d requests, more than twice the 3x rule's %d", slo, dec, fixed)
		}
	}
}

// Issue 28: a search on the per-request SLO's attainment (slo_attainment >= 0.99, the TPOT
// target putting the knee at c13) with decide measures each probe until its verdict is known
// and finds the exact knee with every probe decided: the deterministic simulator judges every
// request on the same TTFT, TPOT and latency, so an attainment of 1 or 0 is exact at the first
// look (4 turns), as a mean without spread is. The decision names the clause with its bounds.
func TestDecideSearchOnAttainment(t *testing.T) {
	const k = 13
	target := fmt.Sprintf("%.2f", itlAt(k)+0.55)
	dir := t.TempDir()
	path := filepath.Join(dir, "knee.yaml")
	body := strings.Replace(fmt.Sprintf(goodputCampaign, target), "requests_per_point: 2x", "requests_per_point: {auto: {decide: slo}}", 1)
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if b, err := perfdagChild("run", path, "--out", out).CombinedOutput(); err != nil {
		t.Fatalf("run: %v\n%s", err, b)
	}
	r := readSweep(t, out)
	if r.Knee != k || r.KneeUnknown != "" || r.KneeLo != k || r.KneeHi != k {
		t.Fatalf("knee c%d (band %v–%v, %s), want exactly c%d; probes %v", r.Knee, r.KneeLo, r.KneeHi, r.KneeUnknown, k, probeSet(r))
	}
	rows := atlasRows(t, out)
	if len(rows) != len(r.Probes) {
		t.Errorf("%d atlas rows for %d probes", len(rows), len(r.Probes))
	}
	for _, row := range rows {
		d := row.Decision
		if d == nil || !d.Known() || len(d.Clauses) != 1 || d.Clauses[0].Metric != "slo_attainment" || d.Clauses[0].Lo == nil {
			t.Errorf("c%d: decision %+v, want a verdict on slo_attainment with its bounds", row.Concurrency, d)
			continue
		}
		if want := row.Concurrency <= k; (d.Verdict == schema.VerdictMeets) != want || d.Clauses[0].Value != map[bool]float64{true: 1, false: 0}[want] {
			t.Errorf("c%d: %s at attainment %v, the formula says meets = %v", row.Concurrency, d.Verdict, d.Clauses[0].Value, want)
		}
		if row.NumPrompts != 4*row.Concurrency {
			t.Errorf("c%d: %d requests, want the first look's 4 turns", row.Concurrency, row.NumPrompts)
		}
	}
}
