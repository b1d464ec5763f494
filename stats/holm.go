package stats

import (
	"cmp"
	"math"
	"slices"
)

// Holm applies Holm's step-down procedure at family-wise level alpha to
// the p-values ps: sort the m tested p-values ascending; the k-th (from
// 0) is significant if it and every smaller one is below alpha/(m−k), so
// that the probability of rejecting any true null hypothesis of the
// family is at most alpha. A NaN in ps is an untested hypothesis, left
// out of the family. adj holds the adjusted p-values (the running
// maximum of min(1, (m−k)·p), NaN where untested) and sig whether each
// test is significant, both in ps's order. Ties in ps keep their order
// (a stable sort), so the result does not depend on the sort's whims.
func Holm(ps []float64, alpha float64) (adj []float64, sig []bool) {
	adj, sig = make([]float64, len(ps)), make([]bool, len(ps))
	var order []int
	for i, p := range ps {
		adj[i] = math.NaN()
		if !math.IsNaN(p) {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(x, y int) int { return cmp.Compare(ps[x], ps[y]) })
	m := len(order)
	stopped := false
	running := 0.0
	for k, i := range order {
		running = math.Max(running, math.Min(1, float64(m-k)*ps[i]))
		adj[i] = running
		if ps[i] >= alpha/float64(m-k) {
			stopped = true
		}
		sig[i] = !stopped
	}
	return adj, sig
}
