package stats

import (
	"fmt"
	"math"
	"slices"
)

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
