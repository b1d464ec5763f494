package stats

import (
	"fmt"
	"math"

	mstats "github.com/montanaflynn/stats"
)

// Description is a sample's summary statistics, from montanaflynn/stats.
// A statistic the library cannot compute (too few values) is NaN, and
// Warnings says which and why.
type Description struct {
	Min, Max, Mean, StdDev, IQR, MAD float64
	Warnings                         []string
}

// Describe returns xs's summary statistics: min, max, mean, the sample
// standard deviation, the interquartile range and the median absolute
// deviation. It does not modify xs.
func Describe(xs []float64) Description {
	var d Description
	data := mstats.Float64Data(xs)
	for _, st := range []struct {
		name string
		dst  *float64
		f    func(mstats.Float64Data) (float64, error)
	}{
		{"min", &d.Min, mstats.Min},
		{"max", &d.Max, mstats.Max},
		{"mean", &d.Mean, mstats.Mean},
		{"standard deviation", &d.StdDev, mstats.StandardDeviationSample},
		{"interquartile range", &d.IQR, mstats.InterQuartileRange},
		{"median absolute deviation", &d.MAD, mstats.MedianAbsoluteDeviation},
	} {
		v, err := st.f(data)
		if err != nil {
			d.Warnings = append(d.Warnings, fmt.Sprintf("no %s from %d value(s): %v", st.name, len(xs), err))
			v = math.NaN()
		}
		*st.dst = v
	}
	return d
}

// MedianOf returns xs's median (montanaflynn/stats), NaN for an empty xs.
// It does not modify xs.
func MedianOf(xs []float64) float64 {
	m, err := mstats.Median(xs)
	if err != nil {
		return math.NaN()
	}
	return m
}
