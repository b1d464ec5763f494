package stats

import (
	"math"
	"slices"
	"testing"
)

// TestRanks checks the ranks by hand: distinct values take their places
// in sorted order, tied ones the mean of the places they span.
func TestRanks(t *testing.T) {
	for _, tc := range []struct {
		name     string
		in, want []float64
	}{
		{name: "empty", in: nil, want: []float64{}},
		{name: "distinct", in: []float64{3, 1, 2}, want: []float64{3, 1, 2}},
		{name: "a tie", in: []float64{5, 1, 5, 0}, want: []float64{3.5, 2, 3.5, 1}},
		{name: "all tied", in: []float64{2, 2, 2}, want: []float64{2, 2, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Ranks(tc.in); !slices.Equal(got, tc.want) {
				t.Errorf("Ranks(%v) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}

// TestSpearman checks Spearman's ρ against a textbook example (IQ
// against hours of television, ρ = −29/165), exact monotone relations,
// ties, and the degenerate cases that give 0.
func TestSpearman(t *testing.T) {
	for _, tc := range []struct {
		name string
		x, y []float64
		want float64
	}{
		{name: "textbook", x: []float64{106, 86, 100, 101, 99, 103, 97, 113, 112, 110},
			y: []float64{7, 0, 27, 50, 28, 29, 20, 12, 6, 17}, want: -29.0 / 165},
		{name: "monotone, not linear", x: []float64{1, 2, 3, 4, 5}, y: []float64{1, 4, 9, 16, 25}, want: 1},
		{name: "reversed", x: []float64{1, 2, 3, 4}, y: []float64{8, 6, 4, 2}, want: -1},
		// Ranks x 1,2,3,4 and y 1.5,1.5,3,4: Pearson's r of the ranks.
		{name: "a tie", x: []float64{1, 2, 3, 4}, y: []float64{5, 5, 6, 7}, want: 4.5 / math.Sqrt(5*4.5)},
		{name: "two pairs", x: []float64{1, 2}, y: []float64{2, 1}, want: 0},
		{name: "different lengths", x: []float64{1, 2, 3}, y: []float64{1, 2}, want: 0},
		{name: "constant", x: []float64{1, 2, 3}, y: []float64{4, 4, 4}, want: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Spearman(tc.x, tc.y); !near(got, tc.want) {
				t.Errorf("Spearman = %.12g, want %.12g", got, tc.want)
			}
		})
	}
}
