package sweep

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/perfdag/perfdag/engine"
	"github.com/perfdag/perfdag/engine/plural"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/schema/campaigndir"
)

// axis is what a search bisects: positions from..to at step, each a point of the cell — the
// concurrencies themselves (over: concurrency), or a rate search's grid, position k the grid's
// kth rate (1 = from) at the cell's max_in_flight. The bisection, the band and the bound work
// on positions alone, so a rate search is the concurrency search over its grid.
type axis struct {
	from, to, step int
	grid           []float64 // over: rate
	cap            int       // over: rate: the probes' in-flight cap (0: none)
}

func axisOf(cell *schema.Cell) axis {
	s := cell.Search
	if s.OverRate() {
		g := s.RateGrid()
		return axis{from: 1, to: len(g), step: 1, grid: g, cap: cell.MaxInFlight}
	}
	from, to := s.Conc()
	return axis{from: from, to: to, step: s.Step()}
}

func (a axis) rate() bool { return a.grid != nil }

// load is the point at position x.
func (a axis) load(cell *schema.Cell, x int) schema.Load {
	if a.rate() {
		return schema.RateAt(a.grid[x-1], a.cap)
	}
	return cell.LegacyLoad(x)
}

// pos is the position of a probe on the axis: a concurrency search's in-flight count (as it
// always read its probes), a rate search's grid position, 0 when it is not on the grid.
func (a axis) pos(l schema.Load) int {
	if !a.rate() {
		return l.InFlight()
	}
	if !l.IsRate() || l.Cap != a.cap {
		return 0
	}
	return schema.RateIndex(a.grid, l.Rate) + 1
}

// value is what a position means to a reader: its concurrency, or its rate (0 at position 0).
func (a axis) value(x int) float64 {
	switch {
	case x <= 0:
		return 0
	case a.rate():
		return a.grid[x-1]
	}
	return float64(x)
}

// free are the positions of the points an earlier run measured that the search may take:
// the points it would have probed itself (a concurrency search's LegacyLoad of their
// concurrency, a rate search's grid rates at its cap).
func (a axis) free(cell *schema.Cell, free []schema.Load) []int {
	var out []int
	for _, l := range free {
		if x := a.pos(l); x > 0 && a.load(cell, x) == l {
			out = append(out, x)
		}
	}
	slices.Sort(out)
	return out
}

// onAxis keeps the probes that are points of the search (positions set); a probe of an
// earlier form of the search (another grid) bounds nothing.
func onAxis(ps []judged) []judged {
	return slices.DeleteFunc(slices.Clone(ps), func(p judged) bool { return p.conc <= 0 })
}

// rateShort says why an open-loop point's sends fell short of its schedule ("" when they did
// not, or it is a closed-loop point): such a point never meets an SLO at its asked rate, so a
// search counts it as a decided miss, whatever its latencies.
func rateShort(p *campaigndir.PointResult) string {
	if p == nil || p.RateMet == nil || *p.RateMet {
		return ""
	}
	s := "rate short"
	if p.AchievedRate != nil && p.RequestRate > 0 {
		s += fmt.Sprintf(": sent at %s of the %s req/s asked", strconv.FormatFloat(*p.AchievedRate, 'g', 4, 64), schema.FormatRate(p.RequestRate))
	}
	if p.RateShortfallPct != nil {
		s += fmt.Sprintf(" (%.1f %% short)", *p.RateShortfallPct)
	}
	return s + ", counted as a miss"
}

// rateAnswer fills a rate search's answer: its bounds and the knee, band and cost in rates.
func rateAnswer(r *schema.SweepResult, cell *schema.Cell, a axis, knee, lo, hi int) {
	s := cell.Search
	r.Over, r.FromRate, r.ToRate, r.ResolutionPct, r.MaxInFlight = schema.SearchOverRate, s.From, s.To, s.RatePct(), cell.MaxInFlight
	r.KneeRate, r.KneeRateLo, r.KneeRateHi = a.value(knee), a.value(lo), a.value(hi)
	r.From, r.To, r.Knee, r.KneeLo, r.KneeHi = 0, 0, 0, 0, 0
}

