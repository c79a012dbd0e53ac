package autostop

import (
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/stats"
)

// decide judges an open-loop request's SLO from its scheduled send, as the point's goodput
// does: a request the cap held back 400 ms, answered 50 ms after it went out, missed a
// 100 ms TTFT target; the same request without a schedule (a closed loop) met it.
func TestSLOJudgedFromTheSchedule(t *testing.T) {
	target := 100.0
	m := sloMetric{key: stats.KeySLOAttainment, slo: schema.SLO{TTFTMs: &target}}
	rec := func(i int, scheduled int64) schema.RequestRecord {
		start := int64(1e12) + int64(i)*1e9
		return schema.RequestRecord{Index: i, Phase: phaseProfiling, ScheduledNs: scheduled, StartNs: start, FirstTokenNs: start + 50e6,
			FirstOutputNs: start + 50e6, LastContentNs: start + 80e6, EndNs: start + 80e6, Status: 200, OutputTokens: 4}
	}
	late := []schema.RequestRecord{rec(0, 1e12-400e6), rec(1, 1e12+1e9-400e6)}
	onTime := []schema.RequestRecord{rec(0, 0), rec(1, 0)}
	if g := m.judge(late).good; len(g) != 2 || g[0] != 0 || g[1] != 0 {
		t.Errorf("requests 400 ms late with a 50 ms TTFT from the send judged %v, want both missed", g)
	}
	if g := m.judge(onTime).good; len(g) != 2 || g[0] != 1 || g[1] != 1 {
		t.Errorf("closed-loop requests with a 50 ms TTFT judged %v, want both good", g)
	}
}
