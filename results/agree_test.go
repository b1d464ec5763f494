package results

import (
	"testing"

	"concbench/stats"
)

// agreeCell decides a CPU-per-request cell (lower is better, ±10 %) of
// arms a and b from their values by round.
func agreeCell(a, b []float64) Cell {
	arm := func(name string, xs []float64) stats.Arm {
		m := map[int]float64{}
		for i, x := range xs {
			m[i] = x
		}
		return stats.Arm{Name: name, Values: m}
	}
	c := Cell{Workload: "cpu", Column: WinnerColumns[2], Arms: []stats.Arm{arm("a", a), arm("b", b)}}
	c.decide(nil, "", nil)
	return c
}

// TestAgree: a winner decided in one run is contradicted by a run that
// measured the rival ahead, not by one that left the cell undecided with
// an interval that still allows it; a near best is contradicted only by
// a run that shows the rival ahead by more than the margin.
func TestAgree(t *testing.T) {
	won := agreeCell([]float64{10, 10.2, 9.9, 10.1, 10}, []float64{13, 13.1, 12.9, 13.2, 13}) // a 1.3× ahead
	reversed := agreeCell([]float64{13, 13.1, 12.9, 13.2, 13}, []float64{10, 10.2, 9.9, 10.1, 10})
	open := agreeCell([]float64{10, 14, 9, 13, 11}, []float64{12, 11, 13, 10, 12})
	near := agreeCell([]float64{10, 10.1, 9.9, 10, 10.05}, []float64{10.9, 11, 10.95, 11.05, 10.9}) // b at the margin
	for _, c := range []struct {
		cell Cell
		want stats.Verdict
	}{{won, stats.Winner}, {reversed, stats.Winner}, {open, stats.Undecided}, {near, stats.Near}} {
		if c.cell.Decision.Verdict != c.want {
			t.Fatalf("cell %s, want %s: the test's data", c.cell.Decision, c.want)
		}
	}
	got := Agree([]RunCells{{"won", []Cell{won}}, {"open", []Cell{open}}, {"reversed", []Cell{reversed}}})
	// won's claim against open and reversed; reversed's against won and open.
	if got.Claims != 4 {
		t.Errorf("%d claims checked, want 4", got.Claims)
	}
	if len(got.Contradictions) != 2 {
		t.Fatalf("contradictions %v, want won against reversed and back", got.Contradictions)
	}
	for _, c := range got.Contradictions {
		if c.Claim != ClaimBehind || c.Other == "open" || c.Ratio >= 1 {
			t.Errorf("contradiction %s, want a behind claim excluded by the reversed run", c)
		}
	}
	if got := Agree([]RunCells{{"near", []Cell{near}}, {"open", []Cell{open}}, {"won", []Cell{won}}}); len(got.Contradictions) != 0 {
		t.Errorf("a near a and runs that do not show b ahead by more than 10 %%: contradictions %v", got.Contradictions)
	}
	if got := Agree([]RunCells{{"near", []Cell{near}}, {"reversed", []Cell{reversed}}}); len(got.Contradictions) != 2 || got.Contradictions[0].Claim != ClaimNotAhead {
		t.Errorf("a near a and a run with b 1.3× ahead: contradictions %v, want the near claim and the reversed winner's", got.Contradictions)
	}
}
