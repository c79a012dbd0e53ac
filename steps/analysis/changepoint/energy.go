package changepoint

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"
)

// bestSplit is the split of x (the first run of its right side) that maximises Matteson and
// James's q̂ = mk/(m+k) · (2/(mk) Σ|xᵢ−yⱼ| − Σ|xᵢ−xₗ|/C(m,2) − Σ|yⱼ−yₗ|/C(k,2)), the energy
// distance between the sides scaled by their sizes, with at least minSize runs a side; -1 when
// x is too short. It costs O(n²): the within sums move by one row as the split moves.
func bestSplit(x []float64, minSize int) (int, float64) {
	n := len(x)
	if n < 2*minSize {
		return -1, 0
	}
	// total, left and right are sums of |xᵢ−xⱼ| over pairs i<j: all, both left of the split,
	// both right of it; the cross pairs are what is left.
	var total float64
	rowRight := make([]float64, n) // Σ_{j>i} |xᵢ−xⱼ|
	colLeft := make([]float64, n)  // Σ_{i<j} |xᵢ−xⱼ|
	for i := range n {
		for j := i + 1; j < n; j++ {
			d := math.Abs(x[i] - x[j])
			total += d
			rowRight[i] += d
			colLeft[j] += d
		}
	}
	left, right := 0.0, total
	best, bestQ := -1, math.Inf(-1)
	for t := 1; t < n; t++ { // split before run t: left is x[:t]
		left += colLeft[t-1]
		right -= rowRight[t-1]
		if t < minSize || n-t < minSize {
			continue
		}
		m, k := float64(t), float64(n-t)
		cross := total - left - right
		e := 2 * cross / (m * k)
		if t > 1 {
			e -= left / (m * (m - 1) / 2)
		}
		if n-t > 1 {
			e -= right / (k * (k - 1) / 2)
		}
		if q := m * k / (m + k) * e; q > bestQ {
			best, bestQ = t, q
		}
	}
	return best, bestQ
}

// permutationP is the share of shuffles of x (with the observed order counted once) whose best
// split's q̂ reaches q: under no change every order of x is as likely, so this is the p-value of
// the best split, the search over split positions included.
func permutationP(x []float64, q float64, o Options, rng *rand.Rand) float64 {
	y := append([]float64(nil), x...)
	hits := 1
	for range o.Permutations {
		rng.Shuffle(len(y), func(i, j int) { y[i], y[j] = y[j], y[i] })
		if _, qp := bestSplit(y, o.MinSize); qp >= q {
			hits++
		}
	}
	return float64(hits) / float64(o.Permutations+1)
}

// describe states the change between series[a:at] and series[at:b]: the sides' means and the
// Welch interval of their difference, each side's variance at least the mean square of its
// runs' own standard errors (a run's value carries its measurement error whatever the spread
// of its neighbours).
func describe(series []Point, a, at, b int, o Options) Change {
	m1, v1, n1 := side(series[a:at])
	m2, v2, n2 := side(series[at:b])
	c := Change{Index: at, Before: m1, After: m2, Size: m2 - m1, Conf: o.Confidence, Runs: [2]int{a, b}, Pct: math.NaN()}
	if m1 != 0 {
		c.Pct = 100 * c.Size / math.Abs(m1)
	}
	s1, s2 := v1/float64(n1), v2/float64(n2)
	se := math.Sqrt(s1 + s2)
	if se == 0 {
		c.Lo, c.Hi = c.Size, c.Size
		c.Note = "no spread on either side: the size is exact"
		return c
	}
	df := welchDF(s1, s2, n1, n2)
	tq := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(1 - (1-o.Confidence)/2)
	c.Lo, c.Hi = c.Size-tq*se, c.Size+tq*se
	return c
}

// side is a segment's mean, its variance (the sample variance, floored by the runs' mean
// squared standard error) and its length.
func side(s []Point) (mean, variance float64, n int) {
	n = len(s)
	var se2 float64
	for _, p := range s {
		mean += p.Value
		se2 += p.SE * p.SE
	}
	mean /= float64(n)
	se2 /= float64(n)
	if n > 1 {
		for _, p := range s {
			variance += (p.Value - mean) * (p.Value - mean)
		}
		variance /= float64(n - 1)
	}
	return mean, math.Max(variance, se2), n
}

// welchDF is the Welch–Satterthwaite degrees of freedom of a difference of two means whose
// squared standard errors are s1 and s2; a side of one run contributes as if of two.
func welchDF(s1, s2 float64, n1, n2 int) float64 {
	d1, d2 := float64(max(n1-1, 1)), float64(max(n2-1, 1))
	den := s1*s1/d1 + s2*s2/d2
	if den == 0 {
		return 1
	}
	return (s1 + s2) * (s1 + s2) / den
}

// excludesZero reports whether the change's interval leaves out no change at all.
func (c Change) excludesZero() bool { return c.Lo > 0 || c.Hi < 0 }
