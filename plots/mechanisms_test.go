package plots

import (
	"path/filepath"
	"testing"

	"concbench/plots/plotstest"
	"concbench/results"
	"concbench/results/resultstest"
)

// TestMechKindsCover checks the figure's segments: every kind of system
// call in exactly one, at most 6 (the legend's limit).
func TestMechKindsCover(t *testing.T) {
	if len(mechKinds) > 6 {
		t.Errorf("%d segments, want at most 6 legend entries", len(mechKinds))
	}
	seen := map[string]int{}
	for _, mk := range mechKinds {
		for _, k := range mk.kinds {
			seen[k]++
		}
	}
	for _, k := range results.SyscallKindNames() {
		if seen[k] != 1 {
			t.Errorf("kind %s is in %d segments, want 1", k, seen[k])
		}
		delete(seen, k)
	}
	if len(seen) > 0 {
		t.Errorf("segments of kinds that do not exist: %v", seen)
	}
}

// TestMechanismsFigure renders the suite run's figure: a panel per
// workload, its CSV golden, every format drawn.
func TestMechanismsFigure(t *testing.T) {
	r, pts := plotstest.MechRun(t, syntheticDir)
	f := mechanismsFigure(Analyze(r, pts, Options{}))
	if f == nil {
		t.Fatal("no figure")
	}
	resultstest.GoldenFile(t, filepath.Join("golden", "mechanisms_suite.csv"), figureCSV(t, f))
	checkRenders(t, f, Formats...)
	checkCaption(t, f, "cpu: fewest a (4.30), most b (4.90)", "block: fewest c (2.00), most b (6.60)")
}
