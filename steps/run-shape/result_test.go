package runshape

import (
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// The statistics gates read are nil, not 0, when the point does not state them: a Stat the
// point lacks (no ITL: every answer one token) or a statistic its source left out.
func TestResultOfLeavesUnstatedNil(t *testing.T) {
	ttft := &schema.Stat{Unit: "ms", Count: 8, Avg: 52, P50: 47.5, P99: 70}
	ttft.Unstate("p99")
	r := ResultOf(schema.Point{Concurrency: 4, TTFT: ttft}, campaigndir.PointFiles{})
	for _, tc := range []struct {
		name string
		got  *float64
		want float64
		nil_ bool
	}{
		{"ttft_avg_ms", r.TTFTAvgMs, 52, false},
		{"ttft_p50_ms", r.TTFTP50Ms, 47.5, false},
		{"ttft_p99_ms", r.TTFTP99Ms, 0, true},
		{"itl_avg_ms", r.ITLAvgMs, 0, true},
		{"tok_s_per_user", r.TokPerSPerUser, 0, true},
	} {
		switch {
		case tc.nil_ && tc.got != nil:
			t.Errorf("%s = %v, want nil (unstated)", tc.name, *tc.got)
		case !tc.nil_ && (tc.got == nil || *tc.got != tc.want):
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	if s := summary(r); s != "c4: 0/0 ok, TTFT p50 47.5 ms, ITL unstated, 0.0 tok/s/GPU" {
		t.Errorf("summary = %q", s)
	}
}
