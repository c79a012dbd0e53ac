package sweep

import (
	"math"
	"strings"
	"testing"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// costed is a probe at c whose point sent sent requests in run seconds after a 1 s settle, on 2 GPUs.
func costed(c, sent int, run float64) judged {
	return judged{load: schema.Conc(c), conc: c, point: &campaigndir.PointResult{Concurrency: c, MeasurementCost: schema.NewMeasurementCost(sent, sent, 1, run, 2)}}
}

// A fixed sweep of the range costs the cell's rule at every concurrency (exact for a fixed
// count), its seconds at the probes' seconds per request interpolated in concurrency; an auto
// count takes the probes' requests per unit of concurrency the same way.
func TestFixedSweepEstimate(t *testing.T) {
	probes := []judged{costed(1, 3, 3), costed(9, 27, 9)} // 1 s per request at c1, 1/3 s at c9
	cell := &schema.Cell{ID: "k", RequestsPerPoint: schema.Count{Multiple: 3}, Search: &schema.Search{SLO: "x", From: 1, To: 9}}
	f := fixedSweep(cell, probes)
	// c1..c9 at 3c: 135 requests; run seconds Σ 3c × (1 − (c−1)/12) plus 9 settles of 1 s
	wantS := 9.0
	for c := 1; c <= 9; c++ {
		wantS += 3 * float64(c) * (1 - float64(c-1)/12)
	}
	if f.Points != 9 || f.Requests != 135 || math.Abs(f.EndpointS-wantS) > 1e-9 || f.GPUSeconds == nil || math.Abs(*f.GPUSeconds-2*wantS) > 1e-9 {
		t.Fatalf("fixed sweep %+v, want 9 points, 135 requests, %.4f s, %.4f GPU-s", f, wantS, 2*wantS)
	}
	if !strings.Contains(f.Basis, "every concurrency c1..c9 (9 points) at 3 × C requests each") {
		t.Errorf("basis %q", f.Basis)
	}
	// an auto count: 3 turns at c1, 7 at c9 measured; c5 interpolates to 5 turns (25 requests)
	cell.RequestsPerPoint = schema.Count{Auto: &schema.AutoCount{Decide: schema.DecideSLO}}
	cell.Search.Resolution = schema.Resolution{N: 4}
	f = fixedSweep(cell, []judged{costed(1, 3, 3), costed(9, 63, 21)})
	if f.Points != 3 || f.Requests != 3+25+63 || !strings.Contains(f.Basis, "c1..c9 every 4") || !strings.Contains(f.Basis, "interpolated") {
		t.Fatalf("auto fixed sweep %+v, want c1, c5, c9 with 3 + 25 + 63 requests", f)
	}
	// without a declared GPU count the estimate's GPU-seconds are unknown; without costs, no estimate
	unknown := costed(1, 3, 3)
	unknown.point.MeasurementCost = schema.NewMeasurementCost(3, 3, 1, 3, 0)
	if f := fixedSweep(cell, []judged{unknown}); f == nil || f.GPUSeconds != nil {
		t.Fatalf("estimate %+v, want GPU-seconds unknown", f)
	}
	if f := fixedSweep(cell, []judged{{conc: 1, point: &campaigndir.PointResult{}}}); f != nil {
		t.Fatalf("estimate %+v from probes without a cost", f)
	}
}
