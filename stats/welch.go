package stats

import (
	"fmt"
	"math"
	"slices"

	moremath "github.com/aclements/go-moremath/stats"
)

// Welch is the outcome of Welch's t-test on the logarithms of two samples
// (WelchLog).
type Welch struct {
	// P is the two-sided p-value; NaN when there is no test.
	P float64
	// Ratio is the ratio of the samples' geometric means, a over b
	// (exp of the difference of the mean logarithms); Lo and Hi bound its
	// confidence interval at level Level (Welch's, with the
	// Welch–Satterthwaite degrees of freedom). All are NaN when there is
	// no test.
	Ratio, Lo, Hi, Level float64
	// Why says why there is no test when P is NaN, as the report words
	// it.
	Why string
}

// WelchLog is the two-sided Welch t-test of a against b on the
// logarithms of their values, with the ratio of geometric means and its
// interval at level conf. On logarithms because the report's metrics
// differ by factors (a ratio of capacities, of latencies), which become
// shifts there, and their spread grows with their size. There is no test
// (P NaN, Why saying so) with fewer than 2 values a side, a value ≤ 0, or
// no variance in either. It does not modify a or b.
func WelchLog(a, b []float64, conf float64) Welch {
	nan := math.NaN()
	w := Welch{P: nan, Ratio: nan, Lo: nan, Hi: nan, Level: nan}
	if len(a) < 2 || len(b) < 2 {
		w.Why = fmt.Sprintf("n=%d+%d, too few for a test", len(a), len(b))
		return w
	}
	logs := func(xs []float64) ([]float64, bool) {
		out := make([]float64, len(xs))
		for i, x := range xs {
			if !(x > 0) {
				return nil, false
			}
			out[i] = math.Log(x)
		}
		return out, true
	}
	la, ok1 := logs(a)
	lb, ok2 := logs(b)
	if !ok1 || !ok2 {
		w.Why = "a value of 0, no test on logarithms"
		return w
	}
	sa, sb := moremath.Sample{Xs: la}, moremath.Sample{Xs: lb}
	res, err := moremath.TwoSampleWelchTTest(sa, sb, moremath.LocationDiffers)
	if err != nil || math.IsNaN(res.P) {
		if slices.Equal(la, lb) || err == nil {
			w.Why = "identical repetitions, no test"
		} else {
			w.Why = "no test: " + err.Error()
		}
		return w
	}
	w.P = res.P
	diff := sa.Mean() - sb.Mean()
	se := math.Sqrt(sa.Variance()/float64(len(la)) + sb.Variance()/float64(len(lb)))
	q := moremath.InvCDF(moremath.TDist{V: res.DoF})(1 - (1-conf)/2)
	w.Ratio, w.Lo, w.Hi, w.Level = math.Exp(diff), math.Exp(diff-q*se), math.Exp(diff+q*se), conf
	return w
}
