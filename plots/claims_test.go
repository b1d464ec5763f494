package plots

import (
	"slices"
	"strings"
	"testing"

	"concbench/plots/plotstest"
	"concbench/results"
)

// TestBarsPerWorkload: a suite run's cost figures are small multiples,
// a panel per workload holding that workload's configurations only; a
// run of one workload has one panel per metric.
func TestBarsPerWorkload(t *testing.T) {
	r, pts := plotstest.ClaimsRun(t, syntheticDir, []string{"cpu", "block", "tiny"}, func(cfg, w string) float64 { return float64(len(cfg) + len(w)) })
	a := Analyze(r, pts, Options{})
	f, bp, _ := barFigure(a, "cpu", "CPU", "equal load", a.AtLoad, []barPanel{{metric: results.CPUPerReq, title: "cpu", axis: "µs"}})
	if f == nil {
		t.Fatal("no figure")
	}
	if len(bp.cells) != 3 {
		t.Fatalf("%d panels, want one per workload (3)", len(bp.cells))
	}
	for _, c := range bp.cells {
		w, _, _ := strings.Cut(c.title, " ")
		if len(c.idx) != len(plotstest.ClaimsConfigs) {
			t.Errorf("panel %q has %d bars, want %d", c.title, len(c.idx), len(plotstest.ClaimsConfigs))
		}
		for _, i := range c.idx {
			if name := bp.vals[0][i].cfg.Name; a.WorkloadOf[name] != w {
				t.Errorf("panel %q draws %s, of workload %s", c.title, name, a.WorkloadOf[name])
			}
		}
		if !strings.HasSuffix(c.title, "· 1000 req/s") {
			t.Errorf("panel title %q, want the workload with its equal load", c.title)
		}
	}
	lay := f.layout(identity)
	panels := 0
	for _, row := range lay.panels {
		for _, p := range row {
			if p != nil {
				panels++
			}
		}
	}
	if panels != 3 || len(lay.panels[0]) != barColumns(3) {
		t.Errorf("%d panels in rows of %d, want 3 in rows of %d", panels, len(lay.panels[0]), barColumns(3))
	}

	_, r1, pts1 := synthetic(t)
	a1 := Analyze(r1, pts1, Options{})
	f1, bp1, _ := barFigure(a1, "cpu", "CPU", "open 0.50", a1.AtLoad, []barPanel{{metric: results.CPUPerReq, title: "cpu", axis: "µs"}})
	if f1 == nil || len(bp1.cells) != 1 || bp1.cells[0].title != "" || len(bp1.grid) != 1 || len(bp1.grid[0]) != 1 {
		t.Errorf("one workload: %d panels, grid %v; want one untitled panel", len(bp1.cells), bp1.grid)
	}
}

// TestSpectrumLegends: the spectrum of a suite run has a legend per
// column of panels, each of at most 6 entries (never one of every
// configuration), naming configurations without their workload.
func TestSpectrumLegends(t *testing.T) {
	ws := []string{"cpu", "tiny", "block", "bimodal", "ledger"}
	r, pts := plotstest.ClaimsRun(t, syntheticDir, ws, func(string, string) float64 { return 1 })
	f, sp := newSpectrum(Analyze(r, pts, Options{}))
	if f == nil {
		t.Fatal("no spectrum")
	}
	lay := f.layout(identity)
	if lay.legend != nil || len(lay.columns) != len(sp.grid.colTitles) {
		t.Fatalf("figure legend %v, %d column legends for %d columns; want one per column only", lay.legend != nil, len(lay.columns), len(sp.grid.colTitles))
	}
	for ci := range sp.grid.colTitles {
		cfgs := sp.columnConfigs(ci)
		if n := len(cfgs) + 1; n > 6 {
			t.Errorf("column %d: %d legend entries, want at most 6", ci, n)
		}
		for _, c := range cfgs {
			if name := sp.a.BaseName(c.Name); strings.Contains(name, "/cpu") || slices.Contains(ws, name[strings.LastIndex(name, "/")+1:]) {
				t.Errorf("column %d names %s with its workload", ci, name)
			}
		}
	}
	if len(sp.grid.rowTitles) != len(ws) || !strings.HasPrefix(sp.grid.rowTitles[0], "cpu · ") {
		t.Errorf("row titles %q, want each workload with its equal load", sp.grid.rowTitles)
	}
}
