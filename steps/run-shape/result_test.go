package runshape

import (
	"testing"

	"github.com/perfdag/perfdag/engine/gate"

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

// An open-loop point's rate figures reach what gates and sweep rules read: rate_met false on
// a rate_short point, so `rate_met && ttft_sched_p99_ms <= 2000` never passes it however
// fast its answers were; a closed-loop point states none of them (nil: not evaluated).
func TestResultOfCarriesTheOpenLoopRate(t *testing.T) {
	sched := &schema.Stat{Unit: "ms", Count: 8, P50: 900, P99: 1500}
	short := schema.Point{Concurrency: 2, TTFT: &schema.Stat{Unit: "ms", Count: 8, P50: 100}, TTFTSched: sched, RequestLatencySched: sched,
		OpenLoop: &schema.OpenLoop{AskedRate: 40, AchievedRate: 13.1, ScheduledRate: 40, RateShortfallPct: 67.2, RateShort: "cap hit"}}
	r := ResultOf(short, campaigndir.PointFiles{})
	if r.RateMet == nil || *r.RateMet || r.RateShortfallPct == nil || *r.RateShortfallPct != 67.2 || r.AchievedRate == nil || *r.AchievedRate != 13.1 ||
		r.TTFTSchedP50Ms == nil || *r.TTFTSchedP50Ms != 900 || r.TTFTSchedP99Ms == nil || *r.TTFTSchedP99Ms != 1500 || r.RequestLatencySchedP50Ms == nil {
		t.Fatalf("open-loop result %+v: want rate_met false, shortfall 67.2, achieved 13.1, TTFT from the schedule 900/1500", r)
	}
	env := gate.Env(nil, r)
	prog, err := gate.Compile("rate_met && ttft_sched_p99_ms <= 2000", gate.SampleEnv(nil, campaigndir.PointResult{}), false)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := gate.Eval(prog, env); err != nil || ok {
		t.Errorf("rule on a rate_short point = %v (%v), want false", ok, err)
	}
	closed := ResultOf(schema.Point{Concurrency: 2}, campaigndir.PointFiles{})
	if closed.RateMet != nil || closed.RateShortfallPct != nil || closed.AchievedRate != nil || closed.TTFTSchedP50Ms != nil {
		t.Errorf("closed-loop result states open-loop figures: %+v", closed)
	}
}
