package stats

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	moremath "github.com/aclements/go-moremath/stats"
)

// Arm is one configuration's values in a comparison, by round: the
// repetition that measured it. Repetitions are interleaved across
// configurations, so that a round's values were measured minutes apart
// at most and share the machine's drift; Decide compares them in pairs.
type Arm struct {
	Name   string
	Values map[int]float64 // by round
}

// DecideOptions are the parameters of Decide.
type DecideOptions struct {
	// HigherIsBetter says which direction is better.
	HigherIsBetter bool
	// Margin is the equivalence margin as a ratio: 0.10 calls two
	// configurations equivalent when their ratio is shown to lie within
	// [1/1.1, 1.1].
	Margin float64
	// Alpha is each test's level (default 0.05).
	Alpha float64
	// Power is the power the repetitions a decision needs are estimated
	// for (default 0.8).
	Power float64
}

// Verdict is the kind of a Decision.
type Verdict string

// The verdicts.
const (
	// Winner: every other configuration is shown to be behind the best
	// by more than the margin.
	Winner Verdict = "winner"
	// Group: a leading group, every member shown to be equivalent to the
	// best within the margin, and every other configuration shown to be
	// behind the best by more than the margin.
	Group Verdict = "group"
	// Undecided: some configuration is neither shown to be behind the
	// best by more than the margin nor shown to be within it; Need says
	// how many repetitions would decide it.
	Undecided Verdict = "undecided"
	// NoTest: there is nothing to test (fewer than two configurations
	// with values, too few values); Why says why.
	NoTest Verdict = "no test"
)

// The status of a rival against the best.
const (
	Behind       = "behind"
	Equivalent   = "equivalent"
	Undetermined = "undetermined"
)

// Rival is the comparison of the best configuration with one other.
type Rival struct {
	Name string
	// Rounds are the rounds both have a value in; a paired comparison
	// when there are at least minPairs of them, else an unpaired one
	// (Welch's) on all their values.
	Rounds int
	Paired bool
	// Ratio is the best's advantage over the rival as a factor ≥ 1 when
	// the best is better on average (its value over the rival's, or the
	// rival's over its value when lower is better): the exponential of
	// the mean difference of logarithms. Lo and Hi bound it at level
	// 1 − 2α (the interval the equivalence test is the dual of).
	Ratio, Lo, Hi float64
	// PBehind is the one-sided p-value of the rival being behind the
	// best by more than the margin (the ratio beyond 1 + Margin); PEquiv
	// the p-value of the two one-sided tests of the ratio lying within
	// the margin (TOST). NaN: no test.
	PBehind, PEquiv float64
	// Status is Behind, Equivalent or Undetermined. The two hypotheses
	// are disjoint — the ratio within the margin, or beyond it — so that
	// no rival can be shown to be both, and two runs of one experiment
	// can differ only by being undetermined, not by calling a rival a
	// member in one and behind in the other (a rival 7 % behind with a
	// 10 % margin was, when "behind" meant any amount: 2026-11-28,
	// docs/findings.md).
	Status string
	// Need is, for an undetermined rival, the repetitions that would
	// decide it at the spread measured (0: decided, -1: not estimable,
	// and Why says why).
	Need int
	Why  string
}

// Decision is the outcome of Decide.
type Decision struct {
	Verdict Verdict
	// Best is the configuration with the best median; Group the leading
	// group (Best first; Winner: Best alone; Group: Best and the
	// equivalent ones); Rest every other configuration, in order.
	Best  string
	Group []string
	Rest  []string
	// Rivals are the comparisons of Best with every other configuration,
	// in order of their medians.
	Rivals []Rival
	// Need is, for an undecided cell, the repetitions the most demanding
	// undetermined rival needs; -1 when one cannot be estimated.
	Need int
	// Floor is the value that stood for values ≤ 0 (0 if none did): half
	// the smallest positive value of the comparison.
	Floor float64
	// Why explains a NoTest decision.
	Why string
	// Margin and Alpha are the options the decision was made with.
	Margin, Alpha float64
}

// minPairs is the fewest rounds that a paired comparison rests on; with
// fewer the comparison is unpaired.
const minPairs = 3

// MaxNeed bounds the repetitions estimate: beyond it, more repetitions
// are not a practical way to a decision.
const MaxNeed = 1000

