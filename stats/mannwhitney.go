package stats

import (
	"math"
	"slices"

	"golang.org/x/perf/benchmath"
)

// UTest is the outcome of a two-sided Mann–Whitney U test between two
// samples (MannWhitney).
type UTest struct {
	// P is the p-value; Alpha the significance level (0.05). The samples
	// differ significantly when P < Alpha.
	P, Alpha float64
	N1, N2   int
	// Warnings say, for example, that the samples are too small to ever
	// reach significance.
	Warnings []string
}

// Significant reports whether the samples differ at level Alpha.
func (u UTest) Significant() bool { return u.P < u.Alpha }

// MannWhitney tests whether a and b come from different distributions:
// the two-sided Mann–Whitney U test of benchmath.AssumeNothing.Compare,
// benchstat's test, so that a figure's "differs" is benchstat's. It does
// not modify a or b.
func MannWhitney(a, b []float64) UTest {
	if len(a) == 0 || len(b) == 0 {
		return UTest{P: 1, Alpha: benchmath.DefaultThresholds.CompareAlpha, N1: len(a), N2: len(b),
			Warnings: []string{"cannot compare an empty sample"}}
	}
	sa := benchmath.NewSample(slices.Clone(a), &benchmath.DefaultThresholds)
	sb := benchmath.NewSample(slices.Clone(b), &benchmath.DefaultThresholds)
	c := benchmath.AssumeNothing.Compare(sa, sb)
	// benchmath's Mann–Whitney U with ties can return p slightly above 1
	// (1.038 seen in the gate's no-change runs); a probability is at most 1.
	out := UTest{P: min(c.P, 1), Alpha: c.Alpha, N1: c.N1, N2: c.N2}
	for _, w := range c.Warnings {
		out.Warnings = append(out.Warnings, w.Error())
	}
	return out
}

// MannWhitneyGreater returns the one-sided p-value of the Mann–Whitney U
// test that b tends to exceed a: the probability, with no difference
// between the samples' distributions, of a U statistic (pairs in which
// b's value is the larger, ties counting one half) at least as large as
// observed. It is exact (the permutation distribution of the rank sum,
// ties averaged) for up to 40 values in all, and the normal
// approximation with tie and continuity corrections above. A test of
// "worse" for a metric where larger is worse; call it with the samples
// swapped for the other. Either sample empty gives 1.
func MannWhitneyGreater(a, b []float64) float64 {
	n1, n2 := len(a), len(b)
	if n1 == 0 || n2 == 0 {
		return 1
	}
	all := make([]float64, 0, n1+n2)
	all = append(append(all, a...), b...)
	r := Ranks(all)
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

// MannWhitneyMinP is the smallest one-sided p-value a Mann–Whitney U
// test of samples of n1 and n2 values can give (no ties, complete
// separation): 1 / C(n1+n2, n1). 3+3 values give 0.05, 6+6 0.0011, 7+7
// 0.00029. A family corrected for m tests cannot reject with samples
// whose smallest p is at least alpha/m: the gate says so rather than
// pass such a row silently.
func MannWhitneyMinP(n1, n2 int) float64 {
	c := 1.0 // C(n1+n2, n1), built up as a product
	for i := 1; i <= n1; i++ {
		c = c * float64(n2+i) / float64(i)
	}
	return math.Min(1, 1/c)
}
