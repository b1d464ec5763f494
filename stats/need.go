package stats

import (
	"math"

	"github.com/aclements/go-moremath/mathx"
	moremath "github.com/aclements/go-moremath/stats"
)

// needInput is an undetermined comparison as needs estimates it: the
// mean gain and the spread of one round's gain, with the degrees of
// freedom the spread rests on, from n rounds.
type needInput struct {
	mean, sd, df        float64
	n                   int
	pooled              bool
	canEquiv, canBehind bool
}

// needSDLevel is the level of the spread's interval that Need's range
// spans: the estimates at the interval's two ends.
const needSDLevel = 0.80

// needs estimates, for every undetermined rival, the repetitions that
// would decide it (Rival.Need, NeedLo, NeedHi), with the power of the
// whole cell at DecideOptions.Power: each of the u undetermined rivals
// gets power Power^(1/u), since the cell is decided only when all of
// them are. The estimate is t-based — the degrees of freedom grow with
// the repetitions as the test's do — at the mean gain observed, and its
// range follows the spread's 80 % interval (a spread from 5 rounds is
// uncertain by a factor of about 1.6 either way, its square in
// repetitions). The mean is taken as observed: a smaller true effect
// needs more.
func needs(rivals []Rival, opt DecideOptions) {
	u := 0
	for _, r := range rivals {
		if r.Status == Undetermined && r.needIn.n > 0 {
			u++
		}
	}
	if u == 0 {
		return
	}
	power := math.Pow(opt.Power, 1/float64(u))
	delta := math.Log(1 + opt.Margin)
	for i := range rivals {
		r := &rivals[i]
		in := r.needIn
		if r.Status != Undetermined || in.n == 0 {
			continue
		}
		lo, hi := chiSquareQuantile((1-needSDLevel)/2, in.df), chiSquareQuantile(1-(1-needSDLevel)/2, in.df)
		sdLo, sdHi := in.sd*math.Sqrt(in.df/hi), in.sd*math.Sqrt(in.df/lo)
		r.Need = needFor(in, in.sd, delta, opt.Alpha, power)
		if r.Need < 0 {
			r.NeedLo, r.NeedHi = -1, -1
			if r.Why == "" {
				r.Why = "the best is not ahead of it on the rounds they share by more than the margin, nor within it"
				if in.mean <= -delta {
					r.Why = "the best is not ahead of it on the rounds they share"
				}
			}
			continue
		}
		r.NeedLo, r.NeedHi = needFor(in, sdLo, delta, opt.Alpha, power), needFor(in, sdHi, delta, opt.Alpha, power)
	}
}

// needFor is the fewest rounds n at which the test the mean points to —
// behind (mean beyond the margin) or equivalent (within it) — reaches
// alpha with probability power at spread sd: dist·√n/sd ≥ t(1−α) +
// t(power), the quantiles at the degrees of freedom n rounds give
// (n − 1, or for a pooled spread its degrees of freedom grown in
// proportion). -1 when neither test can decide; MaxNeed when more are
// needed.
func needFor(in needInput, sd, delta, alpha, power float64) int {
	switch {
	case in.canBehind && in.mean > delta:
		return needAt(in, sd, in.mean-delta, alpha, power)
	case in.canEquiv && math.Abs(in.mean) < delta:
		return needAt(in, sd, delta-math.Abs(in.mean), alpha, 1-(1-power)/2)
	}
	return -1
}

// needAt is the fewest rounds n at which a one-sided test of a mean
// dist > 0 beyond its hypothesis reaches alpha with probability q at
// spread sd (needFor); MaxNeed when more are needed.
func needAt(in needInput, sd, dist, alpha, q float64) int {
	if !(sd > 0) {
		return minPairs
	}
	df := func(n int) float64 {
		if in.pooled && in.n > 1 {
			return math.Max(1, in.df*float64(n-1)/float64(in.n-1))
		}
		return float64(n - 1)
	}
	za, zq := moremath.StdNormal.InvCDF(1-alpha), moremath.StdNormal.InvCDF(q)
	ok := func(n int) bool {
		v := df(n)
		return dist*math.Sqrt(float64(n))/sd >= tQuantile(za, v)+tQuantile(zq, v)
	}
	if !ok(MaxNeed) {
		return MaxNeed
	}
	lo, hi := minPairs, MaxNeed // ok(hi); find the least
	if ok(lo) {
		return lo
	}
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if ok(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// nearNeed estimates the repetitions at which the cell would be Near:
// every rival whose "not ahead" test does not yet pass at alpha over the
// rivals (nearBest) passing it, with power Power for the whole cell
// shared among them as needs does; the range as needs's. -1, -1, -1
// where one of them cannot get there (no estimate, or the best behind it
// by the margin or more on the rounds they share).
func nearNeed(rivals []Rival, opt DecideOptions) (need, lo, hi int) {
	a := opt.Alpha / float64(len(rivals))
	var open []needInput
	for _, r := range rivals {
		if r.PNotAhead < a {
			continue
		}
		if r.needIn.n == 0 || !r.needIn.canBehind {
			return -1, -1, -1
		}
		open = append(open, r.needIn)
	}
	if len(open) == 0 {
		return 0, 0, 0
	}
	power := math.Pow(opt.Power, 1/float64(len(open)))
	delta := math.Log(1 + opt.Margin)
	for _, in := range open {
		dist := in.mean + delta
		if dist <= 0 {
			return -1, -1, -1
		}
		clo, chi := chiSquareQuantile((1-needSDLevel)/2, in.df), chiSquareQuantile(1-(1-needSDLevel)/2, in.df)
		need = max(need, needAt(in, in.sd, dist, a, power))
		lo = max(lo, needAt(in, in.sd*math.Sqrt(in.df/chi), dist, a, power))
		hi = max(hi, needAt(in, in.sd*math.Sqrt(in.df/clo), dist, a, power))
	}
	return need, lo, hi
}

// chiSquareCDF is the χ² distribution's CDF with df degrees of freedom.
func chiSquareCDF(x, df float64) float64 {
	if x <= 0 {
		return 0
	}
	return mathx.GammaInc(df/2, x/2)
}

// chiSquareQuantile is the χ² distribution's p-quantile, by bisection.
func chiSquareQuantile(p, df float64) float64 {
	lo, hi := 0.0, math.Max(1, df)
	for chiSquareCDF(hi, df) < p {
		hi *= 2
	}
	for range 200 {
		mid := (lo + hi) / 2
		if chiSquareCDF(mid, df) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// tQuantile is the t distribution's quantile with v degrees of freedom
// at the probability whose standard normal quantile is z, by the
// Cornish–Fisher expansion (Abramowitz & Stegun 26.7.5): within 1 % of
// the exact quantile for v ≥ 3 at the levels an estimate of repetitions
// uses, and thousands of times faster than inverting the CDF, which a
// cell's estimates would do hundreds of times.
func tQuantile(z, v float64) float64 {
	z2 := z * z
	g1 := (z2 + 1) * z / 4
	g2 := ((5*z2+16)*z2 + 3) * z / 96
	g3 := (((3*z2+19)*z2+17)*z2 - 15) * z / 384
	g4 := ((((79*z2+776)*z2+1482)*z2-1920)*z2 - 945) * z / 92160
	return z + g1/v + g2/(v*v) + g3/(v*v*v) + g4/(v*v*v*v)
}
