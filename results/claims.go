package results

import (
	"math"

	"concbench/stats"
)

// Claim is one of the seed's claims about Leader/Followers (LF) and
// Half-Sync/Half-Reactive (HS/HR) that the report's Claims table tests
// (CompareClaim): LF's per-request cost is lower than HS/HR's.
type Claim struct {
	Short  string // the table's name for it: "context switches"
	Text   string // the claim, e.g. "LF needs no context switch per request; HS/HR pays one"
	Metric Metric
	Unit   string // the metric's unit in the table
}

// Claims are the claims the table tests, in its order; the cost figures
// (ctxsw, cpu, allocs) draw their metrics.
var Claims = []Claim{
	{Short: "context switches", Text: "LF needs no context switch per request; HS/HR pays one for the hand-off",
		Metric: CtxswPerReq, Unit: "ctxsw/req"},
	{Short: "CPU", Text: "LF avoids the hand-off's synchronization and copying, so it spends less CPU per request than HS/HR",
		Metric: CPUPerReq, Unit: "µs/req"},
	{Short: "allocations", Text: "LF needs no allocation per request; HS/HR allocates one to hand each request over",
		Metric: AllocsPerReq, Unit: "allocs/req"},
}

// The decisions of a claim's test (ClaimTest.Decision).
const (
	ClaimShown     = "shown"
	ClaimRefuted   = "refuted"
	ClaimUndecided = "undecided"
	ClaimUntested  = "untested"
)

// ClaimTest is the test of a claim on one pair, a Leader/Followers
// configuration (lf) and a Half-Sync/Half-Reactive one (hs), and,
// after HolmClaims, its decision.
type ClaimTest struct {
	N1, N2 int // valid repetitions of lf and hs
	// Paired says the test paired rounds (Rounds of them), else it was
	// Welch's on all the values.
	Paired bool
	Rounds int
	Ratio  stats.Ratio // LF ÷ HS/HR with its 95 % interval
	// PLower and PHigher are the one-sided tests' p-values of LF lower
	// and of LF higher (t on the logarithms); AdjLower and AdjHigher
	// their Holm-adjusted values over the family (NaN: untested).
	PLower, PHigher, AdjLower, AdjHigher float64
	SigLower, SigHigher                  bool
	Why                                  string // why it is untested
	Decision                             string // ClaimShown, …; set by HolmClaims
	// Zero says that a value is 0 (an LF configuration that allocated
	// nothing): a ratio has no meaning; the test has it at half the
	// smallest positive value of the pair, below every other.
	Zero bool
}

// CompareClaim tests a claim on the valid repetitions of lf and hs (named
// lfName and hsName in the reasons): LF ÷ HS/HR on the logarithms of
// their values, paired by repetition where they share enough
// (repetitions are interleaved, so a round shares the machine's drift),
// one-sided in each direction (stats.Decide, as the who-wins table
// decides), with the ratio's 95 % interval. higherIsBetter is the
// metric's.
func CompareClaim(lfName string, lfAgg Aggregate, hsName string, hsAgg Aggregate, higherIsBetter bool) ClaimTest {
	nan := math.NaN()
	r := ClaimTest{PLower: nan, PHigher: nan, AdjLower: nan, AdjHigher: nan}
	arm := func(agg Aggregate, label string) stats.Arm {
		x := stats.Arm{Name: label, Values: map[int]float64{}}
		for i, v := range agg.Values {
			x.Values[agg.Reps[i]] = v
			r.Zero = r.Zero || v <= 0
		}
		return x
	}
	lf, hs := arm(lfAgg, "lf"), arm(hsAgg, "hs")
	r.N1, r.N2 = len(lf.Values), len(hs.Values)
	switch {
	case r.N1 == 0:
		r.Why = "no valid repetition of " + lfName
		return r
	case r.N2 == 0:
		r.Why = "no valid repetition of " + hsName
		return r
	}
	// Alpha 0.025: the rival's interval is then at 95 %; the p-values
	// do not depend on it.
	d := stats.Decide([]stats.Arm{lf, hs}, stats.DecideOptions{HigherIsBetter: higherIsBetter, Alpha: 0.025, Unpaired: true})
	exact := len(d.Rivals) == 1 && d.Rivals[0].Lo == d.Rivals[0].Hi && !math.IsNaN(d.Rivals[0].Lo)
	if exact && math.IsNaN(d.Rivals[0].PBehind) {
		// The same in every round: no evidence either way.
		d.Rivals[0].PBehind = 1
	}
	if len(d.Rivals) == 0 || math.IsNaN(d.Rivals[0].PBehind) {
		r.Why = d.Why
		if len(d.Rivals) > 0 && d.Rivals[0].Why != "" {
			r.Why = d.Rivals[0].Why
		}
		if r.Why == "" {
			r.Why = "no test"
		}
		return r
	}
	rv := d.Rivals[0]
	r.Paired, r.Rounds = rv.Paired, rv.Rounds
	// rv compares the better one (d.Best) with the other: its ratio is
	// the better one's advantage, rival ÷ best for a cost.
	lo, est, hi := 1/rv.Hi, 1/rv.Ratio, 1/rv.Lo // LF ÷ HS/HR when LF is the better
	// The other direction's one-sided p; an exact comparison (no spread)
	// shows nothing the other way.
	other := 1 - rv.PBehind
	if exact {
		other = 1
	}
	r.PLower, r.PHigher = rv.PBehind, other
	if d.Best == "hs" {
		lo, est, hi = rv.Lo, rv.Ratio, rv.Hi
		r.PLower, r.PHigher = other, rv.PBehind
	}
	if higherIsBetter {
		lo, est, hi = 1/hi, 1/est, 1/lo
	}
	r.Ratio = stats.Ratio{Est: est, Lo: lo, Hi: hi, Level: 0.95, OK: !r.Zero}
	return r
}

// HolmClaims adjusts tests by Holm's procedure (stats.Holm) at alpha —
// both directions of every test, one family — and decides each: shown
// (LF significantly lower), refuted (LF significantly higher),
// undecided, or untested.
func HolmClaims(tests []*ClaimTest, alpha float64) {
	ps := make([]float64, 0, 2*len(tests))
	for _, r := range tests {
		ps = append(ps, r.PLower, r.PHigher)
	}
	adj, sig := stats.Holm(ps, alpha)
	for i, r := range tests {
		r.AdjLower, r.AdjHigher = adj[2*i], adj[2*i+1]
		r.SigLower, r.SigHigher = sig[2*i], sig[2*i+1]
		switch {
		case math.IsNaN(r.PLower):
			r.Decision = ClaimUntested
		case r.SigLower:
			r.Decision = ClaimShown
		case r.SigHigher:
			r.Decision = ClaimRefuted
		default:
			r.Decision = ClaimUndecided
		}
	}
}
