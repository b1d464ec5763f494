package harness

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

	"concbench/internal/testenv"
	"concbench/loadgen"
	"concbench/results"
)

// TestCounterbalancedEqualLoad runs two configurations of one model, the
// second taking its open-loop rates from the first (RatesFrom), with
// Counterbalance: repetition 0 measures a then b, repetition 1 b then a;
// b's open points are offered the fraction of a's capacity, not of its
// own. The rates follow valid capacities only, and what is under test is
// how they flow, not the generator's verdict on this machine: the capacity
// points' verdicts are taken as valid (the measurement itself is real),
// and the run has no ceiling to mark them against.
func TestCounterbalancedEqualLoad(t *testing.T) {
	testenv.EndToEnd(t)
	w := Workload{Workload: connsWorkload(4)}
	exp := shortRun([]Config{
		{Name: "a", Model: "netpoll"},
		{Name: "b", Model: "netpoll", RatesFrom: "a"},
	}, w)
	exp.Fractions, exp.Repetitions, exp.Duration, exp.Seed = []float64{0.2}, 2, Duration(150*time.Millisecond), 3
	exp.Counterbalance = true
	trusted := func(ctx context.Context, lc loadgen.Config) (*loadgen.Result, error) {
		res, err := loadgen.Run(ctx, lc)
		if err == nil && lc.Closed && res.AchievedRatePerS > 0 {
			res.Valid, res.Reasons, res.Checks = true, []string{}, []loadgen.Check{}
		}
		return res, err
	}
	noCeiling := []results.Ceiling{{Protocol: w.Protocol, Reason: "not measured: this test trusts its capacity points"}}
	dir, _ := runTest(t, exp, Options{Load: trusted, Ceilings: noCeiling})
	_, pts, byKey := readPoints(t, dir)
	pts = slices.Clone(pts) // byKey points into the original
	slices.SortFunc(pts, func(x, y results.Point) int { return x.StartTime.Compare(y.StartTime) })
	var order []string
	for _, p := range pts {
		if p.Kind == results.KindCapacity {
			order = append(order, p.Config.Name)
		}
	}
	if want := []string{"a", "b", "b", "a"}; !slices.Equal(order, want) {
		t.Errorf("capacity points in the order %q, want %q", order, want)
	}
	capA := map[int]float64{}
	for rep := range 2 {
		p := byKey[pointKey{"a", results.KindCapacity, rep}]
		if p == nil || p.Load == nil || !p.Load.Valid {
			t.Fatalf("a's capacity in repetition %d is not valid (%+v): the server failed it", rep, p)
		}
		capA[rep] = p.Load.AchievedRatePerS
	}
	for _, tc := range []struct {
		rep  int
		want float64
	}{
		{rep: 0, want: 0.2 * capA[0]}, // a measured first
		{rep: 1, want: 0.2 * capA[0]}, // b measured first: a's repetition 0 only
	} {
		p := byKey[pointKey{"b", results.KindOpen, tc.rep}]
		if p == nil {
			t.Fatalf("no open point of b in repetition %d", tc.rep)
		}
		if math.Abs(p.OfferedRatePerS-tc.want) > 1e-6*tc.want {
			t.Errorf("b's open point in repetition %d offered %.1f req/s, want %.1f (0.2 of a's capacity)", tc.rep, p.OfferedRatePerS, tc.want)
		}
	}
	if p := byKey[pointKey{"a", results.KindOpen, 1}]; p != nil {
		if want := 0.2 * (capA[0] + capA[1]) / 2; math.Abs(p.OfferedRatePerS-want) > 1e-6*want {
			t.Errorf("a's open point in repetition 1 offered %.1f req/s, want %.1f (0.2 of the median of its own)", p.OfferedRatePerS, want)
		}
	}
}
