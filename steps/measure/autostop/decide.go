package autostop

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/perfdag/perfdag/engine/gate"
	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/interval"
	"github.com/perfdag/perfdag/steps/measure/loadgen"
	"github.com/perfdag/perfdag/steps/measure/stats"
)

// Alpha is the chance a decided point's verdict may be wrong, over all its looks and clauses.
const Alpha = 0.05

// DecideGrowth is how much each look's prefix grows over the one before (at least a turn):
// a look at 4 turns, then 6, 9, 14, 21, 32, ... up to max, fixed before the point starts.
const DecideGrowth = 1.5

// MethodDecide names how a decision's bounds are made and its error is spent.
const MethodDecide = "one-sided batch-means/sectioning bounds (means skew-corrected by Hall's transformation) at looks fixed in advance; alpha/2 a side spent over the looks in proportion to their requests, and on the failing side split over the clauses"

// Counts a decision reads exactly (no interval): they only grow as requests are added, so a
// clause on one that fails at a look fails for the point, and one that holds is the point's.
var decideCounts = []string{"error_count"}

// Clause is one clause of a decided SLO: a metric compared with a number, bounded by the
// metric's interval at each look, or a count compared exactly.
type Clause struct {
	gate.Threshold
	m     *metric    // nil for a count or an slo metric
	s     *sloMetric // slo_attainment, goodput_req_s: judged against the cell's slo
	count bool
	// limitSE is the standard error of the limit itself (a baseline's value moved by its
	// tolerance): the bounds take it in quadrature. diff names the baseline's metric.
	limitSE float64
	diff    string
}

// Clauses reads an SLO for deciding: its top-level && split into `metric op number` clauses,
// each on a metric with a per-request interval (ttft_p50_ms, itl_avg_ms, output_tok_s, ...;
// slo_attainment and goodput_req_s when the cell has a per-request slo) compared by <, <=, >
// or >=, or on a count (error_count) compared by ==, < or <=. Anything else cannot be decided
// at a confidence and is refused, naming the clause.
func Clauses(rule string, slo *schema.SLO) ([]Clause, error) {
	ts, rest, err := gate.Thresholds(rule)
	if err != nil {
		return nil, err
	}
	if len(rest) > 0 {
		return nil, fmt.Errorf("SLO %q: %q is not a comparison of a metric with a number: decide reads only clauses such as ttft_p50_ms <= 250 joined by &&", rule, rest[0])
	}
	if len(ts) == 0 {
		return nil, fmt.Errorf("SLO %q has no clause to decide", rule)
	}
	out := make([]Clause, 0, len(ts))
	for _, t := range ts {
		c := Clause{Threshold: t}
		switch {
		case slices.Contains(decideCounts, t.Name):
			if t.Op != "<" && t.Op != "<=" && !(t.Op == "==" && t.Limit == 0) {
				return nil, fmt.Errorf("SLO %q: clause %q: a count is decided only below a number (error_count == 0, error_count <= 5)", rule, t.Clause)
			}
			c.count = true
		case t.Op == "==":
			return nil, fmt.Errorf("SLO %q: clause %q: a metric cannot be known to equal a number at a confidence; compare it with <, <=, > or >=", rule, t.Clause)
		case slices.Contains(sloMetrics, t.Name) && slo == nil:
			return nil, fmt.Errorf("SLO %q: clause %q: %s judges each request against the cell's per-request slo: targets, and the cell declares none", rule, t.Clause, t.Name)
		case slices.Contains(sloMetrics, t.Name):
			c.s = &sloMetric{key: t.Name, slo: *slo}
		default:
			m, ok := metrics[t.Name]
			if !ok {
				return nil, fmt.Errorf("SLO %q: clause %q: %s has no per-request interval to decide on (decidable: %s; counts: %s)",
					rule, t.Clause, t.Name, strings.Join(decideMetrics(), ", "), strings.Join(decideCounts, ", "))
			}
			c.m = &m
		}
		out = append(out, c)
	}
	return out, nil
}

// decideMetrics are the metrics a decided SLO may bound, sorted.
func decideMetrics() []string {
	out := make([]string, 0, len(metrics)+len(sloMetrics))
	for name := range metrics {
		out = append(out, name)
	}
	out = append(out, sloMetrics...)
	slices.Sort(out)
	return out
}

// Decider is a point's decide rule at its concurrency: at looks fixed before the point starts
// it bounds every clause's metric and stops once the SLO's verdict is known (every clause
// wholly on its passing side: meets; one wholly on its failing side: misses), or at max.
type Decider struct {
	Rule    string
	Min     int // the first look is at or past it
	Max     int
	clauses []Clause
	turn    int   // requests per turn of the slots: the concurrency
	looks   []int // prefix sizes of the looks before max
	metricN int   // clauses bounded by an interval (K)

	// Reference names the baseline a decide: baseline point decides against ("" otherwise).
	Reference string

	mu      sync.Mutex
	made    int
	decided *schema.Decision // the look that decided, nil until one did
}

