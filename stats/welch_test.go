package stats

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// TestWelchLog checks the test on samples whose logarithms are 1, 2, 3
// and 2, 3, 4: means 2 and 3, variances 1, so t = −1/√(2/3) with 4
// degrees of freedom, whose two-sided p has a closed form; the ratio of
// geometric means is e^−1 and its 95% interval e^(−1 ± t₀.₉₇₅,₄·√(2/3)),
// t₀.₉₇₅,₄ = 2.776445 (R: t.test(1:3, 2:4) gives [−3.266958, 1.266958]).
func TestWelchLog(t *testing.T) {
	exps := func(xs ...float64) []float64 {
		out := make([]float64, len(xs))
		for i, x := range xs {
			out[i] = math.Exp(x)
		}
		return out
	}
	tt := 1 / math.Sqrt(2.0/3)
	s := math.Sqrt(1 + tt*tt/4)
	p := 1 - 0.75*(tt/s)*(1-tt*tt/(12*s*s)) // 2·P(T₄ > |t|)
	half := 2.776445105 * math.Sqrt(2.0/3)
	nan := math.NaN()
	for _, tc := range []struct {
		name             string
		a, b             []float64
		p, ratio, lo, hi float64
		why              string
	}{
		{name: "known", a: exps(1, 2, 3), b: exps(2, 3, 4), p: p, ratio: math.Exp(-1), lo: math.Exp(-1 - half), hi: math.Exp(-1 + half)},
		{name: "swapped", a: exps(2, 3, 4), b: exps(1, 2, 3), p: p, ratio: math.Exp(1), lo: math.Exp(1 - half), hi: math.Exp(1 + half)},
		{name: "too few", a: []float64{1}, b: []float64{1, 2}, p: nan, ratio: nan, lo: nan, hi: nan, why: "n=1+2, too few for a test"},
		{name: "a zero", a: []float64{0, 1}, b: []float64{1, 2}, p: nan, ratio: nan, lo: nan, hi: nan, why: "a value of 0, no test on logarithms"},
		{name: "identical", a: []float64{2, 2, 2}, b: []float64{2, 2, 2}, p: nan, ratio: nan, lo: nan, hi: nan, why: "identical repetitions, no test"},
		{name: "no variance", a: []float64{2, 2, 2}, b: []float64{3, 3, 3}, p: nan, ratio: nan, lo: nan, hi: nan, why: "no test: sample has zero variance"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := slices.Clone(tc.a)
			w := WelchLog(a, tc.b, 0.95)
			if !slices.Equal(a, tc.a) {
				t.Errorf("WelchLog modified its input")
			}
			// The quantile is found by bisection: 1e-6 is its precision
			// here, not the test's.
			close := func(got, want float64) bool {
				return (math.IsNaN(got) && math.IsNaN(want)) || math.Abs(got-want) <= 1e-6*math.Max(1, math.Abs(want))
			}
			if !close(w.P, tc.p) || !close(w.Ratio, tc.ratio) || !close(w.Lo, tc.lo) || !close(w.Hi, tc.hi) || w.Why != tc.why {
				t.Errorf("WelchLog = %+v; want p %.9g ratio %.9g [%.9g, %.9g] why %q", w, tc.p, tc.ratio, tc.lo, tc.hi, tc.why)
			}
			if !math.IsNaN(tc.p) && w.Level != 0.95 {
				t.Errorf("level %g, want 0.95", w.Level)
			}
			if math.IsNaN(tc.p) && !strings.Contains(w.Why, "test") {
				t.Errorf("no test without a reason: %+v", w)
			}
		})
	}
}