// rateLine is a rate search's node line: "knee 48.2 req/s for ttft_p50_ms < 100 (8 probes of
// ≤ 10; rate short: r60.1)".
func rateLine(r *schema.SweepResult) string {
	var notes []string
	if u := r.UndecidedLoads(); len(u) > 0 {
		notes = append(notes, "undecided: "+loadList(u))
	}
	var short []schema.Load
	for _, p := range r.Probes {
		if p.RateShort {
			short = append(short, p.PointLoad())
		}
	}
	if len(short) > 0 {
		slices.SortFunc(short, schema.Load.Compare)
		notes = append(notes, "rate short, counted as misses: "+loadList(short))
	}
	extra := ""
	if len(notes) > 0 {
		extra = "; " + strings.Join(notes, "; ")
	}
	probes := plural.N(len(r.Probes), "probe")
	switch {
	case r.KneeUnknown != "":
		return fmt.Sprintf("knee unknown: %s (%s)", r.KneeUnknown, probes)
	case r.KneeRate == 0 && r.KneeRateLo == r.KneeRateHi:
		return fmt.Sprintf("no rate from %s req/s meets %s (%s%s)", schema.FormatRate(r.FromRate), r.SLO, probes, extra)
	case r.KneeAtTop && r.KneeRateLo == r.KneeRateHi:
		return fmt.Sprintf("knee ≥ %s req/s (the upper bound meets %s; %s)", schema.FormatRate(r.KneeRate), r.SLO, probes)
	}
	return fmt.Sprintf("knee %s for %s, to within %s %% (%s of ≤ %d%s)", r.BandText(), r.SLO,
		strconv.FormatFloat(r.ResolutionPct, 'f', -1, 64), probes, r.Bound, extra)
}

// loadList writes points as "r12.5, r14-cap8".
func loadList(ls []schema.Load) string {
	parts := make([]string, len(ls))
	for i, l := range ls {
		parts[i] = l.Key()
	}
	return strings.Join(parts, ", ")
}

// checkConcSearch checks a concurrency search's bounds and resolution at their keys. The range
// tags have bounded them to 0..100000 already; what is left is a whole, positive concurrency
// at each end, their order, and a resolution in concurrencies.
func checkConcSearch(cell *schema.Cell, p string) []error {
	s := cell.Search
	var errs []error
	bad := func(key string, err error, hint string) {
		errs = append(errs, &engine.FieldError{Path: p + key, Err: err, Hint: hint})
	}
	whole := true
	for _, b := range []struct {
		key string
		v   float64
	}{{"from", s.From}, {"to", s.To}} {
		switch {
		case b.v != math.Trunc(b.v):
			whole = false
			bad("."+b.key, fmt.Errorf("want an integer, got the number %s", strconv.FormatFloat(b.v, 'f', -1, 64)),
				"a concurrency search's bounds are whole concurrencies; over: rate searches request rates")
		case b.v == 0:
			whole = false
			bad("."+b.key, fmt.Errorf("cell %s: a concurrency search needs its %s concurrency, %s: (1 to 100000)", cell.ID, map[string]string{"from": "lowest", "to": "highest"}[b.key], b.key),
				"from: 1, to: 64")
		}
	}
	if whole && s.From >= 1 && s.To >= 1 && s.To < s.From {
		bad(".to", fmt.Errorf("cell %s: search from %d to %d is not a range", cell.ID, int(s.From), int(s.To)), "from: 1, to: 64 (to ≥ from)")
	}
	if s.Resolution.Pct > 0 {
		bad(".resolution", fmt.Errorf("cell %s: resolution %s is a percentage of a rate, and the search is over concurrency", cell.ID, s.Resolution),
			"resolution: 4 (concurrencies), or over: rate to search request rates")
	}
	return errs
}

// checkRateSearch checks a rate search at its keys: its bounds are valid rates in order, its
// resolution a percentage, and the cell does not also name a rate the older way.
func checkRateSearch(cell *schema.Cell, p string) []error {
	var errs []error
	hints := map[string]string{
		"from":       "from: 1, to: 64 (requests per second, to ≥ from, at most 6 significant digits)",
		"to":         "from: 1, to: 64 (requests per second, to ≥ from, at most 6 significant digits)",
		"resolution": "resolution: 2% (the knee to within 2 % of its rate)",
	}
	problems := cell.Search.RateBounds()
	for _, key := range []string{"from", "to", "resolution"} {
		if msg, ok := problems[key]; ok {
			errs = append(errs, &engine.FieldError{Path: p + "." + key, Err: fmt.Errorf("cell %s: %s", cell.ID, msg), Hint: hints[key]})
		}
	}
	if cell.Workload.RequestRate > 0 {
		errs = append(errs, &engine.FieldError{Path: strings.TrimSuffix(p, ".search") + ".workload.request_rate",
			Err:  fmt.Errorf("cell %s: a search over rate probes its own rates, and workload.request_rate names one", cell.ID),
			Hint: "delete workload.request_rate (the search's probes are its rates; max_in_flight: caps them)"})
	}
	return errs
}
