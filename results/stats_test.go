package results_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"concbench/results"
)

func near(a, b float64) bool {
	if math.IsInf(a, 0) || math.IsInf(b, 0) || math.IsNaN(a) || math.IsNaN(b) {
		return a == b || (math.IsNaN(a) && math.IsNaN(b))
	}
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b))
}

// TestSummarize checks the statistics against values computed by hand:
// the median's 95% CI from order statistics (for n=10 the 2nd and 9th
// values, at level 1-2·P(Bin(10,½) ≤ 1) = 0.978515625), sample standard
// deviation, IQR as the difference of the halves' medians, MAD.
func TestSummarize(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		name                    string
		xs                      []float64
		median, lo, hi, level   float64
		min, max, mean, sd, iqr float64
		mad                     float64
		hasCI                   bool
		warn                    []string // substrings expected among the warnings
		bandLo, bandHi          float64
		bandKind                string
	}{
		{
			name: "ten values", xs: []float64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1},
			median: 5.5, lo: 2, hi: 9, level: 0.978515625,
			min: 1, max: 10, mean: 5.5, sd: math.Sqrt(82.5 / 9), iqr: 5, mad: 2.5,
			hasCI: true, bandLo: 2, bandHi: 9, bandKind: results.BandCI,
		},
		{
			name: "six values: the smallest sample with a 95% interval", xs: []float64{3, 1, 2, 6, 5, 4},
			median: 3.5, lo: 1, hi: 6, level: 0.96875,
			min: 1, max: 6, mean: 3.5, sd: math.Sqrt(17.5 / 5), iqr: 3, mad: 1.5,
			hasCI: true, bandLo: 1, bandHi: 6, bandKind: results.BandCI,
		},
		{
			name: "five values: no interval, the band is the range", xs: []float64{5, 1, 4, 2, 3},
			median: 3, lo: -inf, hi: 5, level: 0.96875,
			min: 1, max: 5, mean: 3, sd: math.Sqrt(2.5), iqr: 3, mad: 1,
			warn:   []string{"need >= 6 samples for confidence interval at level 0.95"},
			bandLo: 1, bandHi: 5, bandKind: results.BandRange,
		},
		{
			name: "one value", xs: []float64{7},
			median: 7, lo: -inf, hi: inf, level: 1,
			min: 7, max: 7, mean: 7, sd: nan, iqr: nan, mad: 0,
			warn:   []string{"need >= 6 samples", "no standard deviation from 1 value", "no interquartile range from 1 value"},
			bandLo: 7, bandHi: 7, bandKind: results.BandRange,
		},
		{
			name: "none", xs: nil,
			median: nan, lo: nan, hi: nan, level: nan,
			min: nan, max: nan, mean: nan, sd: nan, iqr: nan, mad: nan,
			warn:   []string{"no measurements"},
			bandLo: nan, bandHi: nan, bandKind: results.BandNone,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := slices.Clone(tc.xs)
			s := results.Summarize(in)
			if !slices.Equal(in, tc.xs) {
				t.Errorf("Summarize modified its input: %v, want %v", in, tc.xs)
			}
			if s.N != len(tc.xs) || !slices.IsSorted(s.Values) || len(s.Values) != len(tc.xs) {
				t.Errorf("N=%d Values=%v, want %d sorted values", s.N, s.Values, len(tc.xs))
			}
			for _, c := range []struct {
				name      string
				got, want float64
			}{
				{"median", s.Median, tc.median}, {"lo", s.Lo, tc.lo}, {"hi", s.Hi, tc.hi}, {"level", s.Level, tc.level},
				{"min", s.Min, tc.min}, {"max", s.Max, tc.max}, {"mean", s.Mean, tc.mean}, {"stddev", s.StdDev, tc.sd},
				{"iqr", s.IQR, tc.iqr}, {"mad", s.MAD, tc.mad},
			} {
				if !near(c.got, c.want) {
					t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
				}
			}
			if s.HasCI() != tc.hasCI {
				t.Errorf("HasCI() = %v, want %v", s.HasCI(), tc.hasCI)
			}
			all := strings.Join(s.Warnings, "\n")
			for _, w := range tc.warn {
				if !strings.Contains(all, w) {
					t.Errorf("warnings %q lack %q", s.Warnings, w)
				}
			}
			if len(tc.warn) == 0 && len(s.Warnings) > 0 {
				t.Errorf("unexpected warnings %q", s.Warnings)
			}
			lo, hi, kind := s.Band()
			if !near(lo, tc.bandLo) || !near(hi, tc.bandHi) || kind != tc.bandKind {
				t.Errorf("Band() = %v, %v, %q; want %v, %v, %q", lo, hi, kind, tc.bandLo, tc.bandHi, tc.bandKind)
			}
		})
	}
}
