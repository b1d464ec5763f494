package stats

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// TestUDistribution checks the null distribution of the Mann–Whitney U
// statistic against the counts of the textbook table (6 and 6 values: 924
// arrangements, the first six U values 1, 1, 2, 3, 5, 7 ways) and that it
// sums to one.
func TestUDistribution(t *testing.T) {
	p := uDistribution(6, 6)
	if len(p) != 37 {
		t.Fatalf("%d values, want 37", len(p))
	}
	for u, want := range []float64{1, 1, 2, 3, 5, 7} {
		if got := p[u] * 924; math.Abs(got-want) > 1e-9 {
			t.Errorf("P(U=%d)·924 = %g, want %g", u, got, want)
		}
	}
	sum := 0.0
	for _, x := range p {
		sum += x
	}
	if math.Abs(sum-1) > 1e-12 {
		t.Errorf("probabilities sum to %g", sum)
	}
	// Symmetric: P(U=u) = P(U=mn-u), for unequal sizes too.
	q := uDistribution(3, 5)
	for u := range q {
		if math.Abs(q[u]-q[len(q)-1-u]) > 1e-12 {
			t.Errorf("uDistribution(3, 5) not symmetric at %d", u)
		}
	}
}

func TestRatioCI(t *testing.T) {
	b := []float64{1, 1.01, 1.02, 1.03, 1.04, 1.05}
	a := make([]float64, len(b))
	for i, x := range b {
		a[i] = 3 * x
	}
	r := RatioCI(a, b, 0.95)
	if !r.OK || math.Abs(r.Est-3) > 1e-9 || !(r.Lo < 3 && r.Hi > 3) || !r.Significant() {
		t.Errorf("a = 3b: %+v, want estimate 3 inside a significant interval", r)
	}
	if math.Abs(r.Level-(1-38.0/924)) > 1e-9 {
		t.Errorf("level %g, want 1-2·19/924", r.Level)
	}
	// The interval is the 6th smallest and 6th largest of the 36 ratios.
	var ratios []float64
	for _, x := range a {
		for _, y := range b {
			ratios = append(ratios, x/y)
		}
	}
	slices.Sort(ratios)
	if math.Abs(r.Lo-ratios[5]) > 1e-9 || math.Abs(r.Hi-ratios[30]) > 1e-9 {
		t.Errorf("interval [%g, %g], want [%g, %g]", r.Lo, r.Hi, ratios[5], ratios[30])
	}
	if same := RatioCI(b, b, 0.95); !same.OK || same.Significant() || math.Abs(same.Est-1) > 1e-9 {
		t.Errorf("a sample against itself: %+v, want 1 and no significant difference", same)
	}
	for _, tc := range []struct {
		name string
		a, b []float64
		why  string
	}{
		{name: "three each", a: []float64{1, 2, 3}, b: []float64{4, 5, 6}, why: "too few values"},
		{name: "zero", a: []float64{0, 1, 2, 3, 4, 5}, b: b, why: "positive"},
		{name: "empty", a: nil, b: b, why: "empty"},
	} {
		if r := RatioCI(tc.a, tc.b, 0.95); r.OK || !strings.Contains(r.Why, tc.why) || !math.IsNaN(r.Lo) {
			t.Errorf("%s: %+v, want no interval because of %q", tc.name, r, tc.why)
		}
	}
	// Four each is the smallest sample with a 95% interval: min..max ratio.
	if r := RatioCI([]float64{2, 3, 4, 5}, []float64{1, 2, 3, 4}, 0.95); !r.OK || math.Abs(r.Lo-0.5) > 1e-12 || math.Abs(r.Hi-5) > 1e-12 {
		t.Errorf("four each: %+v, want [0.5, 5]", r)
	}
}
