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

// Ratio is how many times one sample's values another's are, with a
// distribution-free confidence interval (RatioCI).
type Ratio struct {
	// Est is the Hodges–Lehmann estimate: the median of the ratios a_i/b_j
	// over all pairs. Lo and Hi bound the interval at level Level (at
	// least the level asked for: order statistics give discrete levels);
	// they are NaN when OK is false.
	Est, Lo, Hi, Level float64
	// OK reports whether the interval exists: every value positive and
	// finite, and enough values for the level.
	OK bool
	// Why says why there is no interval when OK is false.
	Why string
}

// Significant reports whether the interval excludes 1: the samples differ
// by a factor other than 1 at the interval's level.
func (r Ratio) Significant() bool { return r.OK && (r.Lo > 1 || r.Hi < 1) }

// RatioCI estimates a/b, the factor by which sample a's values exceed
// sample b's, with a two-sided confidence interval at level conf: the
// Hodges–Lehmann estimate and the Moses interval of the shift between the
// logarithms of the two samples — the median and the order statistics of
// the n1·n2 ratios a_i/b_j, the interval R's wilcox.test(conf.int = TRUE)
// gives on log data. It assumes only that the samples differ by a factor;
// the interval comes from the Mann–Whitney U statistic's permutation
// distribution (exact up to 60 values in all, normal approximation
// above). With 6 values each it is the 6th smallest to the 6th largest of
// the 36 ratios, at level 95.9%; with fewer than 4 each there is no 95%
// interval. It does not modify a or b.
func RatioCI(a, b []float64, conf float64) Ratio {
	nan := math.NaN()
	out := Ratio{Est: nan, Lo: nan, Hi: nan, Level: nan}
	if len(a) == 0 || len(b) == 0 {
		out.Why = "an empty sample"
		return out
	}
	var d []float64
	for _, x := range a {
		for _, y := range b {
			if !(x > 0 && y > 0) || math.IsInf(x, 0) || math.IsInf(y, 0) {
				out.Why = "a value that is not positive and finite (ratios need positive values)"
				return out
			}
			d = append(d, math.Log(x)-math.Log(y))
		}
	}
	slices.Sort(d)
	mid := len(d) / 2
	if len(d)%2 == 1 {
		out.Est = math.Exp(d[mid])
	} else {
		out.Est = math.Exp((d[mid-1] + d[mid]) / 2)
	}
	m, n := len(a), len(b)
	c, level := mosesRank(m, n, conf)
	if c < 1 {
		out.Why = fmt.Sprintf("too few values (%d and %d) for a %.0f%% interval", m, n, 100*conf)
		return out
	}
	out.Lo, out.Hi, out.Level, out.OK = math.Exp(d[c-1]), math.Exp(d[len(d)-c]), level, true
	return out
}

// mosesRank returns c, the rank (1-based) of the ratio that bounds the
// Moses interval from below (the c-th largest bounds it from above), and
// the interval's level: c is the largest integer with P(U ≤ c−1) ≤
// (1−conf)/2 under the null distribution of the Mann–Whitney U statistic
// for samples of sizes m and n. It returns 0 when even c = 1 is too wide.
func mosesRank(m, n int, conf float64) (int, float64) {
	alpha := (1 - conf) / 2
	if m+n > 60 {
		mn := float64(m * n)
		z := math.Sqrt2 * math.Erfinv(conf)
		c := int(math.Floor(mn/2 - z*math.Sqrt(mn*float64(m+n+1)/12)))
		if c < 1 {
			return 0, math.NaN()
		}
		return c, conf
	}
	p := uDistribution(m, n)
	c, cum := 0, 0.0
	for u := 0; u < len(p); u++ {
		if cum+p[u] > alpha {
			break
		}
		cum += p[u]
		c = u + 1
	}
	if c < 1 {
		return 0, math.NaN()
	}
	return c, 1 - 2*cum
}

// uDistribution returns P(U = u), u = 0..m·n, for the Mann–Whitney U
// statistic of samples of sizes m and n without ties: U is the rank sum
// of the first sample minus m(m+1)/2, counted by dynamic programming over
// the subsets of size m of the ranks 1..m+n.
func uDistribution(m, n int) []float64 {
	N := m + n
	maxU := m * n
	// ways[j][u]: subsets of size j of the ranks seen so far whose rank
	// sum is u + j(j+1)/2.
	ways := make([][]float64, m+1)
	for j := range ways {
		ways[j] = make([]float64, maxU+1)
	}
	ways[0][0] = 1
	for r := 1; r <= N; r++ {
		for j := min(m, r); j >= 1; j-- {
			// Adding rank r to a subset of size j-1 with offset u' gives
			// offset u' + r - j.
			shift := r - j
			row, prev := ways[j], ways[j-1]
			for u := maxU; u >= shift; u-- {
				row[u] += prev[u-shift]
			}
		}
	}
	total := 0.0
	for _, w := range ways[m] {
		total += w
	}
	p := make([]float64, maxU+1)
	for u, w := range ways[m] {
		p[u] = w / total
	}
	return p
}