// Decide says which of arms is best, and whether that is decided: a
// single winner (every other arm shown to be behind the best by more than
// Margin, one-sided test at Alpha), a leading group shown to be
// equivalent within Margin
// (two one-sided tests at Alpha each, so that the group's claim — every
// member equivalent, every other arm behind — is an intersection–union
// test at level Alpha), or undecided, with the repetitions that a
// decision would need at the spread measured. The tests are on
// logarithms (the metrics differ by factors), paired by round when the
// arms share enough rounds — interleaved repetitions share the machine's
// drift, which pairing cancels — and Welch's unpaired t-test otherwise.
// Values ≤ 0 (a capacity at an objective no rate met) stand at half the
// smallest positive value of the comparison: below every measured one,
// so that they are behind, never dropped.
func Decide(arms []Arm, opt DecideOptions) Decision {
	if opt.Alpha <= 0 {
		opt.Alpha = 0.05
	}
	if opt.Power <= 0 {
		opt.Power = 0.8
	}
	d := Decision{Margin: opt.Margin, Alpha: opt.Alpha, Need: 0}
	type arm struct {
		name   string
		logs   map[int]float64
		median float64
	}
	floor := math.Inf(1)
	for _, a := range arms {
		for _, v := range a.Values {
			if v > 0 && !math.IsInf(v, 0) {
				floor = min(floor, v)
			}
		}
	}
	var as []arm
	for _, a := range arms {
		if len(a.Values) == 0 {
			continue
		}
		x := arm{name: a.Name, logs: map[int]float64{}}
		var ls []float64
		for r, v := range a.Values {
			if !(v > 0) || math.IsInf(v, 0) {
				if math.IsInf(floor, 1) {
					continue
				}
				v, d.Floor = floor/2, floor/2
			}
			x.logs[r] = math.Log(v)
			ls = append(ls, x.logs[r])
		}
		if len(ls) == 0 {
			continue
		}
		slices.Sort(ls)
		x.median = ls[len(ls)/2]
		if len(ls)%2 == 0 {
			x.median = (ls[len(ls)/2-1] + ls[len(ls)/2]) / 2
		}
		as = append(as, x)
	}
	switch {
	case math.IsInf(floor, 1) && len(arms) > 0:
		d.Verdict, d.Why = NoTest, "no positive value (no configuration met the objective in any repetition)"
		return d
	case len(as) < 2:
		d.Verdict, d.Why = NoTest, "fewer than two configurations with valid repetitions"
		return d
	}
	sign := 1.0
	if !opt.HigherIsBetter {
		sign = -1
	}
	slices.SortStableFunc(as, func(x, y arm) int { return cmp.Compare(sign*y.median, sign*x.median) })
	best := as[0]
	d.Best, d.Group = best.name, []string{best.name}
	delta := math.Log(1 + opt.Margin)
	undecided := false
	for _, o := range as[1:] {
		rv := compare(best.logs, o.logs, sign, delta, opt)
		rv.Name = o.name
		switch rv.Status {
		case Equivalent:
			d.Group = append(d.Group, o.name)
		case Behind:
			d.Rest = append(d.Rest, o.name)
		default:
			d.Rest = append(d.Rest, o.name)
			undecided = true
			if rv.Need < 0 || d.Need < 0 {
				d.Need = -1
			} else {
				d.Need = max(d.Need, rv.Need)
			}
		}
		d.Rivals = append(d.Rivals, rv)
	}
	switch {
	case undecided:
		d.Verdict = Undecided
	case len(d.Group) == 1:
		d.Verdict = Winner
	default:
		d.Verdict = Group
	}
	return d
}

