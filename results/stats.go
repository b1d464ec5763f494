package results

import (
	"fmt"
	"math"
	"slices"

	mstats "github.com/montanaflynn/stats"
	"golang.org/x/perf/benchmath"

	"concbench/internal/rank"
)

// Confidence is the confidence level of every interval this package
// reports.
const Confidence = 0.95

// Stats summarizes repeated measurements of one quantity: the median with
// an order-statistic confidence interval (x/perf benchmath, the statistics
// benchstat reports) and spread statistics (montanaflynn/stats).
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
	vals := slices.Clone(xs)
	nan := math.NaN()
	s := Stats{N: len(vals), Median: nan, Lo: nan, Hi: nan, Level: nan,
		Min: nan, Max: nan, Mean: nan, StdDev: nan, IQR: nan, MAD: nan}
	if len(vals) == 0 {
		s.Values = []float64{}
		s.Warnings = []string{"no measurements"}
		return s
	}
	sample := benchmath.NewSample(vals, &benchmath.DefaultThresholds) // sorts vals in place
	s.Values = sample.Values
	for _, w := range sample.Warnings {
		s.Warnings = append(s.Warnings, w.Error())
	}
	sum := benchmath.AssumeNothing.Summary(sample, Confidence)
	s.Median, s.Lo, s.Hi, s.Level = sum.Center, sum.Lo, sum.Hi, sum.Confidence
	for _, w := range sum.Warnings {
		s.Warnings = append(s.Warnings, w.Error())
	}

	data := mstats.Float64Data(s.Values)
	for _, st := range []struct {
		name string
		dst  *float64
		f    func(mstats.Float64Data) (float64, error)
	}{
		{"min", &s.Min, mstats.Min},
		{"max", &s.Max, mstats.Max},
		{"mean", &s.Mean, mstats.Mean},
		{"standard deviation", &s.StdDev, mstats.StandardDeviationSample},
		{"interquartile range", &s.IQR, mstats.InterQuartileRange},
		{"median absolute deviation", &s.MAD, mstats.MedianAbsoluteDeviation},
	} {
		v, err := st.f(data)
		if err != nil {
			s.Warnings = append(s.Warnings, fmt.Sprintf("no %s from %d value(s): %v", st.name, s.N, err))
			v = nan
		}
		*st.dst = v
	}
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

// Comparison is the outcome of a Mann–Whitney U test between two samples
// (benchmath.AssumeNothing.Compare, benchstat's test).
type Comparison struct {
	// P is the p-value; Alpha the significance level (0.05). The samples
	// differ significantly when P < Alpha.
	P, Alpha float64
	N1, N2   int
	// Warnings say, for example, that the samples are too small to ever
	// reach significance.
	Warnings []string
}

// Significant reports whether the samples differ at level Alpha.
func (c Comparison) Significant() bool { return c.P < c.Alpha }

// Compare tests whether a and b come from different distributions. It
// does not modify them.
func Compare(a, b []float64) Comparison {
	if len(a) == 0 || len(b) == 0 {
		return Comparison{P: 1, Alpha: benchmath.DefaultThresholds.CompareAlpha, N1: len(a), N2: len(b),
			Warnings: []string{"cannot compare an empty sample"}}
	}
	sa := benchmath.NewSample(slices.Clone(a), &benchmath.DefaultThresholds)
	sb := benchmath.NewSample(slices.Clone(b), &benchmath.DefaultThresholds)
	c := benchmath.AssumeNothing.Compare(sa, sb)
	// benchmath's Mann–Whitney U with ties can return p slightly above 1
	// (1.038 seen in the gate's no-change runs); a probability is at most 1.
	out := Comparison{P: min(c.P, 1), Alpha: c.Alpha, N1: c.N1, N2: c.N2}
	for _, w := range c.Warnings {
		out.Warnings = append(out.Warnings, w.Error())
	}
	return out
}

// Greater returns the one-sided p-value of the Mann–Whitney U test that b
// tends to exceed a: the probability, with no difference between the
// samples' distributions, of a U statistic (pairs in which b's value is
// the larger, ties counting one half) at least as large as observed. It is
// exact (the permutation distribution of the rank sum, ties averaged)
// for up to 40 values in all, and the normal approximation with tie and
// continuity corrections above. A test of "worse" for a metric where
// larger is worse; call it with the samples swapped for the other.
func Greater(a, b []float64) float64 {
	n1, n2 := len(a), len(b)
	if n1 == 0 || n2 == 0 {
		return 1
	}
	all := make([]float64, 0, n1+n2)
	all = append(append(all, a...), b...)
	r := rank.Average(all)
	// Twice the rank sum of b: integers even with averaged ties.
	var w2 int
	for i := n1; i < n1+n2; i++ {
		w2 += int(math.Round(2 * r[i]))
	}
	if n1+n2 <= 40 {
		return exactRankSumTail(r, n2, w2)
	}
	n := float64(n1 + n2)
	u := float64(w2)/2 - float64(n2*(n2+1))/2
	mean := float64(n1*n2) / 2
	// Tie correction: Σ(t³ − t) over groups of tied values.
	sorted := slices.Clone(all)
	slices.Sort(sorted)
	var ties float64
	for i := 0; i < len(sorted); {
		j := i
		for j < len(sorted) && sorted[j] == sorted[i] {
			j++
		}
		t := float64(j - i)
		ties += t*t*t - t
		i = j
	}
	v := float64(n1*n2) / 12 * ((n + 1) - ties/(n*(n-1)))
	if v <= 0 {
		return 1
	}
	z := (u - mean - 0.5) / math.Sqrt(v)
	return 0.5 * math.Erfc(z/math.Sqrt2)
}

// exactRankSumTail returns P(2W ≥ w2) where W is the sum of k ranks drawn
// without replacement from the ranks r (all of them, a and b together):
// the permutation distribution of the rank sum, by dynamic programming
// over doubled ranks (integers).
func exactRankSumTail(r []float64, k, w2 int) float64 {
	maxSum := 0
	vals := make([]int, len(r))
	for i, x := range r {
		vals[i] = int(math.Round(2 * x))
		maxSum += vals[i]
	}
	// ways[j][s]: subsets of size j with doubled sum s, as float64 counts.
	ways := make([][]float64, k+1)
	for j := range ways {
		ways[j] = make([]float64, maxSum+1)
	}
	ways[0][0] = 1
	for _, v := range vals {
		for j := k; j >= 1; j-- {
			row, prev := ways[j], ways[j-1]
			for s := maxSum; s >= v; s-- {
				row[s] += prev[s-v]
			}
		}
	}
	var tail, total float64
	for s, c := range ways[k] {
		total += c
		if s >= w2 {
			tail += c
		}
	}
	if total == 0 {
		return 1
	}
	return tail / total
}
