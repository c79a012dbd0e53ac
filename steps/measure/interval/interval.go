// Package interval makes the 95 % confidence intervals of a point's headline metrics from its
// per-request values in request start order: batch means for means and ratios, sectioning for
// quantiles, both with Student-t on the batches, so autocorrelated, skewed latencies are not
// given the too-narrow interval an iid normal formula would (docs/statistics.md). Batches are
// as long as the series' own correlation asks (Tau), and the same estimates give the one-sided
// bounds a stopping rule decides on (Estimate, Decide).
package interval

import (
	"math"
	"slices"
)

// Level is the two-sided confidence of every interval the package makes.
const Level = 0.95

// Methods as recorded in schema.Interval.Method.
const (
	MethodBatchMeans = "batch-means"
	MethodSectioning = "sectioning"
)

// Batch counts. Fewer, longer batches are nearly independent even when neighbouring requests
// are correlated (a queue stays slow for a while); ten is the fewest that keeps t_{k−1}
// moderate (2.26 against 1.96). k grows past ten only once each batch holds BatchTarget
// values, up to twenty: on the bursty test series, 20 batches of 200 under-covered (91 %)
// where 10 of 400 covered (93 %), and the extra batches only narrow t from 2.26 to 2.09.
const (
	MinBatches = 10
	MaxBatches = 20
	// BatchTarget is the batch length beyond which more batches are used: k = n / BatchTarget
	// clamped to [MinBatches, MaxBatches].
	BatchTarget = 400
	// MinSamples is the fewest values Mean and Ratio accept: MinBatches batches of 10. It is
	// a floor, not a guarantee: batches must also span several autocorrelation times.
	MinSamples = 100
	// TailPerBatch is how many values each batch must hold beyond the quantile (on the
	// shorter side, m·min(q, 1−q)), so p50 needs 200 values and p95 2,000: with 5 per batch
	// the p95 interval covered 92.9 % on iid and AR(1) data, with 10 it covers 94 %.
	TailPerBatch = 10
)

// Batch lengths from the data's own correlation: a batch holds at least BatchTaus integrated
// autocorrelation times (Tau) of its series, once the series is TrustTaus times its estimated
// Tau long. Geyer's estimate runs low and noisy on a series only a few τ long (on AR(1) data
// with τ = 19 it averages 12 over 100 values, 19 over 1,000), and trusting it early selects
// the samples whose correlation happens to look short: on the closed-loop queue below, with
// trust from 50 τ, the intervals made from 40 × the requests in flight covered 71–87 %.
// Where it cannot be trusted, a batch holds InflightFactor × the requests in flight, the
// floor made before the data could say.
const (
	BatchTaus = 5
	TrustTaus = 200
)

// InflightFactor is how many times the mean number of requests in flight a batch must hold
// when the series' correlation cannot be estimated: on a simulated closed loop with a
// saturated FIFO prefill queue (docs/statistics.md), batches of two in-flight turns covered
// the mean TTFT 92.6 %, of eight 93–95 %.
const InflightFactor = 8

// DecideMinBatches is the fewest batches a decision's look bounds a metric on: two, whose
// t_1 quantile at a look's confidence (over 100 at 99.7 %) is the honest price of so little.
const DecideMinBatches = 2

// Batches returns how many batches n values are cut into for a mean or a ratio (0 when n is
// below MinSamples): long batches first, more of them only once each holds BatchTarget values.
// It is the most a series of n values gets; its own correlation may lower it (Mean).
func Batches(n int) int { return Batching{}.Batches(n) }

// QuantileBatches returns the most batches used for the q-quantile of n values (0 when fewer
// than MinBatches batches could each hold TailPerBatch values beyond the quantile).
func QuantileBatches(n int, q float64) int { return Batching{}.QuantileBatches(n, q) }

