package report

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"concbench/plots"
	"concbench/plots/plotstest"
	"concbench/results/resultstest"
)

// TestMechanismsTable checks the Mechanisms table of a suite run: a row
// per workload and configuration with its counts, an invalid point's
// reason instead of numbers, and each decided cell of the who-wins table
// explained at its leader's row against the first configuration behind
// it.
func TestMechanismsTable(t *testing.T) {
	r, pts := plotstest.MechRun(t, syntheticDir)
	a := analyze(r, pts, Options{})
	tab := a.mechanisms(a.winners())
	if tab == nil || tab.NotCounted != "" {
		t.Fatalf("table %+v, want one with rows", tab)
	}
	resultstest.GoldenFile(t, filepath.Join("golden", "mechanisms.md"), []byte(tab.Markdown()))
	row := func(workload, name string) []string {
		for _, r := range tab.Rows {
			if r[0] == workload && r[1] == name {
				return r
			}
		}
		t.Fatalf("no row %s %s in %q", workload, name, tab.Rows)
		return nil
	}
	if got := row("cpu", "a"); got[2] != "4.30" || got[3] != "epoll_wait 1.00, epoll_ctl 1.00, read 1.00, write 1.00" || got[4] != "0.02" || got[5] != "0.50" {
		t.Errorf("cpu a: %q", got)
	}
	// a wins CPU per request under cpu ([3]), ahead of b: fewer futex
	// calls and wakes explain it.
	if got := row("cpu", "a")[6]; !strings.Contains(got, "[1][3] SLO capacity, CPU per request: against b: system calls 4.30 vs 4.90 (futex -1.90, epoll_ctl +1.00), futex wakes 0.02 vs 1.00, cross-CPU wake-ups 0.50 vs 0.90") {
		t.Errorf("cpu a explains %q", got)
	}
	if got := row("cpu", "c"); !strings.HasPrefix(got[2], "no valid point (rep 0: generator-cpu)") || got[3] != "" {
		t.Errorf("cpu c, invalid: %q", got)
	}
	// c wins p99 under cpu, against b.
	if got := row("cpu", "c")[6]; !strings.Contains(got, "[2] p99 at equal load: no mechanisms of c") {
		t.Errorf("cpu c explains %q", got)
	}
	if got := row("block", "c")[6]; !strings.Contains(got, "CPU per request, context switches per request: against b: system calls 2.00 vs 6.60") {
		t.Errorf("block c explains %q", got)
	}
}

// TestMechanismsNotCounted checks a run none of whose mechanisms points
// was counted: the section says why, once, never a table of zeros, and
// the figure is not drawn.
func TestMechanismsNotCounted(t *testing.T) {
	r, pts := plotstest.WinnersRun(t, syntheticDir, map[string][4][3]float64{
		"cpu":   {{90000, 50000, 40000}, {300, 200, 100}, {20, 30, 40}, {1, 1, 2}},
		"block": {{5000, 20000, 10000}, {900, 400, 800}, {50, 40, 20}, {3, 2, 0.5}},
	})
	why := "perf_event_open: permission denied (raw_syscalls:sys_enter (epoll_wait), thread 7): not permitted: run as root or lower /proc/sys/kernel/perf_event_paranoid"
	none := map[string]plotstest.MechCounts{}
	for _, c := range r.Configs {
		none[c.Name] = nil
	}
	pts = plotstest.WithMechanisms(t, pts, none, why)
	a := analyze(r, pts, Options{})
	tab := a.mechanisms(a.winners())
	if tab == nil || tab.NotCounted != "Not counted: "+why || tab.Rows != nil {
		t.Fatalf("table %+v, want none, and why", tab)
	}
	if md := tab.Markdown(); md != "Not counted: "+why+".\n" {
		t.Errorf("markdown %q", md)
	}
	if figs, _ := a.Figures(); slices.ContainsFunc(figs, func(f *plots.Figure) bool { return f.Name == "mechanisms" }) {
		t.Error("a figure of nothing counted")
	}
	// A run without mechanisms points has neither.
	r, pts = plotstest.WinnersRun(t, syntheticDir, map[string][4][3]float64{"cpu": {{1, 2, 3}, {1, 2, 3}, {1, 2, 3}, {1, 2, 3}}, "block": {{1, 2, 3}, {1, 2, 3}, {1, 2, 3}, {1, 2, 3}}})
	if a := analyze(r, pts, Options{}); a.mechanisms(a.winners()) != nil || plots.HasMechanisms(a.Analysis) {
		t.Error("a Mechanisms section for a run without mechanisms points")
	}
}
