package interval

import "math"

// tQuantile returns the p-quantile (0.5 < p < 1) of Student's t with df degrees of freedom,
// by bisection on the exact distribution function (regularized incomplete beta), so the
// intervals need no table and no statistics dependency.
func tQuantile(p float64, df int) float64 {
	if df < 1 || p <= 0.5 || p >= 1 {
		return math.NaN()
	}
	lo, hi := 0.0, 1.0
	for tCDF(hi, df) < p {
		lo, hi = hi, hi*2
	}
	for range 200 {
		mid := (lo + hi) / 2
		if tCDF(mid, df) < p {
			lo = mid
		} else {
			hi = mid
		}
		if hi-lo <= 1e-12*hi {
			break
		}
	}
	return (lo + hi) / 2
}

// tCDF is P(T ≤ t) for t ≥ 0 and Student's t with df degrees of freedom:
// 1 − ½·I_{df/(df+t²)}(df/2, ½).
func tCDF(t float64, df int) float64 {
	v := float64(df)
	return 1 - 0.5*regIncBeta(v/2, 0.5, v/(v+t*t))
}

// regIncBeta is the regularized incomplete beta function I_x(a, b), by the continued fraction
// of Numerical Recipes (modified Lentz), using the symmetry I_x(a,b) = 1 − I_{1−x}(b,a) where
// the fraction converges slowly.
func regIncBeta(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	front := math.Exp(lab - la - lb + a*math.Log(x) + b*math.Log1p(-x))
	if x < (a+1)/(a+b+2) {
		return front * betaCF(a, b, x) / a
	}
	return 1 - front*betaCF(b, a, 1-x)/b
}

// betaCF evaluates the continued fraction of the incomplete beta function.
func betaCF(a, b, x float64) float64 {
	const tiny, eps = 1e-300, 1e-15
	qab, qap, qam := a+b, a+1, a-1
	c, d := 1.0, 1-qab*x/qap
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	for m := 1; m <= 1000; m++ {
		fm := float64(m)
		m2 := 2 * fm
		d, c = lentz(fm*(b-fm)*x/((qam+m2)*(a+m2)), d, c)
		h *= d * c
		d, c = lentz(-(a+fm)*(qab+fm)*x/((a+m2)*(qap+m2)), d, c)
		del := d * c
		h *= del
		if math.Abs(del-1) < eps {
			break
		}
	}
	return h
}

// lentz is one step of the modified Lentz method for a continued fraction term aa: the new
// reciprocal d and ratio c, kept away from zero.
func lentz(aa, d, c float64) (float64, float64) {
	const tiny = 1e-300
	d = 1 + aa*d
	if math.Abs(d) < tiny {
		d = tiny
	}
	c = 1 + aa/c
	if math.Abs(c) < tiny {
		c = tiny
	}
	return 1 / d, c
}
