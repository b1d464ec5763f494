package plots

import (
	"strings"
	"testing"

	"concbench/results"
)

// coresRun is a made-up cores-sweep run: per configuration (named as the
// cores profile names them) its sweepRun points and, per repetition, a
// latency-objective result at slo[config] req/s times a small spread.
func coresRun(t *testing.T, configs []string, cells map[string]sweepCell, slo map[string]float64) (*results.Run, []results.Point) {
	t.Helper()
	r, pts := sweepRun(t, []string{"cpu"}, configs, map[string]map[string]sweepCell{"cpu": cells})
	spread := []float64{0.97, 0.99, 1, 1.01, 1.03}
	var out []results.Point
	for _, p := range pts {
		out = append(out, p)
		if p.Kind != results.KindCapacity {
			continue
		}
		q := p
		q.Kind, q.Fraction, q.Load = results.KindSLO, 0, nil
		q.SLO = &results.SLOResult{Percentile: 99, BoundNs: 1e6, RatePerS: slo[p.Config.Name] * spread[p.Repetition]}
		out = append(out, q)
	}
	return r, out
}

// TestCoresFigure: a made-up cores run in which np scales almost
// linearly from 1 to 4 CPUs and lf does not scale: the caption states
// each model's speed-up with its interval beside the linear one, and the
// figure renders in every format.
func TestCoresFigure(t *testing.T) {
	configs := []string{"lf/lifo/cpus=1", "lf/lifo/cpus=2", "lf/lifo/cpus=4", "np/cpus=1", "np/cpus=2", "np/cpus=4"}
	cells := map[string]sweepCell{
		"lf/lifo/cpus=1": {40000, 100}, "lf/lifo/cpus=2": {41000, 100}, "lf/lifo/cpus=4": {40500, 100},
		"np/cpus=1": {40000, 100}, "np/cpus=2": {79000, 100}, "np/cpus=4": {150000, 100},
	}
	slo := map[string]float64{
		"lf/lifo/cpus=1": 20000, "lf/lifo/cpus=2": 20500, "lf/lifo/cpus=4": 20200,
		"np/cpus=1": 30000, "np/cpus=2": 58000, "np/cpus=4": 110000,
	}
	r, pts := coresRun(t, configs, cells, slo)
	f := coresFigure(Analyze(r, pts, Options{}))
	if f == nil {
		t.Fatal("no cores figure for a cores run")
	}
	checkCaption(t, f,
		"capacity: lf/lifo best at",
		"np best at 4 CPUs (150000 [146000, 154000] 93.8%), 4 ÷ 1 CPUs 3.75× [",
		"] (linear: 4×): more CPUs help",
		"capacity at the objective: lf/lifo best at",
		"np best at 4 CPUs (110000 [107000, 113000] 93.8%), 4 ÷ 1 CPUs 3.67× [",
	)
	if strings.Contains(f.Caption, "lf/lifo best at 4 CPUs (40500") && strings.Contains(f.Caption, "more CPUs help; np") {
		t.Errorf("caption %q: lf does not scale", f.Caption)
	}
	if csv := string(figureCSV(t, f)); !strings.HasPrefix(csv, "workload,series,role,cpus,metric") {
		t.Errorf("CSV header %q", strings.SplitN(csv, "\n", 2)[0])
	}
	checkRenders(t, f, Formats...)
}

// TestCoresOneCPU: a cores run on a server of one CPU (a 2-CPU machine)
// has one count per model: the figure is listed as not drawn, with why.
func TestCoresOneCPU(t *testing.T) {
	r, pts := coresRun(t, []string{"lf/lifo/cpus=1", "np/cpus=1"},
		map[string]sweepCell{"lf/lifo/cpus=1": {40000, 100}, "np/cpus=1": {45000, 90}},
		map[string]float64{"lf/lifo/cpus=1": 20000, "np/cpus=1": 30000})
	figs, omitted := Figures(r, pts, Options{})
	checkNotDrawn(t, figs, "cores")
	if !strings.Contains(strings.Join(omitted, "\n"), "Cores: not drawn — the run has no model measured on two or more server CPU counts") {
		t.Errorf("omitted %q, want the cores figure with why", omitted)
	}
}
