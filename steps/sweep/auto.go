package sweep

import (
	"fmt"
	"strconv"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/engine/plural"
	"github.com/perfdag/perfdag/schema"
)

// autoAnchors are sweep: auto's first two points: the synchronous one (one request at a time)
// and the saturating one (a closed loop at the cell's throughput concurrency).
func autoAnchors(cell *schema.Cell) (sync, top schema.Load) {
	return schema.Conc(1), schema.Conc(cell.ThroughputConcurrency())
}

// autoNext is sweep: auto's decision, a pure function of its probes as GuideLLM's sweep
// profile makes it: the synchronous point first, then the saturating one, then in one round
// every rate spaced between their request throughputs (capped by max_in_flight); nothing
// more once those are made, or when an anchor measured no request throughput (the sweep
// then fails saying which, and resume measures it again).
func autoNext(cell *schema.Cell, ps []judged) []schema.Load {
	sync, top := autoAnchors(cell)
	switch len(ps) {
	case 0:
		return []schema.Load{sync}
	case 1:
		if anchorUnknown(ps[0]) != "" {
			return nil
		}
		return []schema.Load{top}
	case 2:
		rates, _ := autoRates(cell, ps)
		var loads []schema.Load
		for _, r := range rates {
			loads = append(loads, schema.RateAt(r, cell.MaxInFlight))
		}
		return loads
	}
	return nil
}

// autoRates are the rates between the anchors' request throughputs, or why there are none.
func autoRates(cell *schema.Cell, ps []judged) ([]float64, string) {
	for _, p := range ps[:min(2, len(ps))] {
		if why := anchorUnknown(p); why != "" {
			return nil, why
		}
	}
	if len(ps) < 2 {
		return nil, "the saturating point was not measured"
	}
	return schema.AutoSweepRatesBetween(ps[0].point.RequestThroughput, ps[1].point.RequestThroughput, cell.Sweep.RatesOr()), ""
}

// anchorUnknown says why an anchor gives no request throughput to space rates from ("" when
// it does): no point, a failed one, or none of its requests valid.
func anchorUnknown(p judged) string {
	if why := p.noEvidence(); why != "" {
		return why
	}
	if p.point.Status == "failed" || !(p.point.RequestThroughput > 0) {
		return fmt.Sprintf("%s measured no request throughput", p.load.Key())
	}
	return ""
}

// autoResult is sweep_probes.json's auto: the anchors' request throughputs and the rates.
func autoResult(cell *schema.Cell, ps []judged) *schema.AutoSweepResult {
	_, top := autoAnchors(cell)
	r := &schema.AutoSweepResult{ThroughputConcurrency: top.Concurrency, MaxInFlight: cell.MaxInFlight, Rates: []float64{}}
	if len(ps) > 0 && ps[0].point != nil {
		r.SyncRequestRate = ps[0].point.RequestThroughput
	}
	if len(ps) > 1 && ps[1].point != nil {
		r.PeakRequestRate = ps[1].point.RequestThroughput
	}
	rates, why := autoRates(cell, ps)
	if why != "" {
		r.Unknown = why
		return r
	}
	r.Rates = append(r.Rates, rates...)
	return r
}

// autoLine words sweep: auto's answer: "c1 4.1 req/s, c128 61.3 req/s: 8 rates 11.0–61.3 req/s (10 points)".
func autoLine(r *schema.SweepResult) string {
	a := r.Auto
	if a.Unknown != "" {
		return fmt.Sprintf("rates unknown: %s (%s)", a.Unknown, plural.N(len(r.Probes), "point"))
	}
	rates := "no rate"
	switch n := len(a.Rates); n {
	case 0:
	case 1:
		rates = "1 rate " + reqS(a.Rates[0])
	default:
		rates = fmt.Sprintf("%d rates %s–%s", n, schema.FormatRate(a.Rates[0]), reqS(a.Rates[n-1]))
	}
	return fmt.Sprintf("c1 %s, c%d %s: %s (%s)", reqS(a.SyncRequestRate), a.ThroughputConcurrency, reqS(a.PeakRequestRate),
		rates, plural.N(len(r.Probes), "point"))
}

func reqS(r float64) string { return strconv.FormatFloat(r, 'g', 3, 64) + " req/s" }

// checkAuto refuses what sweep: auto cannot be combined with, at the key that says it.
func checkAuto(cell *schema.Cell, p string) []error {
	var errs []error
	bad := func(key string, err error, hint string) {
		errs = append(errs, &engine.FieldError{Path: p + key, Err: err, Hint: hint})
	}
	const keep = "keep sweep: auto (it finds its points) or delete it and list the points"
	if cell.Search != nil {
		bad(".sweep", fmt.Errorf("cell %s has both sweep: auto and search", cell.ID), "a cell finds its operating range (sweep: auto) or searches for its knee, not both")
	}
	if cell.StopWhen != "" {
		bad(".stop_when", fmt.Errorf("cell %s has both sweep: auto and stop_when: sweep: auto measures all its points", cell.ID), "delete stop_when: (it ends a listed sweep early)")
	}
	if len(cell.Concurrencies) > 0 {
		bad(".concurrencies", fmt.Errorf("cell %s has both sweep: auto and concurrencies: its points are the ones the sweep finds, so the list would be ignored", cell.ID), keep)
	}
	if len(cell.Rates) > 0 {
		bad(".rates", fmt.Errorf("cell %s has both sweep: auto and rates: the sweep spaces its rates between the throughputs it measures", cell.ID), keep)
	}
	if cell.Workload.RequestRate > 0 {
		bad(".workload.request_rate", fmt.Errorf("cell %s has both sweep: auto and workload.request_rate: the sweep's rate points take the rates it finds", cell.ID),
			"delete workload.request_rate (cap the rate points with max_in_flight:)")
	}
	if c := cell.ThroughputConcurrency(); c < 2 {
		bad(".max_in_flight", fmt.Errorf("cell %s: sweep: auto's saturating point runs at max_in_flight, %d, the synchronous point's concurrency", cell.ID, c),
			"raise max_in_flight, or set the saturating point's concurrency: sweep: {auto: {throughput_concurrency: 64}}")
	}
	return errs
}
