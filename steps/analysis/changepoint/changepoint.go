// Package changepoint finds the runs where a metric's series over scheduled runs shifts, so a
// slow drift is caught as a change in the series instead of waiting for one night to break a
// tolerance against a fixed baseline.
//
// Method: E-divisive with means (Matteson and James, "A Nonparametric Approach for Multiple
// Change Point Analysis of Multivariate Data", JASA 2014; the family Apache Otava and MongoDB's
// performance CI use), hierarchical: the split of a segment that maximises the energy
// divergence between its two sides is a candidate; a permutation test (the same statistic on
// shuffled copies of the segment) says whether a split that large is unlikely when the segment
// has no change; a significant split is kept when the interval of its size (the difference of
// the two sides' means, Welch with each run's own measurement error as a floor on its side's
// variance) excludes zero, and each side is searched again. Assumptions: runs are independent
// given the level (no carry-over from one night into the next), and the noise of a segment
// without a change is exchangeable; the runs' own intervals state their measurement error.
package changepoint

import (
	"math/rand/v2"
	"slices"
)

// Point is one run's value of a metric with its standard error (0 when the run stated no
// interval): the error keeps a shift smaller than the runs' own noise from being reported.
type Point struct {
	Value float64
	SE    float64
}

// Options tune a detection; the zero value takes the defaults below.
type Options struct {
	Alpha        float64 // a split's permutation p-value must be below it (default 0.01)
	Permutations int     // shuffles per permutation test (default 199)
	MinSize      int     // fewest runs on either side of a change (default 3)
	Confidence   float64 // of the size's interval (default 0.95)
	Seed         uint64  // of the shuffles, so a series gives the same answer every time
}

// Defaults of Options.
const (
	DefaultAlpha        = 0.01
	DefaultPermutations = 199
	DefaultMinSize      = 3
	DefaultConfidence   = 0.95
)

func (o Options) withDefaults() Options {
	if o.Alpha <= 0 {
		o.Alpha = DefaultAlpha
	}
	if o.Permutations <= 0 {
		o.Permutations = DefaultPermutations
	}
	if o.MinSize < 1 {
		o.MinSize = DefaultMinSize
	}
	if o.Confidence <= 0 || o.Confidence >= 1 {
		o.Confidence = DefaultConfidence
	}
	return o
}

// Change is one shift: the series' level moves at run Index (the first run of the new level).
type Change struct {
	Index  int     `json:"index"`          // first run after the change
	Before float64 `json:"before"`         // mean of the runs from the previous change (or the start) to Index
	After  float64 `json:"after"`          // mean of the runs from Index to the next change (or the end)
	Size   float64 `json:"size"`           // After − Before
	Lo     float64 `json:"lo"`             // the size's interval
	Hi     float64 `json:"hi"`             //
	Pct    float64 `json:"pct"`            // Size as a percentage of Before (NaN when Before is 0)
	P      float64 `json:"p"`              // the split's permutation p-value when it was found
	Conf   float64 `json:"confidence"`     // of [Lo, Hi]
	Note   string  `json:"note,omitempty"` // what limits the interval, when something does
	Runs   [2]int  `json:"runs,omitempty"` // the runs compared: [Index − len(before), Index + len(after))
}

// Detect returns the series' changes in run order. Non-finite values are not allowed (the
// caller leaves a run without the metric out, keeping its own index map).
func Detect(series []Point, o Options) []Change {
	o = o.withDefaults()
	n := len(series)
	if n < 2*o.MinSize {
		return nil
	}
	x := make([]float64, n)
	for i, p := range series {
		x[i] = p.Value
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x9e3779b97f4a7c15))
	cuts, pOf := []int{0, n}, map[int]float64{}
	// split segments until none holds a significant change; each pass tests every segment
	// and keeps the most significant split (E-divisive's order: one change at a time).
	for {
		best, bestP, bestQ, bestAt := -1, 2.0, 0.0, 0
		for s := 0; s+1 < len(cuts); s++ {
			a, b := cuts[s], cuts[s+1]
			at, q := bestSplit(x[a:b], o.MinSize)
			if at < 0 {
				continue
			}
			p := permutationP(x[a:b], q, o, rng)
			if p >= o.Alpha {
				continue
			}
			if c := describe(series, a, a+at, b, o); !c.excludesZero() {
				continue
			}
			if p < bestP || p == bestP && q > bestQ {
				best, bestP, bestQ, bestAt = s, p, q, a+at
			}
		}
		if best < 0 {
			break
		}
		cuts = append(cuts, bestAt)
		slices.Sort(cuts)
		pOf[bestAt] = bestP
	}
	before := append([]int(nil), cuts...)
	refineTrends(x, cuts, o.MinSize)
	for i, c := range cuts {
		if c != before[i] {
			pOf[c] = pOf[before[i]]
		}
	}
	out := make([]Change, 0, len(cuts)-2)
	for i := 1; i+1 < len(cuts); i++ {
		c := describe(series, cuts[i-1], cuts[i], cuts[i+1], o)
		c.P = pOf[cuts[i]]
		out = append(out, c)
	}
	return out
}
