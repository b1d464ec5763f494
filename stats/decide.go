package stats

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	moremath "github.com/aclements/go-moremath/stats"
)

// Censor says what a value of an Arm stands for: a measurement, or a
// bound on one.
type Censor int8

// The kinds of value.
const (
	// Exact is a measured value.
	Exact Censor = 0
	// AtLeast is a lower bound: the true value is at least the one
	// recorded (a capacity search capped by the load generator's
	// ceiling: "≥ x").
	AtLeast Censor = 1
	// AtMost is an upper bound: the true value is at most the one
	// recorded (a search that found no rate meeting its objective: below
	// the lowest rate it failed, "< x").
	AtMost Censor = -1
)

// Arm is one configuration's values in a comparison, by round: the
// repetition that measured it. Repetitions are interleaved across
// configurations, so that a round's values were measured minutes apart
// at most and share the machine's drift; Decide compares them in pairs.
type Arm struct {
	Name   string
	Values map[int]float64 // by round
	// Censored marks the rounds whose value is a bound, not a
	// measurement; a round absent from it is Exact.
	Censored map[int]Censor
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
	// Power is the power, per cell, that the repetitions a decision
	// needs are estimated for (default 0.8).
	Power float64
	// Pool estimates the spread of the comparisons from every arm at
	// once: the residual variance of the logarithms with rounds as
	// blocks (Block), where Bartlett's test does not reject that the
	// arms' residual variances are equal; otherwise, and without Pool,
	// each comparison rests on its own pairs' spread.
	Pool bool
	// Unpaired lets a comparison whose arms share fewer than minPairs
	// rounds fall back to Welch's unpaired t-test on all their values.
	// The who-wins table does not: a round missing on one side (an
	// invalid point, a spoiled window) is left out for both, so that an
	// exclusion never favours one side (the report's Claims, which
	// compare configurations measured at fractions of their own
	// capacity, do).
	Unpaired bool
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
	// Near: an indifference-zone selection (Hsu's multiple comparisons
	// with the best, by Bonferroni's bound): neither Winner nor Group
	// holds, but every other configuration is shown not to be ahead of
	// the best by more than the margin (Rival.PNotAhead below Alpha over
	// the number of rivals), so that the best is, at level Alpha, the
	// true best or within the margin of it — whichever configuration
	// the data happened to put first. Group is the best and the rivals
	// not shown to be behind (Holm's within the cell), which may be
	// within the margin too; Rest the rivals shown to be behind.
	Near Verdict = "near"
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
	// Rounds are the rounds the comparison rests on: those both have a
	// value in, less those where both values are bounds in the same
	// direction (Dropped: both below their searches' lowest failing
	// rates, both beyond the generator — a round that orders nothing).
	// Paired is false only for Welch's fallback (DecideOptions.Unpaired).
	Rounds, Dropped int
	Paired          bool
	// Bounded counts the rounds where a value is a bound: the gain is
	// then a bound too, and only the claim it bounds can be made —
	// "behind" when every bound understates the best's advantage, none
	// when one overstates it (Why says so).
	Bounded int
	// Ratio is the best's advantage over the rival as a factor ≥ 1 when
	// the best is better on average (its value over the rival's, or the
	// rival's over its value when lower is better): the exponential of
	// the mean difference of logarithms. Lo and Hi bound it at level
	// 1 − 2α (the interval the equivalence test is the dual of).
	Ratio, Lo, Hi float64
	// DF is the degrees of freedom of the test; Pooled says its spread
	// is the cell's pooled residual variance (Decision.Pool).
	DF     float64
	Pooled bool
	// PBehind is the one-sided p-value of the rival being behind the
	// best by more than the margin (the ratio beyond 1 + Margin); PEquiv
	// the p-value of the two one-sided tests of the ratio lying within
	// the margin (TOST). NaN: no test.
	PBehind, PEquiv float64
	// PNotAhead is the one-sided p-value of the rival not being ahead of
	// the best by more than the margin (the ratio above 1/(1 + Margin)):
	// the claim Near rests on. NaN: no test.
	PNotAhead float64
	// Status is Behind, Equivalent or Undetermined. The two hypotheses
	// are disjoint — the ratio within the margin, or beyond it — so that
	// no rival can be shown to be both, and two runs of one experiment
	// can differ only by being undetermined, not by calling a rival a
	// member in one and behind in the other.
	Status string
	// PHolm is the p-value of Status's claim adjusted by Holm's
	// procedure over the cell's rivals, and Held whether the claim holds
	// at Alpha after that adjustment: what an undecided cell may still
	// claim about this rival (a decided cell's claims hold together, an
	// intersection–union test). NaN and false for an undetermined rival.
	PHolm float64
	Held  bool
	// Need is, for an undetermined rival, the repetitions that would
	// decide it at the spread measured (its central estimate; NeedLo and
	// NeedHi the estimates at the ends of the spread's 80 % interval; 0:
	// decided; -1: not estimable, and Why says why).
	Need, NeedLo, NeedHi int
	Why                  string

	needIn needInput // what needs estimates Need from
}

