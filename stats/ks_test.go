package stats

import (
	"math"
	"slices"
	"testing"
)

// TestKSExp checks the distance against values computed by hand and the
// p-value against the Kolmogorov distribution's known quantiles.
func TestKSExp(t *testing.T) {
	// The exponential's own quantiles at (i−½)/n: the empirical CDF
	// steps around the true one by ½/n either side.
	const n = 200
	quantiles := make([]float64, n)
	for i := range quantiles {
		quantiles[i] = -math.Log(1 - (float64(i)+0.5)/n)
	}
	for _, tc := range []struct {
		name  string
		xs    []float64
		c     float64
		d     float64
		pLow  float64 // p must be at least this
		pHigh float64 // and at most this
	}{
		{name: "the exponential's quantiles", xs: quantiles, d: 0.5 / n, pLow: 0.999, pHigh: 1},
		{name: "one value at the median", xs: []float64{math.Ln2}, d: 0.5, pLow: 0, pHigh: 1},
		// All at the clamp c = 1: the atom holds F(1), the step to 1 is
		// the rest, e^-1.
		{name: "all at the clamp", xs: []float64{1, 1, 1, 1}, c: 1, d: math.Exp(-1), pLow: 0, pHigh: 1},
		// Uniform on [0, 0.1]: far from any exponential of mean 1.
		{name: "far off", xs: []float64{0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07, 0.08, 0.09, 0.1}, d: 1 - (1 - math.Exp(-0.1)), pLow: 0, pHigh: 1e-6},
		{name: "empty", xs: nil, d: 0, pLow: 1, pHigh: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			xs := slices.Clone(tc.xs)
			d, p := KSExp(xs, tc.c)
			if !near(d, tc.d) || p < tc.pLow || p > tc.pHigh {
				t.Errorf("KSExp = %.12g, p %.3g; want %.12g, p in [%g, %g]", d, p, tc.d, tc.pLow, tc.pHigh)
			}
			if !slices.IsSorted(xs) {
				t.Errorf("KSExp left xs unsorted: %v", xs)
			}
		})
	}
}

// TestKolmogorovQ checks the tail at the Kolmogorov distribution's
// tabulated critical values: P(K > 1.3581) = 0.05, P(K > 1.6276) = 0.01.
func TestKolmogorovQ(t *testing.T) {
	for _, tc := range []struct {
		name string
		l, q float64
	}{
		{name: "5%", l: 1.3581, q: 0.05},
		{name: "1%", l: 1.6276, q: 0.01},
		{name: "0", l: 0, q: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := kolmogorovQ(tc.l); math.Abs(got-tc.q) > 1e-4 {
				t.Errorf("kolmogorovQ(%g) = %.6f, want %g", tc.l, got, tc.q)
			}
		})
	}
}