// Batching cuts a series of requests into batches. Batches hold BatchTaus autocorrelation
// times of the series once its length trusts the estimate; otherwise For(inflight) keeps
// every batch at least InflightFactor × inflight requests long, because requests in flight
// together share the server's state and are correlated, and the zero value (no in-flight
// count known) leaves them at n / k. Decide(inflight) is the batching of a stopping rule's
// looks: as few as DecideMinBatches, their cost paid in t_{k−1}.
type Batching struct {
	inflight float64
	decide   bool
}

// For returns the batching for requests with inflight of them in flight on average (Little's
// law: Σ latency / window; the concurrency of a closed loop).
func For(inflight float64) Batching { return Batching{inflight: inflight} }

// Decide returns the batching of a decision's looks: DecideMinBatches to MaxBatches batches,
// no MinSamples, and a series without spread bounded exactly from two values on; batch
// lengths as For's.
func Decide(inflight float64) Batching { return Batching{inflight: inflight, decide: true} }

// Batches is the most batches n values get when their correlation cannot be trusted: the
// package's Batches lowered so each batch holds InflightFactor × inflight requests; 0 when
// that leaves fewer than the minimum.
func (b Batching) Batches(n int) int { return b.count(n, math.Inf(1)) }

// LongEnough reports whether n requests with inflight of them in flight on average can be
// cut into at least MinBatches batches of InflightFactor × inflight requests, so they have an
// interval whatever their correlation.
func LongEnough(n int, inflight float64) bool { return For(inflight).Batches(n) > 0 }

// QuantileBatches is Batches lowered so each batch holds TailPerBatch values beyond q.
func (b Batching) QuantileBatches(n int, q float64) int {
	return b.quantileCount(n, q, math.Inf(1))
}

// Trusted reports whether n values estimate their autocorrelation time tau well enough to
// size batches from it.
func Trusted(n int, tau float64) bool { return float64(n) >= TrustTaus*tau }

// count is the batches n values whose autocorrelation time is estimated at tau are cut into.
func (b Batching) count(n int, tau float64) int {
	k := min(max(n/BatchTarget, MinBatches), MaxBatches)
	switch {
	case b.decide:
		k = MaxBatches
	case n < MinSamples:
		return 0
	}
	switch {
	case Trusted(n, tau):
		k = min(k, int(float64(n)/math.Ceil(BatchTaus*tau)))
	case b.inflight > 0:
		k = min(k, int(math.Floor(float64(n)/(InflightFactor*b.inflight))))
	case b.decide:
		return 0 // a look with neither a trusted estimate nor an in-flight count has no batch length
	}
	if k < b.minBatches() {
		return 0
	}
	return k
}

// quantileCount is count lowered so each batch holds TailPerBatch values beyond q.
func (b Batching) quantileCount(n int, q, tau float64) int {
	k := b.count(n, tau)
	tail := min(q, 1-q)
	if k == 0 || tail <= 0 {
		return 0
	}
	k = min(k, int(float64(n)*tail/TailPerBatch+1e-9)) // 1 − 0.9 is 0.0999…
	if k < b.minBatches() {
		return 0
	}
	return k
}

func (b Batching) minBatches() int {
	if b.decide {
		return DecideMinBatches
	}
	return MinBatches
}

// bounds returns the [lo, hi) index range of batch j of k over n values, sizes differing by
// at most one.
func bounds(n, k, j int) (int, int) { return j * n / k, (j + 1) * n / k }

// sorted returns a sorted copy of xs.
func sorted(xs []float64) []float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s
}

// SortedQuantile is the q-quantile (0 < q < 1) of sorted values s with linear interpolation
// between closest ranks (rank q·(n−1), numpy's default and stats.Percentile's), the estimate
// every interval of a quantile is centred on.
func SortedQuantile(s []float64, q float64) float64 {
	rank := q * float64(len(s)-1)
	lo := int(math.Floor(rank))
	hi := min(lo+1, len(s)-1)
	return s[lo] + (s[hi]-s[lo])*(rank-float64(lo))
}

func sum(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s
}

func mean(xs []float64) float64 { return sum(xs) / float64(len(xs)) }

func finite(xs []float64) bool {
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}
