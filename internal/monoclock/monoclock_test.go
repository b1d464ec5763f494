package monoclock

import (
	"testing"
	"time"
)

func TestNowFollowsSystemClock(t *testing.T) {
	if !Shared() {
		t.Skip("no CLOCK_MONOTONIC here")
	}
	// Now lies between two system clock reads around it, within the
	// calibration's uncertainty (an ordering check, not a timing bound).
	for _, tc := range []struct{ name string }{{name: "first"}, {name: "second"}} {
		t.Run(tc.name, func(t *testing.T) {
			a, _ := sysMono()
			n := Now()
			b, _ := sysMono()
			if n < a-Uncertainty() || n > b+Uncertainty() {
				t.Fatalf("Now %d outside [%d, %d] ± %d", n, a, b, Uncertainty())
			}
		})
	}
	t0 := time.Now()
	if d := Now() - At(t0); d < 0 {
		t.Fatalf("At(earlier) is after Now by %d ns", -d)
	}
}
