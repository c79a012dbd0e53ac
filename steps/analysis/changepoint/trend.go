package changepoint

import "math"

// refineTrends moves the first change of each run of same-direction changes (a drift the
// segmentation cut into steps) to where a trend that starts there fits the runs best: for a
// series that climbs a little every night, E-divisive puts its first cut where the climb has
// become large, not where it began. The cut moves only when a hinge (flat, then a straight
// line from the cut) fits the runs from the previous change to the end of the drift better
// than the steps do.
func refineTrends(x []float64, cuts []int, minSize int) {
	// cuts holds 0, the changes in order, and len(x).
	for i := 1; i+1 < len(cuts); {
		dir := sign(mean(x[cuts[i]:cuts[i+1]]) - mean(x[cuts[i-1]:cuts[i]]))
		j := i
		for j+2 < len(cuts) && sign(mean(x[cuts[j+1]:cuts[j+2]])-mean(x[cuts[j]:cuts[j+1]])) == dir {
			j++
		}
		{ // changes i..j go one way: a drift, or one step
			a, b := cuts[i-1], cuts[j+1]
			steps := stepsSSE(x, cuts[i-1:j+2])
			lo := a + minSize
			if i > 1 {
				lo = max(lo, cuts[i-1]+minSize)
			}
			bestK, best := cuts[i], steps
			for k := lo; k <= cuts[i]; k++ {
				if s := hingeSSE(x[a:b], k-a); s < best {
					bestK, best = k, s
				}
			}
			cuts[i] = bestK
		}
		i = j + 1
	}
}

func sign(v float64) int {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}

func mean(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// stepsSSE is the squared error of x[cuts[0]:cuts[last]] about each segment's mean.
func stepsSSE(x []float64, cuts []int) float64 {
	var s float64
	for i := 0; i+1 < len(cuts); i++ {
		seg := x[cuts[i]:cuts[i+1]]
		m := mean(seg)
		for _, v := range seg {
			s += (v - m) * (v - m)
		}
	}
	return s
}

// hingeSSE is the least-squares error of y = α + β·max(0, t−k+1) over x (t from 0): flat up to
// run k−1, then a line.
func hingeSSE(x []float64, k int) float64 {
	n := float64(len(x))
	var su, sy, suu, suy float64
	for t, y := range x {
		u := math.Max(0, float64(t-k+1))
		su += u
		sy += y
		suu += u * u
		suy += u * y
	}
	den := n*suu - su*su
	if den == 0 {
		return math.Inf(1)
	}
	beta := (n*suy - su*sy) / den
	alpha := (sy - beta*su) / n
	var s float64
	for t, y := range x {
		r := y - alpha - beta*math.Max(0, float64(t-k+1))
		s += r * r
	}
	return s
}
