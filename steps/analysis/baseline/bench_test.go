package baseline

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// BenchmarkDiff: a 64-point sweep with 20 kernel classes (5 × 8 + … rows). A diff is a
// per-run cost, so anything under a millisecond is invisible next to the run itself.
func BenchmarkDiff(b *testing.B) {
	base, cur := doc(map[string]schema.PerfBenchPoint{}), doc(map[string]schema.PerfBenchPoint{})
	base.KernelClassGPUPct, cur.KernelClassGPUPct = map[string]*float64{}, map[string]*float64{}
	for c := 1; c <= 64; c++ {
		base.Metrics[strconv.Itoa(c)] = point(float64(100*c), 50, 0)
		cur.Metrics[strconv.Itoa(c)] = point(float64(98*c), 51, 0)
	}
	for k := range 20 {
		base.KernelClassGPUPct["class"+strconv.Itoa(k)] = f(float64(k))
		cur.KernelClassGPUPct["class"+strconv.Itoa(k)] = f(float64(k) + 1)
	}
	for b.Loop() {
		if _, err := Diff(base, cur, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSnapshotSmoke: one cell of the 40-cell synthetic smoke campaign (atlas scan of
// 240 rows, config decode, spec windows).
func BenchmarkSnapshotSmoke(b *testing.B) {
	dir := filepath.Join("..", "..", "..", "testdata", "smoke")
	if _, err := os.Stat(campaigndir.Abs(dir, campaigndir.Atlas())); err != nil {
		b.Skip("testdata/smoke is not present")
	}
	spec := &schema.Campaign{Campaign: "smoke"}
	f := campaigndir.Finished{Dir: dir, Spec: spec, Files: campaigndir.Unrecorded(dir), Evidence: campaigndir.Evidence{Atlas: campaigndir.Atlas()}}
	for b.Loop() {
		if _, err := Snapshot(context.Background(), f, "b200-nvfp4-tp8-ep-mbt1024"); err != nil {
			b.Fatal(err)
		}
	}
}
