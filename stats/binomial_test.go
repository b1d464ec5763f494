package stats

import (
	"math"
	"testing"
)

// TestClopperPearson checks the exact interval against published values:
// 0 of 20 → [0, 16.8%]; 1 of 20 → [0.13%, 24.9%]; 10 of 10 → [69.2%, 100%].
func TestClopperPearson(t *testing.T) {
	for _, tc := range []struct {
		k, n   int
		lo, hi float64
	}{
		{0, 20, 0, 0.1684}, {1, 20, 0.0013, 0.2487}, {10, 10, 0.6915, 1}, {9, 10, 0.5550, 0.9975},
	} {
		lo, hi := ClopperPearson(tc.k, tc.n, 0.95)
		if math.Abs(lo-tc.lo) > 5e-4 || math.Abs(hi-tc.hi) > 5e-4 {
			t.Errorf("ClopperPearson(%d, %d) = [%.4f, %.4f], want [%.4f, %.4f]", tc.k, tc.n, lo, hi, tc.lo, tc.hi)
		}
	}
}
