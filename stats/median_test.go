package stats

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// TestMedianCI checks the median's interval against order statistics
// computed by hand: for n = 10 the 2nd and 9th values, at level
// 1 − 2·P(Bin(10, ½) ≤ 1) = 0.978515625; for n = 6 the extremes, at
// 1 − 2/64 = 0.96875; below 6 values no 95% interval.
func TestMedianCI(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for _, tc := range []struct {
		name                  string
		xs                    []float64
		median, lo, hi, level float64
		warn                  string
	}{
		{name: "ten values", xs: []float64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1}, median: 5.5, lo: 2, hi: 9, level: 0.978515625},
		{name: "six values", xs: []float64{3, 1, 2, 6, 5, 4}, median: 3.5, lo: 1, hi: 6, level: 0.96875},
		{name: "five values", xs: []float64{5, 1, 4, 2, 3}, median: 3, lo: -inf, hi: 5, level: 0.96875,
			warn: "need >= 6 samples for confidence interval at level 0.95"},
		{name: "none", xs: nil, median: nan, lo: nan, hi: nan, level: nan, warn: "no measurements"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := slices.Clone(tc.xs)
			m := MedianCI(in, 0.95)
			if !slices.Equal(in, tc.xs) {
				t.Errorf("MedianCI modified its input: %v", in)
			}
			if len(m.Values) != len(tc.xs) || !slices.IsSorted(m.Values) {
				t.Errorf("Values %v, want the %d values sorted", m.Values, len(tc.xs))
			}
			if !near(m.Center, tc.median) || !near(m.Lo, tc.lo) || !near(m.Hi, tc.hi) || !near(m.Level, tc.level) {
				t.Errorf("MedianCI = %v [%v, %v] at %v; want %v [%v, %v] at %v", m.Center, m.Lo, m.Hi, m.Level, tc.median, tc.lo, tc.hi, tc.level)
			}
			all := strings.Join(m.Warnings, "\n")
			if (tc.warn == "") != (all == "") || !strings.Contains(all, tc.warn) {
				t.Errorf("warnings %q, want %q", m.Warnings, tc.warn)
			}
		})
	}
}