// PoolInfo is how a decision estimated its spread.
type PoolInfo struct {
	// Used says the comparisons rest on the pooled residual variance.
	Used bool
	// SD is the residual standard deviation of one logarithm (a round's
	// value, the arm's and the round's effects removed), DF its degrees
	// of freedom, Arms the arms it was estimated from.
	SD   float64
	DF   int
	Arms int
	// BartlettP is the p-value of Bartlett's test that the arms'
	// residual variances are equal (NaN: not tested).
	BartlettP float64
	// Why says why the pooled variance was not used, when Pool was asked
	// for.
	Why string
}

// Decision is the outcome of Decide.
type Decision struct {
	Verdict Verdict
	// Best is the configuration with the best geometric mean (the mean
	// of its logarithms, the quantity the tests compare); Group the leading
	// group (Best first; Winner: Best alone; Group: Best and the
	// equivalent ones); Rest every other configuration, in order.
	Best  string
	Group []string
	Rest  []string
	// Rivals are the comparisons of Best with every other configuration,
	// in order of their geometric means.
	Rivals []Rival
	// Need is, for an undecided cell, the repetitions that would decide
	// it: those the most demanding undetermined rival needs for a winner
	// or group, or, where fewer, those that would make it Near (its
	// central estimate; NeedLo and NeedHi the range); -1 when neither
	// can be estimated.
	Need, NeedLo, NeedHi int
	// Pool is how the spread was estimated (DecideOptions.Pool).
	Pool PoolInfo
	// Bounds counts the values that were bounds: censored ones, and
	// values ≤ 0, which stand for the worst of their own arm (below its
	// lowest value where higher is better, above its highest where lower
	// is) as bounds in that direction.
	Bounds int
	// Why explains a NoTest decision.
	Why string
	// Margin and Alpha are the options the decision was made with.
	Margin, Alpha float64
}

// minPairs is the fewest rounds that a paired comparison rests on.
const minPairs = 3

// MaxNeed bounds the repetitions estimate: beyond it, more repetitions
// are not a practical way to a decision.
const MaxNeed = 1000

// prepared is an arm as Decide compares it: logarithms by round, with
// their censoring.
type prepared struct {
	name   string
	logs   map[int]float64
	cens   map[int]Censor
	center float64 // the mean of the logarithms
	// worst: the arm has no positive value; it ranks last and is behind
	// any arm with one in the rounds they share.
	worst bool
}

