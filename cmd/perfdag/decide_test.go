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
