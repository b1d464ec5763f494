package results

import (
	"math"
	"testing"
)

// agg returns an Aggregate of values, one repetition each.
func agg(values ...float64) Aggregate {
	a := Aggregate{Values: values}
	for i := range values {
		a.Reps = append(a.Reps, i)
	}
	return a
}

// TestClaimDecisions: a clearly lower LF shows a cost claim, a clearly
// higher one refutes it, equal values leave it undecided, and a side
// without a valid repetition leaves it untested with the reason.
func TestClaimDecisions(t *testing.T) {
	hs := agg(10, 10.2, 9.9, 10.1, 10.3, 9.8)
	tests := []struct {
		name     string
		lf       Aggregate
		decision string
	}{
		{name: "lower", lf: agg(1, 1.02, 0.99, 1.01, 1.03, 0.98), decision: ClaimShown},
		{name: "higher", lf: agg(100, 102, 99, 101, 103, 98), decision: ClaimRefuted},
		{name: "equal", lf: hs, decision: ClaimUndecided},
		{name: "none", lf: agg(), decision: ClaimUntested},
	}
	var ct []*ClaimTest
	for _, tc := range tests {
		c := CompareClaim("lf", tc.lf, "hs", hs, false)
		ct = append(ct, &c)
	}
	HolmClaims(ct, 0.05)
	for i, tc := range tests {
		if got := ct[i].Decision; got != tc.decision {
			t.Errorf("%s: %s, want %s (p lower %g, higher %g)", tc.name, got, tc.decision, ct[i].PLower, ct[i].PHigher)
		}
	}
	if ct[3].Why != "no valid repetition of lf" || !math.IsNaN(ct[3].AdjLower) {
		t.Errorf("untested: why %q, adjusted p %g; want the reason and no p", ct[3].Why, ct[3].AdjLower)
	}
	if r := ct[0].Ratio; !r.OK || r.Hi >= 1 {
		t.Errorf("lower: LF ÷ HS/HR %+v, want an interval below 1", r)
	}
}
