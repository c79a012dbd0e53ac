package schema

import (
	"fmt"
	"strconv"
)

// Arrival processes of the open loop (Workload.Arrival).
const (
	ArrivalPoisson  = "poisson"
	ArrivalConstant = "constant"
	ArrivalGamma    = "gamma"
)

// Loads are the cell's listed points in the order they run: its concurrencies (closed loop),
// then its rates at max_in_flight. In the older open-loop spelling (workload.request_rate) each
// concurrency is the in-flight cap of a point at that rate. A searched cell lists none: its
// probes are made at run time.
func (c *Cell) Loads() []Load {
	out := make([]Load, 0, len(c.Concurrencies)+len(c.Rates))
	for _, n := range c.Concurrencies {
		out = append(out, c.LegacyLoad(n))
	}
	for _, r := range c.Rates {
		out = append(out, RateAt(r, c.MaxInFlight))
	}
	return out
}

// LegacyLoad is the point a bare concurrency n stands for in this cell, as perfdag recorded
// points before they were keyed by load (and as a concurrency search still probes): the
// closed-loop point, or in the older open-loop spelling the rate point capped at n.
func (c *Cell) LegacyLoad(n int) Load {
	if c.Workload.RequestRate > 0 {
		return RateAt(c.Workload.RequestRate, n)
	}
	return Conc(n)
}

// LegacyKey is the key a point of the cell had before points were keyed by load, "" when it
// is the same: a point of the older open-loop spelling was keyed by its cap alone (c8 for
// r20-cap8). Readers of a directory written then find its records under this key.
func (c *Cell) LegacyKey(l Load) string {
	if c.Workload.RequestRate > 0 && l.IsRate() && l.Rate == c.Workload.RequestRate && l.Cap > 0 {
		return Conc(l.Cap).Key()
	}
	return ""
}

// FirstLoad is the point a cell starts at (its burn-in's load): its first listed one, else its
// search's lower bound (a rate search's lowest rate at the cell's cap), else concurrency 1.
func (c *Cell) FirstLoad() Load {
	if ls := c.Loads(); len(ls) > 0 {
		return ls[0]
	}
	if c.Search.OverRate() && CheckRate(c.Search.From) == nil {
		return RateAt(c.Search.From, c.MaxInFlight) // a rate search starts at its lowest rate
	}
	return c.LegacyLoad(c.FirstConcurrency())
}

// PointWorkload is what a point of the cell sends: the cell's workload with the point's rate
// as its request_rate (none on a closed-loop point). A point's fingerprint holds it, so a rate
// point of either spelling (rates: [20] with max_in_flight: 8, or request_rate: 20 with
// concurrencies: [8]) is the same measurement with the same fingerprint.
func (c *Cell) PointWorkload(l Load) Workload {
	w := c.Workload
	w.RequestRate = l.Rate
	return w
}

// PointCell is the cell as a point's fingerprint sees it: without its lists of points (adding a
// point re-runs no other) and with the point's workload.
func (c *Cell) PointCell(l Load) Cell {
	cell := *c
	cell.Concurrencies, cell.Rates, cell.MaxInFlight = nil, nil, 0
	if l.IsRate() {
		cell.Workload = c.PointWorkload(l)
	}
	return cell
}

// LoadProblems checks the cell's points beyond what the schema's tags check: unique
// concurrencies and rates, rates written without float noise, the older request_rate spelling
// not mixed with the newer one, and the arrival process complete. Keys are paths below the
// cell (concurrencies[2], rates, workload.burstiness), values what is wrong; hints says how to
// mend each.
func (c *Cell) LoadProblems() (problems, hints map[string]string) {
	problems, hints = map[string]string{}, map[string]string{}
	add := func(path, hint, format string, args ...any) {
		if _, ok := problems[path]; !ok {
			problems[path], hints[path] = fmt.Sprintf(format, args...), hint
		}
	}
	seenC := map[int]bool{}
	for j, n := range c.Concurrencies {
		if seenC[n] {
			add("concurrencies["+strconv.Itoa(j)+"]", "each concurrency is one point; list it once", "concurrency %d appears twice", n)
		}
		seenC[n] = true
	}
	seenR := map[string]bool{}
	for j, r := range c.Rates {
		p := "rates[" + strconv.Itoa(j) + "]"
		if err := CheckRate(r); err != nil {
			add(p, "a rate in requests per second, e.g. 0.5, 2, 12.5", "%v", err)
			continue
		}
		if k := FormatRate(r); seenR[k] {
			add(p, "each rate is one point; list it once", "rate %s appears twice", k)
		}
		seenR[FormatRate(r)] = true
	}
	w := c.Workload
	switch {
	case w.RequestRate > 0 && len(c.Rates) > 0:
		add("workload.request_rate", "move the rate into rates: (and the caps into max_in_flight:)",
			"cell %s has both workload.request_rate (the older spelling of one rate, capped by each concurrency) and rates", c.ID)
	case w.RequestRate > 0 && c.MaxInFlight > 0:
		add("max_in_flight", "write rates: ["+FormatRate(w.RequestRate)+"] with max_in_flight:, or keep request_rate with concurrencies: as its caps",
			"cell %s: max_in_flight caps the cell's rates, and workload.request_rate is capped by each concurrency", c.ID)
	case w.RequestRate > 0 && w.RequestRate <= MaxRate: // beyond it, its range tag says so
		if err := CheckRate(w.RequestRate); err != nil {
			add("workload.request_rate", "a rate in requests per second, e.g. 0.5, 2, 12.5", "%v", err)
		}
	}
	if c.MaxInFlight > 0 && len(c.Rates) == 0 && c.Sweep.IsZero() && !c.Search.OverRate() {
		add("max_in_flight", "list the rates it caps: rates: [1, 2, 4], find them with sweep: auto, or search them: search: {over: rate, ...}", "cell %s: max_in_flight caps rate points and the cell has no rates", c.ID)
	}
	switch {
	case w.Arrival == ArrivalGamma && w.Burstiness <= 0:
		add("workload.arrival", "burstiness: 1 is poisson; 0.5 burstier, 2 more even", "cell %s: arrival gamma needs its shape, workload.burstiness", c.ID)
	case w.Burstiness > 0 && w.Arrival != ArrivalGamma:
		add("workload.burstiness", "arrival: gamma (burstiness is its shape), or drop burstiness", "cell %s: burstiness shapes gamma arrivals and the arrival is %s", c.ID, orDefault(w.Arrival, ArrivalPoisson))
	}
	return problems, hints
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