// compare tests the best arm (logs b) against another (logs o): the
// gain g = sign × (log best − log other), positive where the best is
// better, paired by round when minPairs rounds are shared.
func compare(b, o map[int]float64, sign, delta float64, opt DecideOptions) Rival {
	nan := math.NaN()
	rv := Rival{Ratio: nan, Lo: nan, Hi: nan, PBehind: nan, PEquiv: nan, Status: Undetermined, Need: -1}
	var g []float64
	for r, x := range b {
		if y, ok := o[r]; ok {
			g = append(g, sign*(x-y))
		}
	}
	rv.Rounds = len(g)
	var mean, se, dof float64
	var n int // the sample size the standard error rests on, for Need
	switch {
	case len(g) >= minPairs:
		rv.Paired = true
		s := moremath.Sample{Xs: g}
		mean, se, dof, n = s.Mean(), math.Sqrt(s.Variance()/float64(len(g))), float64(len(g)-1), len(g)
	default:
		lb, lo := values(b), values(o)
		if len(lb) < 2 || len(lo) < 2 {
			rv.Why = fmt.Sprintf("too few valid repetitions to compare (%d and %d)", len(lb), len(lo))
			return rv
		}
		sb, so := moremath.Sample{Xs: lb}, moremath.Sample{Xs: lo}
		vb, vo := sb.Variance()/float64(len(lb)), so.Variance()/float64(len(lo))
		mean, se = sign*(sb.Mean()-so.Mean()), math.Sqrt(vb+vo)
		if vb+vo > 0 {
			dof = (vb + vo) * (vb + vo) / (vb*vb/float64(len(lb)-1) + vo*vo/float64(len(lo)-1))
		}
		n = min(len(lb), len(lo))
	}
	rv.Ratio = math.Exp(mean)
	if se == 0 || dof <= 0 {
		// No spread: the comparison is exact.
		rv.Lo, rv.Hi = rv.Ratio, rv.Ratio
		switch {
		case math.Abs(mean) < delta:
			rv.Status, rv.PEquiv, rv.Need = Equivalent, 0, 0
		case mean > delta:
			rv.Status, rv.PBehind, rv.Need = Behind, 0, 0
		}
		return rv
	}
	t := moremath.TDist{V: dof}
	q := moremath.InvCDF(t)(1 - opt.Alpha)
	rv.Lo, rv.Hi = math.Exp(mean-q*se), math.Exp(mean+q*se)
	rv.PBehind = 1 - t.CDF((mean-delta)/se)
	rv.PEquiv = math.Max(1-t.CDF((mean+delta)/se), t.CDF((mean-delta)/se))
	switch {
	case rv.PEquiv < opt.Alpha:
		rv.Status, rv.Need = Equivalent, 0
	case rv.PBehind < opt.Alpha:
		rv.Status, rv.Need = Behind, 0
	default:
		if rv.Need = need(mean, se*math.Sqrt(float64(n)), delta, opt); rv.Need < 0 {
			rv.Why = "the best by median is not ahead on average"
		}
	}
	return rv
}

// need estimates the repetitions that decide a comparison whose
// differences have mean m and standard deviation sd (per repetition): the
// fewest n at which the test that the mean points to — behind (m beyond
// the margin) or equivalent (m within it) — reaches Alpha with
// probability Power, by the normal approximation; -1 when neither can
// (the best by median is not the best on average, by more than the
// margin; or m is the margin itself).
func need(m, sd, delta float64, opt DecideOptions) int {
	z := moremath.StdNormal.InvCDF
	za, zb := z(1-opt.Alpha), z(opt.Power)
	est := math.Inf(1)
	if m > delta {
		est = math.Pow((za+zb)*sd/(m-delta), 2)
	}
	if math.Abs(m) < delta {
		zb2 := z(1 - (1-opt.Power)/2)
		est = math.Min(est, math.Pow((za+zb2)*sd/(delta-math.Abs(m)), 2))
	}
	switch {
	case math.IsInf(est, 1) || math.IsNaN(est):
		return -1
	case est > MaxNeed:
		return MaxNeed
	}
	return max(int(math.Ceil(est)), minPairs)
}

// values returns m's values, in order of rounds.
func values(m map[int]float64) []float64 {
	var rs []int
	for r := range m {
		rs = append(rs, r)
	}
	slices.Sort(rs)
	out := make([]float64, len(rs))
	for i, r := range rs {
		out[i] = m[r]
	}
	return out
}

// String describes d in one line, for messages and tests.
func (d Decision) String() string {
	switch d.Verdict {
	case Winner:
		return fmt.Sprintf("winner %s", d.Best)
	case Group:
		return fmt.Sprintf("group %v ahead of %v", d.Group, d.Rest)
	case Undecided:
		return fmt.Sprintf("undecided (best %s; need %d)", d.Best, d.Need)
	}
	return "no test: " + d.Why
}
