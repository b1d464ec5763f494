package results

import (
	"math"

	"concbench/stats"
)

// Confidence is the confidence level of every interval this package
// reports.
const Confidence = 0.95

// Stats summarizes repeated measurements of one quantity: the median with
// an order-statistic confidence interval (stats.MedianCI: x/perf
// benchmath, the statistics benchstat reports) and spread statistics
// (montanaflynn/stats).
//
// A statistic that cannot be computed from the sample (a confidence
// interval from fewer than 6 values, a standard deviation from one) is NaN
// or ±Inf, and Warnings says why; nothing is invented to fill the gap.
type Stats struct {
	// Values are the measurements, in ascending order.
	Values []float64
	// N is len(Values).
	N int
	// Median is the sample median; Lo and Hi bound its confidence
	// interval, at the level Level (at least Confidence: order statistics
	// give discrete levels). Lo is -Inf and Hi +Inf when the sample is too
	// small for an interval at that level.
	Median, Lo, Hi, Level float64
	// Min, Max, Mean, StdDev (sample standard deviation, n-1), IQR
	// (interquartile range) and MAD (median absolute deviation from the
	// median) describe the spread.
	Min, Max, Mean, StdDev, IQR, MAD float64
	// Warnings are benchmath's and montanaflynn/stats's complaints about
	// this sample, as sentences, to be shown with the numbers.
	Warnings []string
}

// Summarize returns the statistics of xs at the level Confidence. It does
// not modify xs. An empty xs gives N = 0, NaN statistics and a warning.
func Summarize(xs []float64) Stats {
	nan := math.NaN()
	s := Stats{N: len(xs), Median: nan, Lo: nan, Hi: nan, Level: nan,
		Min: nan, Max: nan, Mean: nan, StdDev: nan, IQR: nan, MAD: nan}
	if len(xs) == 0 {
		s.Values = []float64{}
		s.Warnings = []string{"no measurements"}
		return s
	}
	m := stats.MedianCI(xs, Confidence) // a sorted copy of xs
	s.Values = m.Values
	s.Median, s.Lo, s.Hi, s.Level = m.Center, m.Lo, m.Hi, m.Level
	s.Warnings = m.Warnings

	d := stats.Describe(s.Values)
	s.Min, s.Max, s.Mean, s.StdDev, s.IQR, s.MAD = d.Min, d.Max, d.Mean, d.StdDev, d.IQR, d.MAD
	s.Warnings = append(s.Warnings, d.Warnings...)
	return s
}

// HasCI reports whether the confidence interval is finite.
func (s Stats) HasCI() bool {
	return s.N > 0 && !math.IsInf(s.Lo, 0) && !math.IsInf(s.Hi, 0) && !math.IsNaN(s.Lo) && !math.IsNaN(s.Hi)
}

// Band kinds, as Band returns them.
const (
	BandCI    = "ci"    // the median's confidence interval
	BandRange = "range" // min..max: the sample was too small for an interval
	BandNone  = "none"  // no measurements
)

// Band returns the interval figures draw around the median: the confidence
// interval when it is finite, otherwise the sample's range (min..max),
// with kind saying which (BandCI, BandRange, BandNone), so that a figure
// never passes a range off as a confidence interval.
func (s Stats) Band() (lo, hi float64, kind string) {
	switch {
	case s.N == 0:
		return math.NaN(), math.NaN(), BandNone
	case s.HasCI():
		return s.Lo, s.Hi, BandCI
	}
	return s.Min, s.Max, BandRange
}
