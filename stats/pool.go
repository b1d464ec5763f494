package stats

import (
	"math"
)

// poolAlpha is the level of the homogeneity check before pooling: below
// it, the arms' residual variances are taken to differ, and each
// comparison uses its own pairs' spread.
const poolAlpha = 0.05

// minPoolDF is the fewest residual degrees of freedom a pooled variance
// must have to be used: with fewer, it is no better than a pair's own.
const minPoolDF = 4

// pool estimates the residual variance of the arms' exact logarithms
// with rounds as blocks: the additive model log value = arm + round +
// error, fitted by least squares to the values present (Block), and
// checks with Bartlett's test that the arms' residual variances are
// equal before it is used. Bounds (censored values and stand-ins for
// values ≤ 0) are left out of the fit: they are not measurements.
func pool(as []prepared) PoolInfo {
	pi := PoolInfo{BartlettP: math.NaN()}
	var cells []BlockCell
	for a, x := range as {
		if x.worst {
			continue
		}
		for r, l := range x.logs {
			if x.cens[r] == Exact {
				cells = append(cells, BlockCell{Arm: a, Round: r, Y: l})
			}
		}
	}
	f := Block(cells)
	pi.DF, pi.Arms = f.DF, f.Arms
	switch {
	case f.Arms < 3:
		pi.Why = "fewer than three configurations: nothing to pool"
		return pi
	case f.DF < minPoolDF:
		pi.Why = "too few residual degrees of freedom to pool"
		return pi
	}
	pi.SD = math.Sqrt(f.SS / float64(f.DF))
	pi.BartlettP = bartlett(f)
	switch {
	case math.IsNaN(pi.BartlettP):
		pi.Why = "the homogeneity of the configurations' variances could not be checked (a configuration with no residual spread)"
	case pi.BartlettP < poolAlpha:
		pi.Why = "the configurations' residual variances differ (Bartlett's test)"
	default:
		pi.Used = true
	}
	return pi
}

// BlockCell is one value of an additive two-way fit: an arm's value in a
// round.
type BlockCell struct {
	Arm, Round int
	Y          float64
}

// BlockFit is the least-squares fit of Y = arm effect + round effect +
// error to a set of cells, missing ones allowed.
type BlockFit struct {
	// SS is the residual sum of squares and DF its degrees of freedom:
	// the cells, less one parameter per arm and per round, plus one per
	// connected component of the design (an arm and a round are
	// connected when the arm has a value in the round).
	SS float64
	DF int
	// Arms and Rounds count those with a value.
	Arms, Rounds int
	// ArmSS and ArmN are each arm's share of SS and its cells, by arm.
	ArmSS map[int]float64
	ArmN  map[int]int
}

// Block fits the additive model to cells by alternating means (the
// Gauss–Seidel iteration of the normal equations, which converges for
// any design) and returns its residuals' sums.
func Block(cells []BlockCell) BlockFit {
	f := BlockFit{ArmSS: map[int]float64{}, ArmN: map[int]int{}}
	if len(cells) == 0 {
		return f
	}
	arm, round := map[int]float64{}, map[int]float64{}
	rn := map[int]int{}
	sum := map[int]float64{}
	for _, c := range cells {
		f.ArmN[c.Arm]++
		rn[c.Round]++
		sum[c.Arm] += c.Y
	}
	for a, n := range f.ArmN {
		arm[a] = sum[a] / float64(n)
	}
	for r := range rn {
		round[r] = 0
	}
	for range 10000 {
		change := 0.0
		rs := map[int]float64{}
		for _, c := range cells {
			rs[c.Round] += c.Y - arm[c.Arm]
		}
		for r, n := range rn {
			v := rs[r] / float64(n)
			change = math.Max(change, math.Abs(v-round[r]))
			round[r] = v
		}
		as := map[int]float64{}
		for _, c := range cells {
			as[c.Arm] += c.Y - round[c.Round]
		}
		for a, n := range f.ArmN {
			v := as[a] / float64(n)
			change = math.Max(change, math.Abs(v-arm[a]))
			arm[a] = v
		}
		if change < 1e-13 {
			break
		}
	}
	for _, c := range cells {
		e := c.Y - arm[c.Arm] - round[c.Round]
		f.SS += e * e
		f.ArmSS[c.Arm] += e * e
	}
	f.Arms, f.Rounds = len(f.ArmN), len(rn)
	f.DF = len(cells) - f.Arms - f.Rounds + components(cells)
	return f
}

// components counts the connected components of the bipartite graph of
// arms and rounds that cells make.
func components(cells []BlockCell) int {
	parent := map[[2]int]([2]int){}
	var find func(x [2]int) [2]int
	find = func(x [2]int) [2]int {
		p, ok := parent[x]
		if !ok {
			parent[x] = x
			return x
		}
		if p == x {
			return x
		}
		r := find(p)
		parent[x] = r
		return r
	}
	for _, c := range cells {
		a, r := find([2]int{0, c.Arm}), find([2]int{1, c.Round})
		if a != r {
			parent[a] = r
		}
	}
	n := 0
	for x := range parent {
		if find(x) == x {
			n++
		}
	}
	return n
}

// bartlett is the p-value of Bartlett's test that the arms' residual
// variances in f are equal, each arm's residuals taken to have its share
// of the degrees of freedom (DF·n_a/N, exact for a complete design's
// expectations); NaN when an arm has no spread or fewer than two arms
// have a share.
func bartlett(f BlockFit) float64 {
	n := 0
	for _, k := range f.ArmN {
		n += k
	}
	var sumDF, sumLog, sumInv, ss float64
	k := 0
	for a, na := range f.ArmN {
		df := float64(f.DF) * float64(na) / float64(n)
		if df < 0.5 {
			continue
		}
		v := f.ArmSS[a] / df
		if !(v > 0) {
			return math.NaN()
		}
		k++
		sumDF += df
		sumLog += df * math.Log(v)
		sumInv += 1 / df
		ss += f.ArmSS[a]
	}
	if k < 2 {
		return math.NaN()
	}
	sp := ss / sumDF
	t := (sumDF*math.Log(sp) - sumLog) / (1 + (sumInv-1/sumDF)/(3*float64(k-1)))
	return 1 - chiSquareCDF(t, float64(k-1))
}
