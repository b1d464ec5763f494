package stats

import "math"

// MannKendallZ returns the Mann–Kendall trend statistic of xs as a
// standard normal score (positive: increasing), with continuity
// correction and without a tie correction (the load generator's values
// are means of many durations, rarely tied); 0 for fewer than 4 values,
// too few for the normal score to mean anything.
func MannKendallZ(xs []float64) float64 {
	n := len(xs)
	if n < 4 {
		return 0
	}
	s := 0.0
	for i := range n {
		for j := i + 1; j < n; j++ {
			switch {
			case xs[j] > xs[i]:
				s++
			case xs[j] < xs[i]:
				s--
			}
		}
	}
	v := float64(n*(n-1)*(2*n+5)) / 18
	switch {
	case s > 0:
		return (s - 1) / math.Sqrt(v)
	case s < 0:
		return (s + 1) / math.Sqrt(v)
	}
	return 0
}
