package plots

import (
	"fmt"

	"concbench/results"
)

// Model names whose claims the cost figures test; they must match the
// model table of cmd/concbench.
const (
	modelLF   = "leaderfollowers"
	modelHSHR = "halfsynchalfreactive"
)

// analysis is what every figure and the report are computed from: the
// run, its points grouped, the styles, and the chosen load.
type analysis struct {
	run    *results.Run
	points []results.Point
	groups []*results.Group
	style  map[string]seriesStyle
	// configs are the configurations with at least one measured point, in
	// report order.
	configs []results.ModelConfig
	// load is the open-loop fraction of the spectrum, per-request cost and
	// per-thread figures; hasLoad is false if the run has no measured
	// open-loop point.
	load    float64
	hasLoad bool
	// equal is set when the run has no open-loop point but absolute-rate
	// points (a suite run, harness RatesFromSlowest): the chosen load is
	// then each configuration's highest absolute rate, the same for every
	// configuration of a workload, and load is 0.
	equal bool
	// floor is the run's measured loopback floor (Options.Floor), or nil.
	floor *results.ChainFloor
	// workloads are the run's workloads (workloadsOf), and workloadOf
	// and base map a configuration's run name to its workload and to
	// its name within the workload ("leaderfollowers/lifo/cpu" →
	// "cpu", "leaderfollowers/lifo"); a run of one workload has one,
	// its names its own.
	workloads  []suiteWorkload
	workloadOf map[string]string
	base       map[string]string
}

func analyze(r *results.Run, pts []results.Point, opts Options) *analysis {
	a := &analysis{run: r, points: pts, groups: results.GroupPoints(r, pts), floor: opts.Floor}
	seen := map[string]bool{}
	for _, g := range a.groups {
		if !seen[g.Config.Name] && len(g.Measured()) > 0 {
			seen[g.Config.Name] = true
			a.configs = append(a.configs, g.Config)
		}
	}
	a.workloads = a.workloadsOf()
	a.workloadOf, a.base = map[string]string{}, map[string]string{}
	for _, w := range a.workloads {
		for i, run := range w.runs {
			a.workloadOf[run], a.base[run] = w.name, w.names[i]
		}
	}
	a.style = styles(r, a.groups, a.baseName)
	target := opts.Load
	if target <= 0 {
		target = DefaultLoad
	}
	a.load, a.hasLoad = results.NearestFraction(a.groups, target)
	if !a.hasLoad && hasRatePoints(a) && !a.connectionSweep() {
		a.hasLoad, a.equal = true, true
	}
	return a
}

// baseName returns a configuration's name within its workload: the
// experiment's configuration name without the workload a suite run
// appends ("leaderfollowers/lifo/cpu" → "leaderfollowers/lifo"); the
// name itself where the experiment does not say.
func (a *analysis) baseName(run string) string {
	if b, ok := a.base[run]; ok {
		return b
	}
	return run
}

// openGroups returns the configuration's measured open-loop groups in
// ascending fraction.
func (a *analysis) openGroups(name string) []*results.Group {
	var out []*results.Group
	for _, g := range a.groups {
		if g.Config.Name == name && g.Kind == results.KindOpen && len(g.Measured()) > 0 {
			out = append(out, g)
		}
	}
	return out
}

// atLoad returns the configuration's open-loop group at the chosen load,
// or nil.
func (a *analysis) atLoad(name string) *results.Group {
	if !a.hasLoad {
		return nil
	}
	if a.equal {
		var best *results.Group
		for _, g := range a.groups {
			if g.Config.Name == name && g.Kind == results.KindRate && len(g.Measured()) > 0 && (best == nil || g.RatePerS > best.RatePerS) {
				best = g
			}
		}
		return best
	}
	return results.Find(a.groups, name, results.KindOpen, a.load)
}

// connectionSweep reports whether the run's absolute-rate points span
// two or more connection counts (the connections profile), whose costs
// belong to the connections figure.
func (a *analysis) connectionSweep() bool {
	counts := map[int]bool{}
	for _, g := range a.groups {
		if g.Kind == results.KindRate && len(g.Points) > 0 {
			w := g.Points[0].Workload
			counts[w.Conns+w.Idle] = true
		}
	}
	return len(counts) > 1
}

// loadShort names the chosen load in a column head or note: "0.50", or
// "equal load".
func (a *analysis) loadShort() string {
	if a.equal {
		return "equal load"
	}
	return fmt.Sprintf("%.2f", a.load)
}

// loadTitle names the chosen load in a figure's title, where the whole
// of loadText would not fit: "0.50 of capacity", or "equal load".
func (a *analysis) loadTitle() string {
	if a.equal {
		return "equal load"
	}
	return fmt.Sprintf("%.2f of capacity", a.load)
}

// capacity returns the configuration's capacity group, or nil.
func (a *analysis) capacity(name string) *results.Group {
	return results.Find(a.groups, name, results.KindCapacity, 1)
}

// loadText describes the chosen load: "0.50 of capacity".
func (a *analysis) loadText() string {
	if a.equal {
		return "each workload's equal absolute load (the same rate for every configuration of the workload)"
	}
	return fmt.Sprintf("%.2f of capacity", a.load)
}
