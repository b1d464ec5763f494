package stats

import (
	"math"
	"testing"
)

// TestMannKendallZ checks the trend score against S computed by hand:
// n = 4 has variance 4·3·13/18; the score is (S − sign S)/√variance.
func TestMannKendallZ(t *testing.T) {
	v4 := math.Sqrt(4 * 3 * 13 / 18.0)
	v5 := math.Sqrt(5 * 4 * 15 / 18.0)
	for _, tc := range []struct {
		name string
		xs   []float64
		want float64
	}{
		{name: "increasing", xs: []float64{1, 2, 3, 4}, want: 5 / v4},
		{name: "decreasing", xs: []float64{4, 3, 2, 1}, want: -5 / v4},
		{name: "one swap", xs: []float64{1, 3, 2, 4}, want: 3 / v4}, // S = 5 − 1
		{name: "a tie", xs: []float64{1, 1, 2, 3, 2}, want: 5 / v5}, // S = 7 − 1
		{name: "no trend", xs: []float64{1, 2, 2, 1}, want: 0},
		{name: "too few", xs: []float64{1, 2, 3}, want: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := MannKendallZ(tc.xs); !near(got, tc.want) {
				t.Errorf("MannKendallZ(%v) = %.12g, want %.12g", tc.xs, got, tc.want)
			}
		})
	}
}
