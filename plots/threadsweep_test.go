package plots

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"concbench/plots/plotstest"
	"concbench/results"
	"concbench/results/resultstest"
)

// sweepCell is one made-up configuration of a thread-sweep run under one
// workload: its median capacity (req/s) and p99 at the equal load (µs).
type sweepCell struct {
	capacity, p99 float64
}

// sweepRun builds a thread-sweep run from a valid synthetic point: per
// workload (in order) and configuration (named as the threads profile
// names them), 5 repetitions of capacity and of one equal-load rate, 1000
// req/s, each value its cell's median times a small spread.
func sweepRun(t *testing.T, workloads []string, configs []string, cells map[string]map[string]sweepCell) (*results.Run, []results.Point) {
	t.Helper()
	r, tmpl := plotstest.Template(t, syntheticDir)
	run := *r
	run.Configs = nil
	run.Experiment = map[string]any{"configs": plotstest.NameList(configs...), "workloads": plotstest.NameList(workloads...)}
	spread := []float64{0.97, 0.99, 1, 1.01, 1.03}
	var out []results.Point
	for _, wl := range workloads {
		for _, c := range configs {
			name := c
			if len(workloads) > 1 {
				name += "/" + wl
			}
			model, _, _ := strings.Cut(c, "/")
			mc := results.ModelConfig{Name: name, Model: model}
			run.Configs = append(run.Configs, mc)
			cell := cells[wl][c]
			for rep, f := range spread {
				for _, kind := range []results.Kind{results.KindCapacity, results.KindRate} {
					p := *tmpl
					load := *tmpl.Load
					p.Load, p.Config, p.Kind, p.Repetition = &load, mc, kind, rep
					if kind == results.KindCapacity {
						p.Fraction, p.OfferedRatePerS = 1, 0
						load.AchievedRatePerS = cell.capacity * f
					} else {
						p.Fraction, p.OfferedRatePerS = 0, 1000
						load.Latency.P99Ns = int64(math.Round(cell.p99 * 1e3 * f))
					}
					out = append(out, p)
				}
			}
		}
	}
	return &run, out
}

// sweepConfigs are a thread-sweep run's configurations: pools "lf" and
// "hs" at 1, 2, 4 and 8 threads, and the reference "np".
var sweepConfigs = []string{
	"lf/lifo/threads=1", "lf/lifo/threads=2", "lf/lifo/threads=4", "lf/lifo/threads=8",
	"hs/threads=1", "hs/threads=2", "hs/threads=4", "hs/threads=8",
	"np",
}

// TestThreadSweepGolden: a made-up thread-sweep run in which, under
// "cpu", lf loses capacity and p99 with every thread and hs has no clear
// trend, and under "block" both gain with threads up to 8 (lf) or 4 (hs);
// its CSV is golden and its caption states each model's best count and
// verdict.
func TestThreadSweepGolden(t *testing.T) {
	cells := map[string]map[string]sweepCell{
		"cpu": {
			"lf/lifo/threads=1": {40000, 100}, "lf/lifo/threads=2": {37000, 120}, "lf/lifo/threads=4": {34000, 150}, "lf/lifo/threads=8": {30000, 200},
			"hs/threads=1": {30000, 200}, "hs/threads=2": {30100, 200}, "hs/threads=4": {30000, 201}, "hs/threads=8": {30050, 200},
			"np": {45000, 80},
		},
		"block": {
			"lf/lifo/threads=1": {3200, 5000}, "lf/lifo/threads=2": {6300, 900}, "lf/lifo/threads=4": {12000, 500}, "lf/lifo/threads=8": {20000, 400},
			"hs/threads=1": {3100, 6000}, "hs/threads=2": {6000, 1000}, "hs/threads=4": {11000, 600}, "hs/threads=8": {10500, 650},
			"np": {30000, 350},
		},
	}
	r, pts := sweepRun(t, []string{"cpu", "block"}, sweepConfigs, cells)
	f := threadSweepFigure(Analyze(r, pts, Options{}))
	if f == nil {
		t.Fatal("no thread-sweep figure for a thread-sweep run")
	}
	resultstest.GoldenFile(t, filepath.Join("golden", "threadsweep.csv"), figureCSV(t, f))
	for _, tc := range []struct{ name, want string }{
		{"cpu lf capacity", "Under cpu — capacity: lf/lifo best at 1 thread (40000 [38800, 41200] 93.8%), 8 ÷ 1 threads 0.75× ["},
		{"cpu lf cost", "]: more threads cost; hs best at 2 threads"},
		{"cpu hs unclear", "]: no clear difference (references: np 45000 [43600, 46400] 93.8%)"},
		{"cpu p99", "p99 at 1000 req/s: lf/lifo best at 1 thread (100µs [97µs, 103µs] 93.8%), 8 ÷ 1 threads 2× ["},
		{"block lf capacity", "Under block — capacity: lf/lifo best at 8 threads (20000 [19400, 20600] 93.8%), 8 ÷ 1 threads 6.25× ["},
		{"block hs best", "hs best at 4 threads (11000 [10700, 11300] 93.8%), 8 ÷ 1 threads 3.39× ["},
		{"block help", "]: more threads help"},
	} {
		t.Run(tc.name, func(t *testing.T) { checkCaption(t, f, tc.want) })
	}
	checkRenders(t, f, Formats...)
	if f.Width > TexMaxWidth {
		t.Errorf("width %v, more than a page's %v", f.Width, TexMaxWidth)
	}
}

// TestThreadSweepNotDrawn: a run of thread-counted configurations that
// measured each model at one count lists the figure as not drawn, with
// why; a run without thread counts neither draws it nor lists it.
func TestThreadSweepNotDrawn(t *testing.T) {
	one := map[string]sweepCell{"lf/lifo/threads=4": {40000, 100}, "hs/threads=4": {30000, 200}, "np": {45000, 80}}
	cells := map[string]map[string]sweepCell{"cpu": one, "block": one}
	for _, tc := range []struct {
		name      string
		workloads []string
		configs   []string
		wantLine  bool
	}{
		{name: "one count each", workloads: []string{"cpu"}, configs: []string{"lf/lifo/threads=4", "hs/threads=4", "np"}, wantLine: true},
		// Run names end in the workload: "lf/lifo/threads=4/cpu".
		{name: "one count each, two workloads", workloads: []string{"cpu", "block"}, configs: []string{"lf/lifo/threads=4", "hs/threads=4", "np"}, wantLine: true},
		{name: "no thread counts", workloads: []string{"cpu"}, configs: []string{"np"}, wantLine: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, pts := sweepRun(t, tc.workloads, tc.configs, cells)
			figs, omitted := Figures(r, pts, Options{})
			checkNotDrawn(t, figs, "threadsweep")
			line := ""
			for _, o := range omitted {
				if strings.HasPrefix(o, "Thread sweep: not drawn") {
					line = o
				}
			}
			if got := line != ""; got != tc.wantLine {
				t.Errorf("listed as not drawn: %t (%q), want %t; omitted %s", got, line, tc.wantLine, fmt.Sprint(omitted))
			}
		})
	}
}