// NewDecider resolves a decide spec for rule at concurrency c; slo is the cell's per-request
// slo (nil when it declares none), which slo_attainment and goodput_req_s judge requests by.
func NewDecider(a schema.AutoCount, rule string, c int, slo *schema.SLO) (*Decider, error) {
	cs, err := Clauses(rule, slo)
	if err != nil {
		return nil, fmt.Errorf("requests_per_point auto decide: %w", err)
	}
	return newDecider(a, rule, c, cs), nil
}

// newDecider is the decider of clauses cs (rule their wording) at concurrency c.
func newDecider(a schema.AutoCount, rule string, c int, cs []Clause) *Decider {
	d := &Decider{Rule: rule, Min: a.MinFor(c), Max: a.MaxFor(c), clauses: cs, turn: max(c, 1)}
	for _, cl := range cs {
		if !cl.count {
			d.metricN++
		}
	}
	for n := d.next(0); n < d.Max; n = d.next(n) {
		d.looks = append(d.looks, n)
	}
	return d
}

// next is the prefix size of the look after one at prev (prev 0: the first look): whole
// turns, the first at DecideFirstTurns turns and at or past min, each later one DecideGrowth
// times the one before.
func (d *Decider) next(prev int) int {
	if prev == 0 {
		return roundUp(max(d.Min, schema.DecideFirstTurns*d.turn, 1), d.turn)
	}
	return roundUp(max(prev+d.turn, int(math.Ceil(DecideGrowth*float64(prev)))), d.turn)
}

// Looks are the prefix sizes the decider looks at, the last being max (the whole point): the
// L looks its error is split over, fixed before the point starts.
func (d *Decider) Looks() []int { return append(slices.Clone(d.looks), d.Max) }

// SideShare is the share of Alpha each kind of wrong verdict (a wrong meets, a wrong misses)
// is nominally given. Either alone would be valid for exact bounds (only one kind can happen
// for a given truth); half each is the margin the bounds need on skewed, correlated latencies,
// whose one-sided bounds at a look's high confidence are exceeded up to 1.8 × as often as
// stated (docs/statistics.md): with the whole of Alpha a side, 6 % of the verdicts on the
// closed-loop queue's mean TTFT 0.5 % from its threshold were wrong, with half 3 %.
const SideShare = 0.5

// alphaAt is look j's share of one side's alpha: SideShare · Alpha · n_j / Σ n over the
// schedule's looks (max included), so the shares sum to SideShare · Alpha whatever look stops
// the point, and the early looks, whose few batches of skewed values bound least reliably,
// get the least.
func (d *Decider) alphaAt(j int) float64 {
	all := d.Looks()
	total := 0
	for _, n := range all {
		total += n
	}
	return SideShare * Alpha * float64(all[min(j, len(all)-1)]) / float64(total)
}

// levels are the one-sided confidences of look j's bounds: on the passing side 1 − α_j (a
// wrong "meets" needs the failing clause's bound wrong at some look), on the failing side
// 1 − α_j/K (a wrong "misses" may come from any of the K clauses).
func (d *Decider) levels(j int) (pass, fail float64) {
	a := d.alphaAt(j)
	return 1 - a, 1 - a/float64(max(d.metricN, 1))
}

// Adaptive is the load generator's side of the rule: looks at the schedule's prefixes, and
// at most a turn of requests started past an undecided look.
func (d *Decider) Adaptive() *loadgen.Adaptive {
	return &loadgen.Adaptive{
		Next: func(prev int) int {
			if prev == 0 {
				return d.next(0)
			}
			return d.next(prev)
		},
		Enough: d.Enough,
		Ahead:  d.turn,
	}
}

// Enough is one look on a completed prefix: whether the SLO's verdict is known.
func (d *Decider) Enough(prefix []schema.RequestRecord) bool {
	d.mu.Lock()
	j := d.made
	d.mu.Unlock()
	dec := d.look(prefix, j)
	d.mu.Lock()
	defer d.mu.Unlock()
	d.made++
	if dec.Known() || noValid(prefix) {
		dec.Looks = d.made
		d.decided = &dec
		return true
	}
	return false
}

// noValid reports a prefix of a few turns without any valid request: nothing will be decided
// on it, and a point of a dead server should not run to max.
func noValid(prefix []schema.RequestRecord) bool {
	for _, r := range prefix {
		if isProfiling(r) && stats.Class(r) == "" {
			return false
		}
	}
	return len(prefix) > 0
}

func isProfiling(r schema.RequestRecord) bool { return r.Phase == "" || r.Phase == phaseProfiling }

