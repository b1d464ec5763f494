package harness

import (
	"slices"
	"testing"
	"time"

	"concbench/internal/testenv"
	"concbench/results"
)

// TestRunBudget runs a budgeted suite-like experiment whose every cell
// is made to want one extra round (Options.extraAll), and checks the
// structure: the plan in run.json, the extra round's points numbered
// after the planned repetitions — an equal-load point for every
// configuration, and a capacity point and a search for the SLO cell —,
// and the cells decided with both looks. It asserts no decision: what
// the machine measures is not the point.
func TestRunBudget(t *testing.T) {
	testenv.EndToEnd(t)
	exp := shortRun([]Config{{Name: "netpoll", Model: "netpoll"}, {Name: "threadperconn", Model: "threadperconn"}},
		Workload{Workload: connsWorkload(4), SLO: &SLO{Bound: Duration(5 * time.Millisecond)}})
	exp.Fractions, exp.RatesFromSlowest = nil, []float64{0.5}
	exp.Repetitions, exp.SLOProbes = 2, 2
	exp.SLOWarmup, exp.SLODuration = Duration(100*time.Millisecond), Duration(100*time.Millisecond)
	exp.Budget = Duration(5 * time.Minute)
	dir, _ := runTest(t, exp, Options{extraAll: true})
	run, pts, _ := readPoints(t, dir)
	plan := run.Decisions
	if plan == nil || plan.Looks != 2 || plan.BaseRounds != 2 || plan.Budget != 5*time.Minute {
		t.Fatalf("run.json's plan %+v, want 2 looks after 2 rounds with a budget of 5m", plan)
	}
	if len(plan.Extra) == 0 {
		for _, c := range results.DecideCells(run, results.GroupPoints(run, pts)) {
			t.Logf("cell %s/%s: %s", c.Workload, c.Column.Label, c.Decision)
		}
		t.Fatalf("no extra round: %s", plan.Why)
	}
	e := plan.Extra[0]
	if e.Round != 2 || !slices.Equal(e.Configs, []string{"netpoll", "threadperconn"}) {
		t.Errorf("first extra round %+v, want round 2 of both configurations", e)
	}
	kinds := map[results.Kind]int{}
	for _, p := range pts {
		if p.Repetition == 2 {
			kinds[p.Kind]++
		}
	}
	if kinds[results.KindRate] != 2 || e.SLO && (kinds[results.KindCapacity] != 2 || kinds[results.KindSLO] != 2) {
		t.Errorf("round 2 points by kind %v, want an equal-load point each (and a capacity point and a search result each: %v)", kinds, e.SLO)
	}
	for _, c := range results.DecideCells(run, results.GroupPoints(run, pts)) {
		if want := results.LookAlphas[c.Look-1]; c.Alpha != want {
			t.Errorf("cell %s/%s decided at %g at look %d, want %g", c.Workload, c.Column.Label, c.Alpha, c.Look, want)
		}
	}
}
