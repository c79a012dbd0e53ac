package sweep

import (
	"fmt"
	"math"
	"slices"

	"github.com/perfdag/perfdag/engine/plural"
	"github.com/perfdag/perfdag/schema"
)

// sweepCost sums what the sweep's probes took: every probe with a point (a probe that failed
// before measuring took nothing from the endpoint).
func sweepCost(ps []judged) *schema.CostTotal {
	var t schema.CostTotal
	for _, p := range ps {
		if p.point != nil {
			t.Add(p.point.MeasurementCost)
		}
	}
	if t.Points == 0 && t.Unrecorded == 0 {
		return nil
	}
	return &t
}

// costSample is one probe's measured cost, as the estimate interpolates it.
type costSample struct {
	conc        float64 // its concurrency, or a rate probe's rate
	turns       float64 // requests sent per unit of its count base (concurrency, cap or rate: schema.Load.CountBase)
	secsPerReq  float64 // run seconds per request sent
	settleS     float64
	gpus        int
	gpusUnknown bool
}

// fixedSweep estimates what a fixed sweep of every concurrency of the search's range (from, to
// at its resolution) would have cost, at the per-point cost the probes measured: each point's
// requests by the cell's rule (a fixed count exactly; an auto count at the probes' requests per
// unit of concurrency, interpolated linearly in concurrency between them, flat beyond), its
// run seconds at the probes' seconds per request, interpolated the same way, plus the probes'
// mean settle. nil when no probe recorded its cost.
func fixedSweep(cell *schema.Cell, ps []judged) *schema.FixedSweepCost {
	a := axisOf(cell)
	var samples []costSample
	for _, p := range ps {
		if p.point == nil || p.point.MeasurementCost == nil || p.point.MeasurementCost.RequestsSent == 0 || p.conc <= 0 {
			continue
		}
		c := p.point.MeasurementCost
		samples = append(samples, costSample{conc: a.value(p.conc), turns: float64(c.RequestsSent) / float64(max(p.load.CountBase(), 1)),
			secsPerReq: c.RunS / float64(c.RequestsSent), settleS: c.SettleS, gpus: c.GPUs, gpusUnknown: c.GPUSeconds == nil})
	}
	if len(samples) == 0 {
		return nil
	}
	slices.SortFunc(samples, func(a, b costSample) int { return int(a.conc - b.conc) })
	settle, gpus, unknown := 0.0, samples[0].gpus, false
	for _, x := range samples {
		settle += x.settleS / float64(len(samples))
		unknown = unknown || x.gpusUnknown || x.gpus != gpus
	}
	out := &schema.FixedSweepCost{From: a.from, To: a.to, Step: a.step}
	if a.rate() {
		s := cell.Search
		out.From, out.To, out.Step, out.FromRate, out.ToRate, out.ResolutionPct = 0, 0, 0, s.From, s.To, s.RatePct()
	}
	auto := cell.RequestsPerPoint.Auto != nil
	for c := a.from; a.to >= a.from; c += a.step {
		c = min(c, a.to)
		l, x := a.load(cell, c), a.value(c)
		n := cell.RequestsPerPoint.For(l.CountBase()) + cell.WarmupRequests
		if auto {
			n = int(math.Round(interpolate(samples, x, func(x costSample) float64 { return x.turns }) * float64(l.CountBase())))
		}
		out.Points++
		out.Requests += n
		out.EndpointS += settle + float64(n)*interpolate(samples, x, func(x costSample) float64 { return x.secsPerReq })
		if c == a.to {
			break
		}
	}
	if !unknown && gpus > 0 {
		g := out.EndpointS * float64(gpus)
		out.GPUSeconds = &g
	}
	var rule string
	switch r := cell.RequestsPerPoint; {
	case auto && a.rate():
		rule = "the probes' measured requests per unit of their count base (the cap, else the rate), interpolated in rate between them (an auto point measures as long as it needs, so this is an estimate)"
	case auto:
		rule = "the probes' measured requests per unit of concurrency, interpolated between them (an auto point measures as long as it needs, so this is an estimate)"
	case r.N > 0:
		rule = fmt.Sprintf("%d requests each (the cell's requests_per_point)", r.N)
	case r.Multiple > 0 && a.rate():
		rule = fmt.Sprintf("%d × the cap (else the rate) requests each (the cell's requests_per_point)", r.Multiple)
	case r.Multiple > 0:
		rule = fmt.Sprintf("%d × C requests each (the cell's requests_per_point)", r.Multiple)
	case a.rate():
		rule = "max(10, 3 × the cap, else the rate) requests each (the default requests_per_point)"
	default:
		rule = "max(10, 3 × C) requests each (the default requests_per_point)"
	}
	if cell.WarmupRequests > 0 && !auto {
		rule += fmt.Sprintf(" plus %s", plural.N(cell.WarmupRequests, "warm-up request"))
	}
	out.Basis = fmt.Sprintf("every concurrency %s (%s) at %s; each point's run seconds at the probes' measured seconds per request, interpolated between them, plus their mean settle",
		sweepRange(a.from, a.to, a.step), plural.N(out.Points, "point"), rule)
	if a.rate() {
		out.Basis = fmt.Sprintf("every rate of the search's grid %s (%s) at %s; each point's run seconds at the probes' measured seconds per request, interpolated in rate between them, plus their mean settle",
			out.Range(), plural.N(out.Points, "point"), rule)
	}
	return out
}

// sweepRange writes a fixed sweep's concurrencies: "c1..c64", "c1..c1024 every 16".
func sweepRange(from, to, step int) string {
	if step <= 1 {
		return fmt.Sprintf("c%d..c%d", from, to)
	}
	return fmt.Sprintf("c%d..c%d every %d", from, to, step)
}

// interpolate reads f linearly in concurrency between the samples around c (sorted by
// concurrency), flat beyond the first and the last.
func interpolate(samples []costSample, c float64, f func(costSample) float64) float64 {
	if c <= samples[0].conc {
		return f(samples[0])
	}
	for i := 1; i < len(samples); i++ {
		a, b := samples[i-1], samples[i]
		if c <= b.conc {
			if b.conc == a.conc {
				return f(b)
			}
			w := (c - a.conc) / (b.conc - a.conc)
			return f(a) + w*(f(b)-f(a))
		}
	}
	return f(samples[len(samples)-1])
}
