package stats

import (
	"cmp"
	"math"
	"slices"
)

// Ranks returns the ranks (1-based) of xs, tied values given the average
// of the ranks they span: the ranks of the rank tests (Spearman, the
// Mann–Whitney U test), in which ties must not favour either side.
func Ranks(xs []float64) []float64 {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(i, j int) int { return cmp.Compare(xs[i], xs[j]) })
	r := make([]float64, len(xs))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && xs[idx[j+1]] == xs[idx[i]] {
			j++
		}
		avg := float64(i+j)/2 + 1
		for k := i; k <= j; k++ {
			r[idx[k]] = avg
		}
		i = j + 1
	}
	return r
}

// Spearman returns Spearman's rank correlation of the pairs (x[i], y[i])
// (ties get their average rank), and 0 for fewer than 3 pairs, for
// slices of different lengths or for a constant sequence: the load
// generator reads 0 as "no dependence shown", which is what too little
// data shows.
func Spearman(x, y []float64) float64 {
	if len(x) != len(y) || len(x) < 3 {
		return 0
	}
	rx, ry := Ranks(x), Ranks(y)
	mean := float64(len(x)+1) / 2
	var sxy, sxx, syy float64
	for i := range rx {
		a, b := rx[i]-mean, ry[i]-mean
		sxy += a * b
		sxx += a * a
		syy += b * b
	}
	if sxx == 0 || syy == 0 {
		return 0
	}
	return sxy / math.Sqrt(sxx*syy)
}