// prepare turns a into logarithms. A value ≤ 0 (or not finite) is the
// worst value of its own arm, as a bound: it stands at the arm's lowest
// positive value as AtMost where higher is better, its highest as
// AtLeast where lower is better — a stand-in that depends on the arm
// alone, never on the other configurations of the cell. An arm without
// a positive value is marked worst.
func prepare(a Arm, higher bool) (prepared, int) {
	x := prepared{name: a.Name, logs: map[int]float64{}, cens: map[int]Censor{}}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range a.Values {
		if v > 0 && !math.IsInf(v, 0) {
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	bounds := 0
	for r, v := range a.Values {
		if math.IsNaN(v) {
			continue
		}
		c := a.Censored[r]
		if !(v > 0) || math.IsInf(v, 0) {
			if math.IsInf(lo, 1) {
				x.worst = true
				x.logs[r] = math.Inf(-1)
				if !higher {
					x.logs[r] = math.Inf(1)
				}
				continue
			}
			v, c = lo, AtMost
			if !higher {
				v, c = hi, AtLeast
			}
		}
		x.logs[r] = math.Log(v)
		if c != Exact {
			x.cens[r] = c
			bounds++
		}
	}
	if x.worst {
		// Every value is the worst: the arm has no scale of its own.
		x.center = math.Inf(-1)
		if !higher {
			x.center = math.Inf(1)
		}
		return x, 0
	}
	// The mean, not the median: the best must be ahead on the quantity
	// its comparisons test, or a rival ahead of it on average leaves the
	// cell with no claim to make ("the best by median is not ahead on
	// average", seen on CPU per request 3 % apart).
	// Summed in order of rounds: in a map's order, arms of equal values
	// could differ in the last bit, and their order with them.
	sum := 0.0
	for _, r := range sortedRounds(x.logs) {
		sum += x.logs[r]
	}
	if n := len(x.logs); n > 0 {
		x.center = sum / float64(n)
	}
	return x, bounds
}

// Decide says which of arms is best, and whether that is decided: a
// single winner (every other arm shown to be behind the best by more than
// Margin, one-sided test at Alpha), a leading group shown to be
// equivalent within Margin (two one-sided tests at Alpha each), so that
// the cell's claim — every member equivalent, every other arm behind —
// is an intersection–union test at level Alpha; or undecided, with the
// repetitions that a decision would need at the spread measured, and the
// claims about single rivals that still hold with Holm's adjustment
// over the cell (Rival.Held).
//
// The tests are on logarithms (the metrics differ by factors), paired by
// round — interleaved repetitions share the machine's drift, which
// pairing cancels — with the spread of the pairs, or with the residual
// variance pooled over every arm (DecideOptions.Pool). Bounds (Censored
// values, and values ≤ 0, see prepare) restrict the claims a comparison
// may make (Rival.Bounded).
func Decide(arms []Arm, opt DecideOptions) Decision {
	if opt.Alpha <= 0 {
		opt.Alpha = 0.05
	}
	if opt.Power <= 0 {
		opt.Power = 0.8
	}
	d := Decision{Margin: opt.Margin, Alpha: opt.Alpha}
	var as []prepared
	positive := false
	for _, a := range arms {
		x, b := prepare(a, opt.HigherIsBetter)
		if len(x.logs) == 0 {
			continue
		}
		d.Bounds += b
		positive = positive || !x.worst
		as = append(as, x)
	}
	switch {
	case !positive && len(arms) > 0:
		d.Verdict, d.Why = NoTest, "no positive value (no configuration has a value above 0 in any repetition)"
		return d
	case len(as) < 2:
		d.Verdict, d.Why = NoTest, "fewer than two configurations with valid repetitions"
		return d
	}
	sign := 1.0
	if !opt.HigherIsBetter {
		sign = -1
	}
	slices.SortStableFunc(as, func(x, y prepared) int { return cmp.Compare(sign*y.center, sign*x.center) })
	if opt.Pool {
		d.Pool = pool(as)
	}
	best := as[0]
	d.Best, d.Group = best.name, []string{best.name}
	delta := math.Log(1 + opt.Margin)
	for _, o := range as[1:] {
		rv := compare(best, o, sign, delta, opt, &d.Pool)
		rv.Name = o.name
		d.Rivals = append(d.Rivals, rv)
	}
	holm(d.Rivals, opt.Alpha)
	needs(d.Rivals, opt)
	undecided := false
	d.Need, d.NeedLo, d.NeedHi = 0, 0, 0
	for _, rv := range d.Rivals {
		switch rv.Status {
		case Equivalent:
			d.Group = append(d.Group, rv.Name)
		case Behind:
			d.Rest = append(d.Rest, rv.Name)
		default:
			d.Rest = append(d.Rest, rv.Name)
			undecided = true
			if rv.Need < 0 || d.Need < 0 {
				d.Need, d.NeedLo, d.NeedHi = -1, -1, -1
			} else {
				d.Need, d.NeedLo, d.NeedHi = max(d.Need, rv.Need), max(d.NeedLo, rv.NeedLo), max(d.NeedHi, rv.NeedHi)
			}
		}
	}
	if undecided {
		// The cheaper way to a decision: a winner or group, or a best
		// within the margin of the best.
		if n, lo, hi := nearNeed(d.Rivals, opt); n > 0 && (d.Need < 0 || n < d.Need) {
			d.Need, d.NeedLo, d.NeedHi = n, lo, hi
		}
	}
	switch {
	case undecided && nearBest(d.Rivals, opt.Alpha):
		d.Verdict = Near
		d.Group, d.Rest = []string{d.Best}, nil
		for _, rv := range d.Rivals {
			if rv.Status == Behind && rv.Held {
				d.Rest = append(d.Rest, rv.Name)
			} else {
				d.Group = append(d.Group, rv.Name)
			}
		}
	case undecided:
		d.Verdict = Undecided
	case len(d.Group) == 1:
		d.Verdict = Winner
	default:
		d.Verdict = Group
	}
	if d.Verdict == Winner || d.Verdict == Group {
		// The cell's claim holds as a whole: every rival's with it.
		for i := range d.Rivals {
			d.Rivals[i].Held = true
		}
	}
	return d
}

// nearBest reports whether every rival is shown not to be ahead of the best
// by more than the margin at alpha over the number of rivals. The best
// was chosen by the data, so one rival's test at alpha would not do:
// where the true best is ahead of a configuration by more than the
// margin and the data put that configuration first, the claim is false
// only if its test against the true best passes, and Bonferroni's bound
// over the configurations that could be first keeps the chance of that
// at alpha (Hsu, "Multiple Comparisons", 1996, ch. 4, with Dunnett's
// critical values where this uses Bonferroni's).
func nearBest(rivals []Rival, alpha float64) bool {
	if len(rivals) == 0 {
		return false
	}
	for _, r := range rivals {
		if !(r.PNotAhead < alpha/float64(len(rivals))) {
			return false
		}
	}
	return true
}

// Kinds of bound a round's gain is, in compare.
const (
	gainExact = iota
	gainLower // the true gain is at least this
	gainUpper // at most this
)

// gainKind returns what the gain sign·(best − other) of one round is,
// from its two values' censoring, and whether the round orders anything
// (false when both are bounds in the same direction).
func gainKind(cb, co Censor, sign float64) (int, bool) {
	// In units where higher is better: a best that is at least its value
	// and a rival that is at most its value both understate the gain.
	b, o := int(cb)*int(sign), int(co)*int(sign)
	switch {
	case b == 0 && o == 0:
		return gainExact, true
	case b == o:
		return 0, false
	case b >= 0 && o <= 0:
		return gainLower, true
	}
	return gainUpper, true
}

// compare tests the best arm b against another, o: the gain g = sign ×
// (log best − log other) by round, positive where the best is better.
func compare(b, o prepared, sign, delta float64, opt DecideOptions, pl *PoolInfo) Rival {
	nan := math.NaN()
	rv := Rival{Ratio: nan, Lo: nan, Hi: nan, PBehind: nan, PEquiv: nan, PNotAhead: nan, PHolm: nan, Status: Undetermined, Need: -1, NeedLo: -1, NeedHi: -1, Paired: true}
	if o.worst {
		return worstRival(b, o, rv)
	}
	var g []float64
	lower, upper := 0, 0
	for _, r := range sortedRounds(b.logs) {
		y, ok := o.logs[r]
		if !ok {
			continue
		}
		k, orders := gainKind(b.cens[r], o.cens[r], sign)
		if !orders {
			rv.Dropped++
			continue
		}
		switch k {
		case gainLower:
			lower++
		case gainUpper:
			upper++
		}
		g = append(g, sign*(b.logs[r]-y))
	}
	rv.Rounds, rv.Bounded = len(g), lower+upper
	var mean, se, dof float64
	switch {
	case len(g) >= minPairs:
		s := moremath.Sample{Xs: g}
		mean, se, dof = s.Mean(), math.Sqrt(s.Variance()/float64(len(g))), float64(len(g)-1)
		if pl.Used && rv.Bounded == 0 {
			se, dof, rv.Pooled = math.Sqrt(2*pl.SD*pl.SD/float64(len(g))), float64(pl.DF), true
		}
	case opt.Unpaired && rv.Bounded == 0 && len(b.cens) == 0 && len(o.cens) == 0:
		lb, lo := values(b.logs), values(o.logs)
		if len(lb) < 2 || len(lo) < 2 {
			rv.Why = fmt.Sprintf("too few valid repetitions to compare (%d and %d)", len(lb), len(lo))
			return rv
		}
		rv.Paired = false
		sb, so := moremath.Sample{Xs: lb}, moremath.Sample{Xs: lo}
		vb, vo := sb.Variance()/float64(len(lb)), so.Variance()/float64(len(lo))
		mean, se = sign*(sb.Mean()-so.Mean()), math.Sqrt(vb+vo)
		if vb+vo > 0 {
			dof = (vb + vo) * (vb + vo) / (vb*vb/float64(len(lb)-1) + vo*vo/float64(len(lo)-1))
		}
	default:
		rv.Why = fmt.Sprintf("%d rounds with a value of both (a paired comparison needs %d)", len(g), minPairs)
		if rv.Dropped > 0 {
			rv.Why += fmt.Sprintf("; %d more where both are bounds in the same direction (both beyond the generator, or both below every rate probed), which order nothing", rv.Dropped)
		}
		return rv
	}
	rv.DF = dof
	rv.Ratio = math.Exp(mean)
	canBehind, canEquiv := upper == 0, rv.Bounded == 0
	if !canBehind {
		rv.Why = fmt.Sprintf("in %d of %d rounds a bound overstates the best's advantage (a rival beyond the generator's ceiling, or a best below every rate it probed): no claim can be made", upper, len(g))
	} else if !canEquiv {
		rv.Why = fmt.Sprintf("in %d of %d rounds a value is a bound (beyond the generator's ceiling, or below every rate probed): only \"behind\" can be shown, never \"within the margin\"", lower, len(g))
	}
	if se == 0 || dof <= 0 {
		// No spread: the comparison is exact.
		rv.Lo, rv.Hi = rv.Ratio, rv.Ratio
		if canBehind {
			rv.PNotAhead = 0
			if mean <= -delta {
				rv.PNotAhead = 1
			}
		}
		switch {
		case canEquiv && math.Abs(mean) < delta:
			rv.Status, rv.PEquiv, rv.Need, rv.NeedLo, rv.NeedHi = Equivalent, 0, 0, 0, 0
		case canBehind && mean > delta:
			rv.Status, rv.PBehind, rv.Need, rv.NeedLo, rv.NeedHi = Behind, 0, 0, 0, 0
		}
		return rv
	}
	t := moremath.TDist{V: dof}
	q := moremath.InvCDF(t)(1 - opt.Alpha)
	rv.Lo, rv.Hi = math.Exp(mean-q*se), math.Exp(mean+q*se)
	if canBehind {
		// A lower bound on the gain understates both claims: "behind"
		// and "not ahead" may still be made from it.
		rv.PBehind = 1 - t.CDF((mean-delta)/se)
		rv.PNotAhead = 1 - t.CDF((mean+delta)/se)
	}
	if canEquiv {
		rv.PEquiv = math.Max(1-t.CDF((mean+delta)/se), t.CDF((mean-delta)/se))
	}
	switch {
	case rv.PEquiv < opt.Alpha:
		rv.Status, rv.Need, rv.NeedLo, rv.NeedHi = Equivalent, 0, 0, 0
	case rv.PBehind < opt.Alpha:
		rv.Status, rv.Need, rv.NeedLo, rv.NeedHi = Behind, 0, 0, 0
	default:
		// needs (after every rival is compared) fills Need from these.
		rv.needIn = needInput{mean: mean, sd: se * math.Sqrt(float64(len(g))), df: dof, n: len(g), pooled: rv.Pooled, canEquiv: canEquiv, canBehind: canBehind}
		if !rv.Pooled && !rv.Paired {
			rv.needIn.sd = se * math.Sqrt(float64(min(len(values(b.logs)), len(values(o.logs)))))
			rv.needIn.n = min(len(values(b.logs)), len(values(o.logs)))
		}
	}
	return rv
}

// worstRival compares b with an arm o that has no positive value: o is
// behind in every round where b has one, exactly (the ratio is
// infinite), once they share minPairs such rounds.
func worstRival(b, o prepared, rv Rival) Rival {
	n := 0
	for r := range o.logs {
		if _, ok := b.logs[r]; ok {
			n++
		}
	}
	rv.Rounds = n
	if n < minPairs || b.worst {
		rv.Why = fmt.Sprintf("no value above 0 in any repetition, and %d rounds shared with the best (%d needed)", n, minPairs)
		return rv
	}
	rv.Ratio, rv.Lo, rv.Hi = math.Inf(1), math.Inf(1), math.Inf(1)
	rv.PBehind, rv.PNotAhead, rv.Status, rv.Need, rv.NeedLo, rv.NeedHi = 0, 0, Behind, 0, 0, 0
	rv.Why = "no value above 0 in any repetition: behind the best in every round"
	return rv
}

// holm adjusts the claims of rivals (each rival's status's p-value) by
// Holm's step-down procedure over the cell's rivals at alpha: PHolm and
// Held. An undetermined rival's smallest p-value is in the family too,
// so that the family is every comparison the cell made.
func holm(rivals []Rival, alpha float64) {
	ps := make([]float64, len(rivals))
	for i, r := range rivals {
		switch r.Status {
		case Behind:
			ps[i] = r.PBehind
		case Equivalent:
			ps[i] = r.PEquiv
		default:
			ps[i] = minP(r.PBehind, r.PEquiv)
		}
	}
	adj, sig := Holm(ps, alpha)
	for i := range rivals {
		if rivals[i].Status == Undetermined {
			continue
		}
		rivals[i].PHolm, rivals[i].Held = adj[i], sig[i]
	}
}

// minP is the smaller of two p-values, NaN for neither, 1 when neither
// was tested but the comparison was (it shows nothing).
func minP(a, b float64) float64 {
	switch {
	case math.IsNaN(a) && math.IsNaN(b):
		return 1
	case math.IsNaN(a):
		return b
	case math.IsNaN(b):
		return a
	}
	return math.Min(a, b)
}

// sortedRounds returns m's rounds in order.
func sortedRounds(m map[int]float64) []int {
	rs := make([]int, 0, len(m))
	for r := range m {
		rs = append(rs, r)
	}
	slices.Sort(rs)
	return rs
}

// values returns m's values, in order of rounds.
func values(m map[int]float64) []float64 {
	rs := sortedRounds(m)
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
	case Near:
		return fmt.Sprintf("near: %s within the margin of the best (%v not shown behind; %v behind)", d.Best, d.Group[1:], d.Rest)
	case Undecided:
		return fmt.Sprintf("undecided (best %s; need %d)", d.Best, d.Need)
	}
	return "no test: " + d.Why
}
