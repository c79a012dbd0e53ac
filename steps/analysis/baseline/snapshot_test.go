package baseline

import (
	"bytes"
	"context"
	"maps"
	"os"
	"path/filepath"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
	"github.com/perfdag/perfdag/steps/analysis/atlas"
)

// TestSnapshotIntervals checks that a snapshot carries each point's intervals under the
// perfbench names (output_tok_s → throughput_toks_per_s, tok_s_per_user → tps_per_user,
// slo_attainment → slo_attainment_pct in percent) and drops those of metrics a snapshot does
// not hold; a point's goodput and attainment (percent) are carried, absent where the row has none.
func TestSnapshotIntervals(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "campaign")
	writeCampaign(t, dir, 1)
	f := finished(t, dir)
	rows, err := atlas.ReadAll(context.Background(), f.Files, f.Evidence.Atlas)
	must(t, err)
	iv := func(lo, hi float64) schema.Interval {
		return schema.Interval{Lo: lo, Hi: hi, Method: "batch-means", N: 10}
	}
	rows[1].Intervals = schema.Intervals{ // concurrency 16
		"output_tok_s": iv(90, 110), "tok_s_per_user": iv(120, 130), "ttft_p50_ms": iv(38, 42),
		"ttft_p95_ms": iv(55, 65), "itl_p50_ms": iv(7, 9), "request_latency_p50_ms": iv(7900, 8100),
		"ttft_avg_ms": iv(1, 2), "request_throughput": iv(3, 4),
		"slo_attainment": iv(0.99, 1), "goodput_req_s": iv(3, 3.4),
	}
	rows[1].SLOAttainment, rows[1].GoodputReqS = schema.F(0.995), schema.F(3.2)
	var buf bytes.Buffer
	_, err = atlas.Aggregate(&buf, rows...)
	must(t, err)
	must(t, os.WriteFile(campaigndir.Abs(dir, campaigndir.Atlas()), buf.Bytes(), 0o644))
	doc, err := Snapshot(context.Background(), f, "")
	must(t, err)
	want := schema.Intervals{
		"throughput_toks_per_s": iv(90, 110), "tps_per_user": iv(120, 130), "ttft_p50_ms": iv(38, 42),
		"ttft_p95_ms": iv(55, 65), "itl_p50_ms": iv(7, 9), "request_latency_p50_ms": iv(7900, 8100),
		"slo_attainment_pct": iv(99, 100), "goodput_req_s": iv(3, 3.4), // attainment in percent, as its value
	}
	if m := doc.Metrics["16"]; m.SLOAttainmentPct == nil || *m.SLOAttainmentPct != 99.5 || *m.GoodputReqS != 3.2 || doc.Metrics["1"].SLOAttainmentPct != nil {
		t.Errorf("c16 attainment %v goodput %v; c1 attainment %v", m.SLOAttainmentPct, m.GoodputReqS, doc.Metrics["1"].SLOAttainmentPct)
	}
	if got := doc.Metrics["16"].Intervals; !maps.Equal(got, want) {
		t.Errorf("c16 intervals %v, want %v", got, want)
	}
	if got := doc.Metrics["1"].Intervals; got != nil {
		t.Errorf("c1 had no intervals, snapshot gave %v", got)
	}
}
