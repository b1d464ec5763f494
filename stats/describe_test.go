package stats

import (
	"math"
	"testing"
)

func TestDescribe(t *testing.T) {
	d := Describe([]float64{4, 1, 3, 2})
	if d.Min != 1 || d.Max != 4 || d.Mean != 2.5 || len(d.Warnings) != 0 {
		t.Errorf("Describe(4 1 3 2) = %+v, want min 1, max 4, mean 2.5, no warnings", d)
	}
	if math.Abs(d.StdDev-math.Sqrt(5.0/3)) > 1e-12 {
		t.Errorf("sample standard deviation %v, want %v", d.StdDev, math.Sqrt(5.0/3))
	}
	d = Describe(nil)
	if !math.IsNaN(d.Min) || !math.IsNaN(d.MAD) || len(d.Warnings) != 6 {
		t.Errorf("Describe(nil) = %+v, want NaNs and a warning per statistic", d)
	}
	if m := MedianOf([]float64{5, 1, 3}); m != 3 {
		t.Errorf("MedianOf(5 1 3) = %v, want 3", m)
	}
	if m := MedianOf(nil); !math.IsNaN(m) {
		t.Errorf("MedianOf(nil) = %v, want NaN", m)
	}
}
