package harness

import (
	"slices"
	"strings"
	"testing"

	"concbench/loadgen"
	"concbench/results"
)

// TestCheckCeiling checks which points the generator's ceiling marks: a
// capacity by its achieved rate, an open point by its offered rate, at
// CeilingFraction of the ceiling and above, and only for the protocol
// the ceiling was measured for.
func TestCheckCeiling(t *testing.T) {
	r := &runner{run: &results.Run{Ceilings: []results.Ceiling{{Protocol: "http", Workers: 1, PerS: 10000, Fraction: CeilingFraction}}}}
	for _, tc := range []struct {
		name     string
		kind     results.Kind
		protocol string
		achieved float64
		offered  float64
		want     bool
	}{
		{name: "capacity below", kind: results.KindCapacity, protocol: "http", achieved: 7999, want: false},
		{name: "capacity at", kind: results.KindCapacity, protocol: "http", achieved: 8000, want: true},
		{name: "capacity beyond", kind: results.KindCapacity, protocol: "http", achieved: 12000, want: true},
		{name: "open offered beyond", kind: results.KindRate, protocol: "http", achieved: 7000, offered: 9000, want: true},
		{name: "open below", kind: results.KindOpen, protocol: "http", achieved: 5000, offered: 5000, want: false},
		{name: "another protocol", kind: results.KindCapacity, protocol: "binary", achieved: 12000, want: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &results.Point{Kind: tc.kind, Status: results.StatusOK, OfferedRatePerS: tc.offered,
				Load: &loadgen.Result{Valid: true, AchievedRatePerS: tc.achieved, Checks: []loadgen.Check{}, Reasons: []string{}}}
			p.Workload.Protocol = tc.protocol
			r.checkCeiling(p)
			marked := slices.Contains(p.Load.Checks, loadgen.CheckCeiling)
			if marked != tc.want || p.Load.Valid == tc.want {
				t.Fatalf("marked %t, valid %t; want marked %t", marked, p.Load.Valid, tc.want)
			}
			if marked && (p.Fault() != results.GeneratorFault || !strings.Contains(p.Load.Reasons[0], "beyond what this load generator measures here")) {
				t.Errorf("fault %q, reasons %q", p.Fault(), p.Load.Reasons)
			}
		})
	}
	t.Run("unmeasured ceiling", func(t *testing.T) {
		r := &runner{run: &results.Run{Ceilings: []results.Ceiling{{Protocol: "http", Reason: "the null server did not start"}}}}
		p := &results.Point{Kind: results.KindCapacity, Load: &loadgen.Result{Valid: true, AchievedRatePerS: 1e9}}
		p.Workload.Protocol = "http"
		r.checkCeiling(p)
		if !p.Load.Valid {
			t.Error("a point was marked against a ceiling that was not measured")
		}
	})
}

// TestInvalidateOrder checks that a check added after the verdict takes
// its place by importance among the generator's own.
func TestInvalidateOrder(t *testing.T) {
	res := &loadgen.Result{Valid: false, Checks: []loadgen.Check{loadgen.CheckBusy}, Reasons: []string{"busy"}}
	res.Invalidate(loadgen.CheckCeiling, "ceiling")
	if !slices.Equal(res.Checks, []loadgen.Check{loadgen.CheckCeiling, loadgen.CheckBusy}) || !slices.Equal(res.Reasons, []string{"ceiling", "busy"}) {
		t.Errorf("checks %v, reasons %q", res.Checks, res.Reasons)
	}
}
