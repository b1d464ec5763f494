package stats

import (
	"math"
	"slices"
)

// KSExp returns the Kolmogorov–Smirnov distance between the sample xs and
// the exponential distribution with mean 1 whose values below c are moved
// to c (the distribution of max(X, c); c = 0: the plain exponential), and
// the test's p-value (Stephens' approximation of the Kolmogorov
// distribution, good for n ≥ 5; with the atom at c it is conservative).
// The load generator tests its send gaps, in units of the mean gap and
// clamped at its clock's resolution c, with it; callers clamp their
// sample at c alike. xs is sorted in place: it is the caller's scratch,
// and a copy of thousands of gaps per check would buy nothing. An empty
// xs gives 0 and 1.
func KSExp(xs []float64, c float64) (d, p float64) {
	n := len(xs)
	if n == 0 {
		return 0, 1
	}
	slices.Sort(xs)
	cdf := func(x float64) float64 {
		if x < c {
			return 0
		}
		return 1 - math.Exp(-max(x, 0))
	}
	for i, x := range xs {
		below := 0.0 // the CDF just below x
		if x > c {
			below = cdf(x)
		}
		d = max(d, float64(i+1)/float64(n)-cdf(x), below-float64(i)/float64(n))
	}
	sn := math.Sqrt(float64(n))
	return d, kolmogorovQ((sn + 0.12 + 0.11/sn) * d)
}

// kolmogorovQ is the Kolmogorov distribution's tail, P(K > l).
func kolmogorovQ(l float64) float64 {
	if l < 1e-3 {
		return 1
	}
	var sum, sign float64 = 0, 1
	for k := 1; k <= 100; k++ {
		term := sign * math.Exp(-2*float64(k*k)*l*l)
		sum += term
		if math.Abs(term) < 1e-12 {
			break
		}
		sign = -sign
	}
	return min(max(2*sum, 0), 1)
}
