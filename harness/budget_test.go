package harness

import (
	"slices"
	"testing"
	"time"

	"concbench/results"
	"concbench/stats"
)

// TestUndecided checks which cells of a first look get extra rounds, with
// which contenders, in which order: undecided cells a few more rounds
// can decide, cheapest first; never a decided cell, or one whose rounds
// would not fit in the time the budget has left. A cell with no estimate
// gets a few rounds, after the others.
func TestUndecided(t *testing.T) {
	r := &runner{exp: Experiment{Repetitions: 5, Warmup: Duration(200 * time.Millisecond), Duration: Duration(700 * time.Millisecond),
		SLOProbes: 3, SLOWarmup: Duration(100 * time.Millisecond), SLODuration: Duration(300 * time.Millisecond)}}
	ws := []results.SuiteWorkload{{Name: "cpu", Runs: []string{"a/cpu", "b/cpu", "c/cpu"}, Names: []string{"a", "b", "c"}}}
	rival := func(name, status string) stats.Rival { return stats.Rival{Name: name, Status: status} }
	cell := func(col int, d stats.Decision) results.Cell {
		return results.Cell{Workload: "cpu", Column: results.WinnerColumns[col], Decision: d}
	}
	cells := []results.Cell{
		cell(0, stats.Decision{Verdict: stats.Undecided, Best: "a", Need: 9, Rivals: []stats.Rival{rival("b", stats.Undetermined), rival("c", stats.Undetermined)}}),
		cell(1, stats.Decision{Verdict: stats.Undecided, Best: "c", Need: 8, Rivals: []stats.Rival{rival("a", stats.Behind), rival("b", stats.Undetermined)}}),
		cell(2, stats.Decision{Verdict: stats.Winner, Best: "a", Rivals: []stats.Rival{rival("b", stats.Behind), rival("c", stats.Behind)}}),
		cell(3, stats.Decision{Verdict: stats.Undecided, Best: "b", Need: 5 + 400, Rivals: []stats.Rival{rival("a", stats.Undetermined)}}),
		cell(3, stats.Decision{Verdict: stats.Undecided, Best: "b", Need: -1, Rivals: []stats.Rival{{Name: "a", Status: stats.Undetermined, Rounds: 5}}}),
		// Spoiled rounds left b and c one shared round: 2 more, first.
		cell(2, stats.Decision{Verdict: stats.Undecided, Best: "b", Need: -1, Rivals: []stats.Rival{{Name: "c", Status: stats.Undetermined, Rounds: 1}}}),
	}
	got := r.undecided(cells, ws, 5*time.Minute) // 400 rounds of 2 equal-load points do not fit
	byLabel := map[string]extraCell{}
	for i, c := range got {
		byLabel[c.column.Label] = c
		if i > 0 && got[i-1].cost > c.cost {
			t.Errorf("cell %d costs %v, less than the one before (%v): want the cheapest first", i, c.cost, got[i-1].cost)
		}
	}
	if len(got) != 4 {
		t.Fatalf("%d cells get extra rounds, want 4 (the p99, the SLO, the spoiled CPU and the unestimated ctxsw cell): %+v", len(got), got)
	}
	if c := byLabel["CPU per request"]; c.rounds != 2 || !slices.Equal(c.runs, []string{"b/cpu", "c/cpu"}) {
		t.Errorf("the spoiled cell %+v, want 2 rounds of b and c", c)
	}
	// The p99 cell: 3 rounds × 2 contenders of an equal-load point; the
	// SLO cell: 4 rounds × 3 contenders of a capacity point and a search.
	if c := byLabel["p99 at equal load"]; !slices.Equal(c.runs, []string{"c/cpu", "b/cpu"}) || c.rounds != 3 {
		t.Errorf("p99 cell %+v, want contenders c/cpu, b/cpu, 3 rounds", c)
	}
	if c := byLabel["SLO capacity"]; !slices.Equal(c.runs, []string{"a/cpu", "b/cpu", "c/cpu"}) || c.rounds != 4 {
		t.Errorf("SLO cell %+v, want contenders a, b, c, 4 rounds", c)
	}
	if c := byLabel["context switches per request"]; c.rounds != noEstimateRounds {
		t.Errorf("ctxsw cell %+v, want %d rounds without an estimate", c, noEstimateRounds)
	}
	if got[0].column.Label != "CPU per request" || got[1].column.Label != "p99 at equal load" {
		t.Errorf("first %s, then %s; want the spoiled cell and the p99 cell, the cheapest", got[0].column.Label, got[1].column.Label)
	}
}

// TestETA: the progress line's estimate and total count a search not yet
// done at the mean probes of those done, not at its most; a run with a
// budget is estimated at no less than what is left of it. A pure
// computation at a given time.
func TestETA(t *testing.T) {
	begin := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	now := begin.Add(time.Minute)
	r := &runner{begin: begin, ran: 10, ranTime: 10 * time.Second, pointIdx: 10}
	r.exp.SLOProbes = 3 // at most 7 probes a search
	r.sum.Points = 100
	if _, ok := (&runner{}).eta(now); ok {
		t.Error("an ETA before any point ran")
	}
	for _, tc := range []struct {
		name     string
		searches searchCount
		budget   time.Duration
		want     time.Duration
		total    string // the progress line's total
	}{
		{name: "no search done: the probes planned", searches: searchCount{left: 10}, want: 50 * time.Second, total: "~60"},
		{name: "searches take 5 probes", searches: searchCount{left: 10, done: 2, probes: 10}, want: 70 * time.Second, total: "~80"},
		{name: "searches take 3 probes", searches: searchCount{left: 10, done: 5, probes: 15}, want: 50 * time.Second, total: "~60"},
		{name: "every search done", searches: searchCount{done: 5, probes: 15}, want: 90 * time.Second, total: "100"},
		{name: "budget longer", searches: searchCount{left: 10, done: 5, probes: 15}, budget: 9 * time.Minute, want: 8 * time.Minute, total: "~60"},
		{name: "budget shorter", searches: searchCount{left: 10, done: 5, probes: 15}, budget: 61 * time.Second, want: 50 * time.Second, total: "~60"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r.searches, r.exp.Budget = tc.searches, Duration(tc.budget)
			if got, ok := r.eta(now); !ok || got != tc.want {
				t.Errorf("eta = %v, %v; want %v", got, ok, tc.want)
			}
			if got := r.pointsExpected(); got != tc.total {
				t.Errorf("progress total %q, want %q", got, tc.total)
			}
		})
	}
}
