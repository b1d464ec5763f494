package stats

import (
	"math"
	"slices"
	"testing"
)

// TestHolm checks Holm's procedure against the textbook example (four
// tests at α 0.05: the two smallest p-values reject, then 0.03 is not
// below 0.05/2 and the procedure stops; R's p.adjust(method = "holm")
// gives the adjusted values), untested hypotheses left out of the
// family, adjusted values capped at 1 and kept monotone.
func TestHolm(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		name  string
		ps    []float64
		alpha float64
		adj   []float64
		sig   []bool
	}{
		{name: "textbook", ps: []float64{0.01, 0.04, 0.03, 0.005}, alpha: 0.05,
			adj: []float64{0.03, 0.06, 0.06, 0.02}, sig: []bool{true, false, false, true}},
		{name: "all significant", ps: []float64{0.001, 0.01, 0.02}, alpha: 0.05,
			adj: []float64{0.003, 0.02, 0.02}, sig: []bool{true, true, true}},
		{name: "untested left out", ps: []float64{0.02, nan, 0.04}, alpha: 0.05,
			adj: []float64{0.04, nan, 0.04}, sig: []bool{true, false, true}},
		{name: "capped at 1", ps: []float64{0.6, 0.9}, alpha: 0.05,
			adj: []float64{1, 1}, sig: []bool{false, false}},
		{name: "a later small p after a stop", ps: []float64{0.03, 0.03, 0.001}, alpha: 0.05,
			adj: []float64{0.06, 0.06, 0.003}, sig: []bool{false, false, true}},
		{name: "none", ps: nil, alpha: 0.05, adj: []float64{}, sig: []bool{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			adj, sig := Holm(tc.ps, tc.alpha)
			if !slices.EqualFunc(adj, tc.adj, near) || !slices.Equal(sig, tc.sig) {
				t.Errorf("Holm(%v, %g) = %v, %v; want %v, %v", tc.ps, tc.alpha, adj, sig, tc.adj, tc.sig)
			}
		})
	}
}
