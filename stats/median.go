package stats

import (
	"math"
	"slices"

	"golang.org/x/perf/benchmath"
)

// Median is a sample's median with its confidence interval, as MedianCI
// returns it.
type Median struct {
	// Values are the sample's values in ascending order (a copy).
	Values []float64
	// Center is the sample median; Lo and Hi bound its confidence
	// interval, at the level Level (at least the level asked for: order
	// statistics give discrete levels). Lo is -Inf and Hi +Inf when the
	// sample is too small for an interval at that level.
	Center, Lo, Hi, Level float64
	// Warnings are benchmath's complaints about the sample (too few
	// values for an interval, say), as sentences.
	Warnings []string
}

// MedianCI returns the median of xs with its distribution-free confidence
// interval at level conf, from order statistics: benchmath's
// AssumeNothing summary, exactly what benchstat reports, and valid for
// the skewed distributions latencies have. With fewer than 6 values no
// 95% interval exists, and a warning says so. It does not modify xs; an
// empty xs gives NaN and the warning "no measurements".
func MedianCI(xs []float64, conf float64) Median {
	if len(xs) == 0 {
		nan := math.NaN()
		return Median{Values: []float64{}, Center: nan, Lo: nan, Hi: nan, Level: nan, Warnings: []string{"no measurements"}}
	}
	sample := benchmath.NewSample(slices.Clone(xs), &benchmath.DefaultThresholds) // sorts its values in place
	m := Median{Values: sample.Values}
	for _, w := range sample.Warnings {
		m.Warnings = append(m.Warnings, w.Error())
	}
	sum := benchmath.AssumeNothing.Summary(sample, conf)
	m.Center, m.Lo, m.Hi, m.Level = sum.Center, sum.Lo, sum.Hi, sum.Confidence
	for _, w := range sum.Warnings {
		m.Warnings = append(m.Warnings, w.Error())
	}
	return m
}
