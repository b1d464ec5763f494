package aarate

import (
	"strings"
	"testing"

	"concbench/results"
	"concbench/stats"
)

// TestAARecords: a run's record is judged again with this binary's rule;
// a twin like its original is not separated, one far from it is, and the
// summary counts each column's cells with the rate's interval.
func TestAARecords(t *testing.T) {
	arm := func(name string, vs ...float64) stats.Arm {
		a := stats.Arm{Name: name, Values: map[int]float64{}}
		for i, v := range vs {
			a.Values[i] = v
		}
		return a
	}
	rec := func(twin stats.Arm) *Record {
		return &Record{Run: "bench-x", Twin: "a/twin of a", Cells: []results.CellRecord{{
			Workload: "cpu", Column: "CPU per request", Margin: 0.10,
			Arms: []stats.Arm{arm("a", 20, 20.4, 19.8, 20.2, 20.1), arm("b", 40, 41, 39, 40.5, 40.2)},
			Twin: &twin, Of: "a",
		}}}
	}
	same := judge(rec(arm("a/twin", 20.1, 20.2, 19.9, 20.3, 20)))
	apart := judge(rec(arm("a/twin", 30, 30.5, 29.6, 30.2, 30.1)))
	if len(same.cells) != 1 || same.cells[0].separated || !same.cells[0].decided {
		t.Errorf("a true twin: %+v, want decided and not separated", same.cells)
	}
	if len(apart.cells) != 1 || !apart.cells[0].separated {
		t.Errorf("a twin unlike its original: %+v, want separated", apart.cells)
	}
	s := summarize([]judged{same, apart})
	for _, want := range []string{"# A/A campaign: 2 runs", "| CPU per request | 2 | 1 | 50.0% [1.3%, 98.7%]", "Runs with any table cell separating the twin: 1 of 2"} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
}
