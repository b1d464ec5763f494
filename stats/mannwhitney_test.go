package stats

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

// TestMannWhitney checks the Mann–Whitney U p-values against exact values:
// two fully separated samples of 6 give p = 2/C(12,6) = 1/462; of 3,
// 2/C(6,3) = 0.1, which cannot reach α = 0.05 and says so.
func TestMannWhitney(t *testing.T) {
	tests := []struct {
		name        string
		a, b        []float64
		p           float64
		significant bool
		warn        string
	}{
		{name: "separated, n=6", a: []float64{1, 2, 3, 4, 5, 6}, b: []float64{7, 8, 9, 10, 11, 12}, p: 1.0 / 462, significant: true},
		{name: "separated, n=3", a: []float64{1, 2, 3}, b: []float64{7, 8, 9}, p: 0.1, warn: "need >= 4 samples"},
		{name: "empty", a: nil, b: []float64{1}, p: 1, warn: "empty sample"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := slices.Clone(tc.a)
			c := MannWhitney(a, tc.b)
			if !slices.Equal(a, tc.a) {
				t.Errorf("MannWhitney modified its input")
			}
			if !near(c.P, tc.p) || c.Significant() != tc.significant {
				t.Errorf("P = %v significant=%v, want %v %v", c.P, c.Significant(), tc.p, tc.significant)
			}
			if tc.warn != "" && !strings.Contains(strings.Join(c.Warnings, "\n"), tc.warn) {
				t.Errorf("warnings %q lack %q", c.Warnings, tc.warn)
			}
		})
	}
}

func TestMannWhitneyPAtMostOne(t *testing.T) {
	// Heavily tied samples: the exact U-test p-value with ties must still be
	// reported as a probability.
	c := MannWhitney([]float64{1, 1, 1, 2, 2, 2}, []float64{1, 1, 2, 2, 2, 1})
	if c.P > 1 || c.P < 0 {
		t.Fatalf("p = %v, want within [0, 1]", c.P)
	}
}

// TestMannWhitneyGreater checks the one-sided Mann–Whitney test against
// exact values (complete separation: 1/C(n1+n2, n1)), ties, and its
// normal approximation against the exact distribution where both apply.
func TestMannWhitneyGreater(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b []float64
		want float64
	}{
		{name: "separated 3+3", a: []float64{1, 2, 3}, b: []float64{4, 5, 6}, want: 1.0 / 20},
		{name: "separated the other way", a: []float64{4, 5, 6}, b: []float64{1, 2, 3}, want: 1},
		{name: "separated 7+7", a: []float64{1, 2, 3, 4, 5, 6, 7}, b: []float64{8, 9, 10, 11, 12, 13, 14}, want: 1.0 / 3432},
		{name: "separated 2+4", a: []float64{1, 2}, b: []float64{3, 4, 5, 6}, want: 1.0 / 15},
		{name: "one overlap 6+6", a: []float64{1, 2, 3, 4, 5, 7}, b: []float64{6, 8, 9, 10, 11, 12}, want: 2.0 / 924},
		{name: "all tied", a: []float64{5, 5, 5}, b: []float64{5, 5, 5}, want: 1},
		{name: "empty", a: nil, b: []float64{1, 2}, want: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := MannWhitneyGreater(tc.a, tc.b); math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("MannWhitneyGreater = %.6g, want %.6g", got, tc.want)
			}
		})
	}
	// The approximation (above 40 values) against the exact tail, 20+20:
	// shifted samples with a few ties.
	var a, b []float64
	for i := range 20 {
		a = append(a, float64(i%17))
		b = append(b, float64(i%17)+2.5)
	}
	exact := MannWhitneyGreater(a, b)
	a2, b2 := append(slices.Clone(a), a...), append(slices.Clone(b), b...) // 40+40: approximated
	if exact <= 0 || exact >= 0.5 {
		t.Fatalf("exact p %.4g for a shifted sample", exact)
	}
	if approx := MannWhitneyGreater(a2, b2); approx >= exact {
		t.Errorf("doubling the samples did not lower p: %.4g (exact, 20+20) vs %.4g (approximated, 40+40)", exact, approx)
	}
}

// TestMannWhitneyMinP checks the smallest one-sided p-value of the U test
// against exact values, 1 / C(n1+n2, n1), and against the test itself on
// completely separated samples.
func TestMannWhitneyMinP(t *testing.T) {
	for _, tc := range []struct {
		n1, n2 int
		want   float64
	}{
		{3, 3, 0.05}, {3, 4, 1.0 / 35}, {3, 5, 1.0 / 56}, {4, 4, 1.0 / 70}, {6, 6, 1.0 / 924}, {7, 7, 1.0 / 3432}, {1, 1, 0.5}, {0, 5, 1},
	} {
		t.Run(fmt.Sprintf("%d+%d", tc.n1, tc.n2), func(t *testing.T) {
			if got := MannWhitneyMinP(tc.n1, tc.n2); math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("MannWhitneyMinP(%d, %d) = %v, want %v", tc.n1, tc.n2, got, tc.want)
			}
			if tc.n1 == 0 {
				return
			}
			var a, b []float64
			for i := range tc.n1 {
				a = append(a, float64(i))
			}
			for i := range tc.n2 {
				b = append(b, float64(tc.n1+i))
			}
			if got := MannWhitneyGreater(a, b); math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("MannWhitneyGreater on separated %d+%d = %v, want the smallest p %v", tc.n1, tc.n2, got, tc.want)
			}
		})
	}
}
