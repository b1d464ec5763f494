package plots

import (
	"strings"
	"testing"

	"concbench/results/resultstest"
)

// TestLineFigure renders a line figure with a valid and an invalid point
// and a value the log axis cannot show, and checks its table (golden) and
// that every format draws.
func TestLineFigure(t *testing.T) {
	f := LineFigure("priority", "High-priority p99", "low-priority load (req/s)", "p99 (µs)", []Series{
		{Label: "lf", X: []float64{1000, 2000}, Y: []float64{150, 900}, InvalidX: []float64{3000}, InvalidY: []float64{40000}},
		{Label: "lf-lanes", X: []float64{1000, 2000, 3000}, Y: []float64{120, 0, 160}},
	})
	resultstest.GoldenFile(t, "lines.csv", figureCSV(t, f))
	checkRenders(t, f, "svg", "png")
	if len(f.Notes) != 1 || !strings.Contains(f.Notes[0], "not positive") {
		t.Errorf("notes %q, want one about the value the log axis cannot show", f.Notes)
	}
}