// look bounds every clause on records and reads the verdict off the bounds.
func (d *Decider) look(records []schema.RequestRecord, j int) schema.Decision {
	pass, fail := d.levels(j)
	dec := schema.Decision{Rule: d.Rule, Alpha: Alpha, MaxLooks: len(d.looks) + 1, Requests: profiling(records), Method: MethodDecide, Reference: d.Reference}
	holds, fails := 0, 0
	for _, cl := range d.clauses {
		dc := d.clause(cl, records, pass, fail)
		switch dc.Verdict {
		case schema.ClauseHolds:
			holds++
		case schema.ClauseFails:
			fails++
		}
		dec.Clauses = append(dec.Clauses, dc)
	}
	switch {
	case fails > 0:
		dec.Verdict = schema.VerdictMisses
	case holds == len(d.clauses):
		dec.Verdict = schema.VerdictMeets
	default:
		dec.Verdict = schema.VerdictUndecided
	}
	return dec
}

// clause bounds one clause on records: a count exactly, a metric by its one-sided bounds at
// pass (the side where the clause holds) and fail (the side where it fails).
func (d *Decider) clause(cl Clause, records []schema.RequestRecord, pass, fail float64) schema.DecisionClause {
	dc := schema.DecisionClause{Clause: cl.Clause, Metric: cl.Name, Op: cl.Op, Threshold: cl.Limit, Verdict: schema.ClauseUnknown, Baseline: cl.diff}
	if cl.count {
		n := 0
		for _, r := range records {
			if isProfiling(r) && stats.Class(r) != "" {
				n++
			}
		}
		dc.Value = float64(n)
		dc.Verdict = schema.ClauseFails
		if cl.Holds(float64(n)) {
			dc.Verdict = schema.ClauseHolds
		}
		return dc
	}
	var e bounds
	ok := false
	if cl.s != nil {
		e, ok = cl.s.estimate(records)
	} else {
		var est interval.Estimate
		est, ok = cl.m.estimate(records, true)
		e = fromEstimate(est)
	}
	if !ok {
		return dc
	}
	upper := cl.Op == "<" || cl.Op == "<=" // the clause holds below its limit
	loLevel, hiLevel := fail, pass
	if !upper {
		loLevel, hiLevel = pass, fail
	}
	lo, hi := e.lower(loLevel), e.upper(hiLevel)
	if cl.limitSE > 0 {
		// the limit's own error in quadrature: the bound of (value − limit) at each level
		lo = e.centre - math.Hypot(e.centre-lo, normalQuantile(loLevel)*cl.limitSE)
		hi = e.centre + math.Hypot(hi-e.centre, normalQuantile(hiLevel)*cl.limitSE)
	}
	dc.Value, dc.Lo, dc.Hi, dc.LoLevel, dc.HiLevel = e.centre, &lo, &hi, loLevel, hiLevel
	dc.Batches, dc.ESS = e.k, math.Round(e.ess*10)/10
	switch {
	case upper && cl.Holds(hi), !upper && cl.Holds(lo):
		dc.Verdict = schema.ClauseHolds
	case upper && !cl.Holds(lo), !upper && !cl.Holds(hi):
		dc.Verdict = schema.ClauseFails
	}
	return dc
}

// Stop is the point's decision once its load is over: the deciding look's, with every count
// clause read again on all the point's requests (those in flight at the look included: a
// count is exact, and an error among them fails error_count == 0); without a deciding look,
// the last look, on every request up to max, whose verdict may still be undecided.
func (d *Decider) Stop(records []schema.RequestRecord) schema.Decision {
	d.mu.Lock()
	dec, made := d.decided, d.made
	d.mu.Unlock()
	if dec == nil {
		last := d.look(records, len(d.looks))
		last.Looks = made + 1
		return last
	}
	out := *dec
	out.Clauses = slices.Clone(dec.Clauses)
	out.Requests = profiling(records)
	pass, fail := d.levels(dec.Looks - 1)
	misses := false
	for i, cl := range d.clauses {
		if cl.count {
			out.Clauses[i] = d.clause(cl, records, pass, fail)
		}
		misses = misses || out.Clauses[i].Verdict == schema.ClauseFails
	}
	if misses {
		out.Verdict = schema.VerdictMisses
	}
	return out
}

// DecisionLine words a decision for a point's summary: "decide: meets itl_avg_ms <= 50 at 95 %
// after 64 requests (1 look of ≤ 9)".
func DecisionLine(d schema.Decision) string {
	return fmt.Sprintf("decide: %s %s at %.0f %% after %d requests (%d of ≤ %d looks)",
		d.Verdict, d.Rule, 100*(1-d.Alpha), d.Requests, d.Looks, d.MaxLooks)
}
