package results

import (
	"testing"

	"concbench/stats"
)

// sloGroup is a KindSLO group of configuration name with the given SLO
// capacities by repetition.
func sloGroup(name string, byRep map[int]float64) *Group {
	g := &Group{Config: ModelConfig{Name: name}, Kind: KindSLO}
	for rep := 0; rep < 100; rep++ {
		v, ok := byRep[rep]
		if !ok {
			continue
		}
		g.Points = append(g.Points, &Point{Config: g.Config, Kind: KindSLO, Repetition: rep, Status: StatusOK,
			SLO: &SLOResult{Percentile: 99, BoundNs: 1e6, RatePerS: v, LoPerS: v, HiPerS: v * 1.05, CapacityPerS: 2 * v, Probes: 3}})
	}
	return g
}

// TestDecideCellLooks: a cell decided at the first look keeps that
// decision; one short of a winner at the first is decided at the second
// on the extra rounds; a near best at the first stands when the second
// decides nothing; each look tests at Alpha/2.
func TestDecideCellLooks(t *testing.T) {
	w := &SuiteWorkload{Name: "cpu", Runs: []string{"a/cpu", "b/cpu"}, Names: []string{"a", "b"}, Objective: "p99 ≤ 1ms"}
	col := WinnerColumns[0] // SLO capacity, ±10 %
	plan := &DecisionPlan{Alpha: 0.05, Looks: 2, BaseRounds: 5}
	// a ahead of b by about 1.3×, but the base rounds are noisy; the
	// extra rounds 5..14 are not.
	noisy := map[int]float64{0: 100, 1: 160, 2: 90, 3: 150, 4: 95}
	other := map[int]float64{0: 110, 1: 100, 2: 85, 3: 120, 4: 80}
	for r := 5; r < 15; r++ {
		noisy[r], other[r] = 130+float64(r%3), 100+float64(r%2)
	}
	t.Run("undecided, then decided", func(t *testing.T) {
		c := DecideCell([]*Group{sloGroup("a/cpu", noisy), sloGroup("b/cpu", other)}, w, col, 0, plan)
		if c.Alpha != 0.025 {
			t.Errorf("alpha per look %g, want 0.025", c.Alpha)
		}
		base := stats.Decide(Rounds(c.Arms, 5), stats.DecideOptions{HigherIsBetter: true, Margin: col.Margin, Alpha: 0.025})
		if base.Verdict == stats.Winner || base.Verdict == stats.Group {
			t.Fatalf("the base rounds name a winner already (%s): the test needs them short of one", base)
		}
		if c.Look != 2 || c.Decision.Verdict != stats.Winner || c.Decision.Best != "a" {
			t.Errorf("decision %s at look %d, want winner a at look 2", c.Decision, c.Look)
		}
	})
	t.Run("decided at the first look", func(t *testing.T) {
		clear := map[int]float64{0: 130, 1: 131, 2: 129, 3: 130, 4: 132}
		steady := map[int]float64{0: 100, 1: 102, 2: 98, 3: 101, 4: 99}
		for r := 5; r < 15; r++ {
			clear[r], steady[r] = 100, 100 // the extra rounds alone would say otherwise
		}
		c := DecideCell([]*Group{sloGroup("a/cpu", clear), sloGroup("b/cpu", steady)}, w, col, 0, plan)
		if c.Look != 1 || c.Decision.Verdict != stats.Winner || c.Decision.Best != "a" {
			t.Errorf("decision %s at look %d, want winner a at look 1", c.Decision, c.Look)
		}
		for _, a := range c.Decision.Rivals {
			if a.Rounds > 5 {
				t.Errorf("rival %s compared on %d rounds at the first look, want at most 5", a.Name, a.Rounds)
			}
		}
	})
	t.Run("a near best at the first look stands when the second decides nothing", func(t *testing.T) {
		// b sits at the margin in the planned rounds; the extra rounds
		// scatter it widely.
		a := map[int]float64{0: 100, 1: 101, 2: 99, 3: 100, 4: 100.5}
		b := map[int]float64{0: 91, 1: 90, 2: 90.5, 3: 91.5, 4: 90.8}
		for r := 5; r < 15; r++ {
			a[r], b[r] = 100, 40+120*float64(r%2)
		}
		c := DecideCell([]*Group{sloGroup("a/cpu", a), sloGroup("b/cpu", b)}, w, col, 0, plan)
		if c.Look != 1 || c.Decision.Verdict != stats.Near || c.Decision.Best != "a" || c.Alpha != 0.025 {
			t.Errorf("decision %s at look %d (level %g), want a near at look 1, at 0.025", c.Decision, c.Look, c.Alpha)
		}
	})
	t.Run("one look without a plan", func(t *testing.T) {
		c := DecideCell([]*Group{sloGroup("a/cpu", noisy), sloGroup("b/cpu", other)}, w, col, 0, nil)
		if c.Alpha != WinnersAlpha || c.Look != 1 {
			t.Errorf("alpha %g at look %d, want %g at look 1", c.Alpha, c.Look, WinnersAlpha)
		}
	})
}
