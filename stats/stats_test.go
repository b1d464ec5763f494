package stats

import "math"

// near reports whether a and b agree to 1e-9 relative (1e-9 absolute
// near 0), and treats equal infinities and two NaNs as equal.
func near(a, b float64) bool {
	if math.IsInf(a, 0) || math.IsInf(b, 0) || math.IsNaN(a) || math.IsNaN(b) {
		return a == b || (math.IsNaN(a) && math.IsNaN(b))
	}
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b))
}
