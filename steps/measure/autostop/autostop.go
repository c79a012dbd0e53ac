// Package autostop is the stopping rule of requests_per_point auto: it tells the load
// generator when a point has measured enough requests for the 95 % interval of one metric to
// be within the asked relative half-width, and records why the point stopped.
//
// The rule looks only at batch boundaries, on the completed prefix of requests in issue
// order; the first look waits for the fewest requests the metric's interval is made from
// (interval.MinSamples, or the sectioning minimum of a percentile) and for min, and looks
// grow at least 25 % apart, so a point of 100,000 requests makes about 28 looks, not 10,000.
// Looking repeatedly and stopping on a narrow interval is a sequential procedure: stopping
// on the very interval it reports would favour intervals that are narrow by chance (with the
// 10 to 20 batches of the interval package, 87 % coverage instead of 95 %). So the rule
// decides on consistent batch means (⌊√n⌋ batches, valid for fixed-width stopping: Jones,
// Haran, Caffo and Neath, JASA 2006) with an upper bound on the half-width, and reports the
// interval package's interval over all the point's requests. Its coverage, stopping
// included, is measured in this package's tests (docs/measurement.md, "Enough requests (auto)").
package autostop

import (
	"fmt"
	"math"
	"sync"

	"github.com/perfdag/perfdag/schema"
	"github.com/perfdag/perfdag/steps/measure/loadgen"
)

// Reasons a point stopped, as AutoStop.Reason records them.
const (
	ReasonPrecision = "precision reached"
	ReasonMax       = "max requests"
	ReasonNoValues  = "max requests, too few valid requests for an interval"
)

// Growth is the least a look's prefix grows over the previous look's (25 %): fewer looks
// give a narrow-by-chance interval fewer chances to stop the point.
const Growth = 0.25

// Rule is one point's auto spec resolved at its concurrency.
type Rule struct {
	Metric string
	RelCI  float64
	Min    int // fewest requests before the first look can stop
	Max    int // the most the point sends
	Batch  int // requests between looks at least: max(concurrency, 10)
	m      metric
	need   int // valid requests the metric's interval needs at this concurrency

	mu      sync.Mutex
	looks   int
	reached bool
}

// New resolves an auto spec at concurrency c.
func New(a schema.AutoCount, c int) (*Rule, error) {
	m, ok := metrics[a.Metric]
	if !ok {
		return nil, fmt.Errorf("requests_per_point auto: metric %q has no per-request interval", a.Metric)
	}
	if !(a.RelCI > 0 && a.RelCI < 1) {
		return nil, fmt.Errorf("requests_per_point auto: rel_ci = %v: want a fraction between 0 and 1", a.RelCI)
	}
	return &Rule{Metric: a.Metric, RelCI: a.RelCI, Min: a.MinFor(c), Max: a.MaxFor(c), Batch: max(c, 10), m: m, need: m.need(float64(c))}, nil
}

// Need is the fewest valid requests from which metric has an interval at concurrency c (a
// closed loop holds c in flight; batches hold interval.InflightFactor × that), 0 for an
// unknown metric.
func Need(metricName string, c int) int {
	m, ok := metrics[metricName]
	if !ok {
		return 0
	}
	return m.need(float64(c))
}

// Adaptive is the load generator's side of the rule; concurrency sets how far requests may
// run ahead of a look still being made.
func (r *Rule) Adaptive(concurrency int) *loadgen.Adaptive {
	return &loadgen.Adaptive{Next: r.Next, Enough: r.Enough, Ahead: max(4*concurrency, r.Batch)}
}

// Next is the prefix size of the look after one at prev (prev 0: the first look): batch
// boundaries, the first at or past both min and the metric's minimum, each later one at least
// Growth past the previous.
func (r *Rule) Next(prev int) int {
	if prev == 0 {
		return roundUp(max(r.Min, r.need, 1), r.Batch)
	}
	return prev + roundUp(max(r.Batch, int(math.Ceil(Growth*float64(prev)))), r.Batch)
}

func roundUp(n, b int) int { return (n + b - 1) / b * b }

// Enough is one look: whether the requests so far (a completed prefix in issue order) bound
// the metric within rel_ci. It decides on the consistent-batches interval (⌊√n⌋ batches,
// whose half-width's noise shrinks as n grows) and asks that even its half-width's upper
// one-sigma bound, × (1 + 1/√(2(k−1))), meets rel_ci: a look that merely happened to
// under-estimate the spread does not stop the point.
func (r *Rule) Enough(prefix []schema.RequestRecord) bool {
	iv, ok := r.m.consistent(prefix)
	enough := ok && len(prefix) >= r.Min && relative(iv)*(1+1/math.Sqrt(2*float64(iv.N-1))) <= r.RelCI
	r.mu.Lock()
	defer r.mu.Unlock()
	r.looks++
	r.reached = r.reached || enough
	return enough
}

// Stop is the point's record of the rule once its load is over: the interval of the metric
// over every request the point sent (those in flight at the stopping look included), made
// by the interval package as every point's intervals are (not the stopping rule's own, which
// was selected for being narrow), and why it stopped. ok is false when the point has too
// few valid requests for an interval.
func (r *Rule) Stop(records []schema.RequestRecord) (schema.AutoStop, schema.Interval, bool) {
	r.mu.Lock()
	looks, reached := r.looks, r.reached
	r.mu.Unlock()
	st := schema.AutoStop{Metric: r.Metric, RelCI: r.RelCI, Batches: looks, Requests: profiling(records), Reason: ReasonMax}
	if reached {
		st.Reason = ReasonPrecision
	}
	iv, ok := r.m.interval(records)
	if !ok {
		if !reached {
			st.Reason = ReasonNoValues
		}
		return st, schema.Interval{}, false
	}
	st.Achieved = Achieved(iv)
	return st, iv, true
}

// Achieved is an interval's half-width over the magnitude of its centre, what AutoStop
// records (0 when the centre is 0 and the ratio has no value).
func Achieved(iv schema.Interval) float64 {
	if rel := relative(iv); !math.IsInf(rel, 0) {
		return rel
	}
	return 0
}

// relative is an interval's half-width over the magnitude of its centre (+Inf at 0).
func relative(iv schema.Interval) float64 {
	c := math.Abs(iv.Lo+iv.Hi) / 2
	if c == 0 {
		return math.Inf(1)
	}
	return iv.HalfWidth() / c
}

func profiling(records []schema.RequestRecord) int {
	n := 0
	for _, r := range records {
		if r.Phase == "" || r.Phase == phaseProfiling {
			n++
		}
	}
	return n
}

// Line words the stop for a point's summary: "auto: stopped at 640 requests, ±1.8 % (precision reached)".
func Line(st schema.AutoStop) string {
	if st.Achieved == 0 {
		return fmt.Sprintf("auto: stopped at %d requests (%s)", st.Requests, st.Reason)
	}
	return fmt.Sprintf("auto: stopped at %d requests, ±%.1f %% (%s)", st.Requests, 100*st.Achieved, st.Reason)
}
