package results

import (
	"math"

	"concbench/stats"
)

// OrderTest is one metric of one Leader/Followers promotion order tested
// against the reference order's (the report's: fifo).
type OrderTest struct {
	Order  string
	Metric int         // the metric's index in the values, the busiest thread's share first
	Ratio  stats.Ratio // order ÷ reference, with its interval at Confidence
	P, Adj float64     // Welch's p on the logarithms and its Holm-adjusted value; NaN: no test
	Why    string      // why there is no test
	Sig    bool        // significant at the family's alpha after Holm's adjustment
}

// CompareOrders tests every order of orders against ref, metric by metric
// (those that tested marks): Welch's t on the logarithms (stats.WelchLog)
// with the ratio's interval (stats.RatioCI), both at Confidence, then
// Holm's step-down procedure (stats.Holm) at alpha over every test, one
// family. vals holds, per order, a slice of values per metric; an order
// without values is not tested, and none is without ref's.
func CompareOrders(vals map[string][][]float64, ref string, orders []string, tested []bool, alpha float64) []*OrderTest {
	rv, ok := vals[ref]
	if !ok {
		return nil
	}
	var tests []*OrderTest
	for _, o := range orders {
		v, ok := vals[o]
		if !ok {
			continue
		}
		for mi := range tested {
			if !tested[mi] {
				continue
			}
			t := &OrderTest{Order: o, Metric: mi, Adj: math.NaN()}
			w := stats.WelchLog(v[mi], rv[mi], Confidence)
			t.P, t.Why = w.P, w.Why
			t.Ratio = stats.RatioCI(v[mi], rv[mi], Confidence)
			tests = append(tests, t)
		}
	}
	ps := make([]float64, len(tests))
	for i, t := range tests {
		ps[i] = t.P
	}
	adj, sig := stats.Holm(ps, alpha)
	for i, t := range tests {
		t.Adj, t.Sig = adj[i], sig[i]
	}
	return tests
}

// BusiestVerdict returns +1 if order o's busiest thread (metric 0) has a
// significantly larger share than the reference's, -1 if smaller, 0 if
// they are not told apart.
func BusiestVerdict(tests []*OrderTest, o string) int {
	for _, t := range tests {
		if t.Order == o && t.Metric == 0 && t.Sig {
			switch {
			case t.Ratio.Est < 1:
				return -1
			case t.Ratio.Est > 1:
				return 1
			}
		}
	}
	return 0
}
