package plots

import (
	"slices"
	"strings"
	"testing"

	"concbench/results"
)

// TestBarsPerWorkload: a suite run's cost figures are small multiples,
// a panel per workload holding that workload's configurations only; a
// run of one workload has one panel per metric.
func TestBarsPerWorkload(t *testing.T) {
	r, pts := claimsRun(t, []string{"cpu", "block", "tiny"}, func(cfg, w string) float64 { return float64(len(cfg) + len(w)) })
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
		if len(c.idx) != len(claimsConfigs) {
			t.Errorf("panel %q has %d bars, want %d", c.title, len(c.idx), len(claimsConfigs))
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
	r, pts := claimsRun(t, ws, func(string, string) float64 { return 1 })
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

// claimsRun builds a suite run of the given workloads from a valid
// synthetic point: every configuration of claimsConfigs under each, as
// "<config>/<workload>", 6 repetitions of one equal-load rate point,
// their context switches, CPU (µs) and allocations per request all the
// value cost gives the configuration under the workload, times a small
// spread per repetition.
func claimsRun(t *testing.T, workloads []string, cost func(cfg, workload string) float64) (*results.Run, []results.Point) {
	t.Helper()
	r, tmpl := syntheticTemplate(t)
	run := *r
	run.Configs = nil
	var names []string
	for _, c := range claimsConfigs {
		names = append(names, c.Name)
	}
	run.Experiment = map[string]any{"configs": nameList(names...), "workloads": nameList(workloads...)}
	spread := []float64{0.97, 0.98, 0.99, 1.01, 1.02, 1.03}
	var out []results.Point
	for _, w := range workloads {
		for ci, c := range claimsConfigs {
			cfg := c
			cfg.Name = c.Name + "/" + w
			run.Configs = append(run.Configs, cfg)
			for rep := range spread {
				f := spread[(rep+ci)%len(spread)]
				p := *tmpl
				load := *tmpl.Load
				p.Load, p.Config, p.Kind, p.Repetition = &load, cfg, results.KindRate, rep
				p.Fraction, p.OfferedRatePerS = 0, 1000
				v := cost(c.Name, w) * f
				p.Server.CtxswPerRequest, p.Server.CPUNsPerRequest, p.Server.AllocsPerRequest = v, v*1e3, v
				out = append(out, p)
			}
		}
	}
	return &run, out
}

// claimsConfigs are the configurations of claimsRun: the default pair,
// a variant of each model that the table must not pair, and a model it
// does not test.
var claimsConfigs = []results.ModelConfig{
	{Name: "leaderfollowers/lifo", Model: ModelLF, Args: []string{"--promotion", "lifo", "--gomaxprocs", "1"}},
	{Name: "leaderfollowers/fifo", Model: ModelLF, Args: []string{"--promotion", "fifo"}},
	{Name: "halfsynchalfreactive", Model: ModelHSHR, Args: []string{"--gomaxprocs", "2"}},
	{Name: "halfsynchalfreactive/pooled", Model: ModelHSHR, Args: []string{"--hshr-pooled"}},
	{Name: "netpoll", Model: "netpoll"},
}
