package rank

import (
	"slices"
	"testing"
)

func TestAverage(t *testing.T) {
	for _, c := range []struct{ in, want []float64 }{
		{nil, []float64{}},
		{[]float64{3, 1, 2}, []float64{3, 1, 2}},
		{[]float64{5, 1, 5, 0}, []float64{3.5, 2, 3.5, 1}},
		{[]float64{2, 2, 2}, []float64{2, 2, 2}},
	} {
		if got := Average(c.in); !slices.Equal(got, c.want) {
			t.Errorf("Average(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}
