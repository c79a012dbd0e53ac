package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/testkit"
)

// Issues 21 and 28: the shipped nightly sweep (SLO search per arm, each probe measuring until
// its verdict is known) finds the same knees and champion as a full 1..64 sweep of the same arms
// on the deterministic simulator at the fixed 3x rule (12,480 requests, the old nightly that
// stated no interval), with no more requests than that, every probe's verdict decided with its
// confidence. Both drop the 1 s settle (the same for both, and two minutes of the full sweep's
// time); nothing else differs.
func TestNightlySearchMatchesFullSweep(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the nightly campaign and a 128-point full sweep (~1.5 min)")
	}
	src, err := os.ReadFile(filepath.Join("..", "..", "pipelines", "nightly-sweep.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	searched := regexp.MustCompile(`(?m)^settle:.*\n`).ReplaceAllString(string(src), "")
	var all []string
	for c := 1; c <= 64; c++ {
		all = append(all, fmt.Sprint(c))
	}
	full := regexp.MustCompile(`(?m)^    search: .*$`).ReplaceAllString(searched, "    concurrencies: ["+strings.Join(all, ", ")+"]")
	full = strings.ReplaceAll(full, "requests_per_point: {auto: {decide: slo}}", "requests_per_point: 3x")
	if full == searched || !strings.Contains(searched, "search:") || !strings.Contains(searched, "{auto: {decide: slo}}") || strings.Contains(full, "auto") {
		t.Fatal("the nightly campaign no longer has the search and decide rule this test replaces")
	}
	work := t.TempDir()
	run := func(name, body string) string {
		file := filepath.Join(work, name+".yaml")
		testkit.WriteFile(t, file, body)
		out := filepath.Join(work, name)
		if b, err := perfdagChild("run", file, "--out", out).CombinedOutput(); err != nil {
			t.Fatalf("run %s: %v\n%s", name, err, b)
		}
		return out
	}
	searchDir, fullDir := run("search", searched), run("full", full)

	champ := func(dir string) string {
		var c schema.Champion
		if _, err := campaigndir.ReadJSON(dir, campaigndir.Champion(), &c); err != nil {
			t.Fatal(err)
		}
		return c.Champion
	}
	rows := func(dir string) []schema.AtlasRow {
		var out []schema.AtlasRow
		if err := campaigndir.ScanLines(dir, campaigndir.Atlas(), 1<<20, func(_ int, r *schema.AtlasRow) error {
			out = append(out, *r)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	requests := func(rs []schema.AtlasRow) (n int) {
		for _, r := range rs {
			n += r.NumPrompts
		}
		return n
	}
	fullRows := rows(fullDir)
	for _, cell := range []string{"aa-1k-current", "aa-1k-candidate"} {
		var s schema.SweepResult
		if _, err := campaigndir.ReadJSON(searchDir, campaigndir.Sweep(cell), &s); err != nil {
			t.Fatal(err)
		}
		knee := 0 // the full sweep's answer on the same rule: highest c below the first miss
		for c := 1; c <= 64; c++ {
			ok := false
			for _, r := range fullRows {
				if r.CellID == cell && r.Concurrency == c && r.ITLAvgMs != nil && *r.ITLAvgMs <= 50 && r.ErrorCount == 0 {
					ok = true
				}
			}
			if !ok {
				break
			}
			knee = c
		}
		if s.Knee != knee || len(s.Probes) > s.Bound {
			t.Errorf("%s: search knee c%d in %d probes (bound %d), full sweep c%d", cell, s.Knee, len(s.Probes), s.Bound, knee)
		}
		t.Logf("%s: knee c%d by search in %d probes, c%d by the full sweep", cell, s.Knee, len(s.Probes), knee)
	}
	if a, b := champ(searchDir), champ(fullDir); a != b || a == "" {
		t.Errorf("champion %q by search, %q by the full sweep", a, b)
	}
	for _, r := range rows(searchDir) {
		d := r.Decision
		if d == nil || !d.Known() || d.Alpha != 0.05 || len(d.Clauses) != 2 || d.Clauses[0].Hi == nil || d.Clauses[0].HiLevel < 0.95 {
			t.Errorf("%s c%d: decision %+v, want a verdict with its bounds and their confidence", r.CellID, r.Concurrency, d)
		}
	}
	rs, rf := requests(rows(searchDir)), requests(fullRows)
	t.Logf("champion %s both ways; requests %d (search) vs %d (full sweep at 3x) = %.1f %%", champ(searchDir), rs, rf, 100*float64(rs)/float64(rf))
	if rf != 12480 || rs > rf {
		t.Errorf("the search used %d requests, the full sweep at 3x %d: want at most the full sweep's 12,480", rs, rf)
	}
}
