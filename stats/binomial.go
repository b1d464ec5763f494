package stats

import "math"

// ClopperPearson returns the exact (Clopper–Pearson) two-sided confidence
// interval at level conf of a binomial proportion with k successes in n
// trials, 0 ≤ k ≤ n: the bounds p at which observing k or more (lo), or k
// or fewer (hi), has probability (1−conf)/2. It is the interval of the
// gate's measured error rates (concbench gaterate). With n = 0 it is
// [0, 1].
func ClopperPearson(k, n int, conf float64) (lo, hi float64) {
	if n == 0 {
		return 0, 1
	}
	alpha := 1 - conf
	// lo: P(X ≥ k | p) = alpha/2; hi: P(X ≤ k | p) = alpha/2.
	if k > 0 {
		lo = bisect(func(p float64) float64 { return 1 - binomCDF(k-1, n, p) - alpha/2 })
	}
	hi = 1.0
	if k < n {
		hi = bisect(func(p float64) float64 { return alpha/2 - binomCDF(k, n, p) })
	}
	return lo, hi
}

// bisect finds the root of an increasing f on [0, 1].
func bisect(f func(float64) float64) float64 {
	a, b := 0.0, 1.0
	for range 100 {
		m := (a + b) / 2
		if f(m) < 0 {
			a = m
		} else {
			b = m
		}
	}
	return (a + b) / 2
}

// binomCDF returns P(X ≤ k) for X ~ Binomial(n, p).
func binomCDF(k, n int, p float64) float64 {
	if k < 0 {
		return 0
	}
	if k >= n {
		return 1
	}
	s := 0.0
	for i := 0; i <= k; i++ {
		lg := lgamma(n+1) - lgamma(i+1) - lgamma(n-i+1)
		s += math.Exp(lg + float64(i)*math.Log(p) + float64(n-i)*math.Log1p(-p))
	}
	return math.Min(s, 1)
}

func lgamma(x int) float64 {
	v, _ := math.Lgamma(float64(x))
	return v
}
