package plots

import (
	"fmt"

	"concbench/results"
)

// Model names whose claims the cost figures test; they must match the
// model table of cmd/concbench.
const (
	ModelLF   = "leaderfollowers"
	ModelHSHR = "halfsynchalfreactive"
)

// Analysis is what every figure and the report are computed from: the
// run, its points grouped, the styles, and the chosen load.
type Analysis struct {
	Run    *results.Run
	Points []results.Point
	Groups []*results.Group
	style  map[string]seriesStyle
	// Configs are the configurations with at least one measured point, in
	// report order.
	Configs []results.ModelConfig
	// load is the open-loop fraction of the spectrum, per-request cost and
	// per-thread figures; HasLoad is false if the run has no measured
	// open-loop point.
	load    float64
	HasLoad bool
	// Equal is set when the run has no open-loop point but absolute-rate
	// points (a suite run, harness RatesFromSlowest): the chosen load is
	// then each configuration's highest absolute rate, the same for every
	// configuration of a workload, and load is 0.
	Equal bool
	// floor is the run's measured loopback floor (Options.Floor), or nil.
	floor *results.ChainFloor
	// Workloads are the run's workloads (SuiteWorkloads), and WorkloadOf
	// and base map a configuration's run name to its workload and to
	// its name within the workload ("leaderfollowers/lifo/cpu" →
	// "cpu", "leaderfollowers/lifo"); a run of one workload has one,
	// its names its own.
	Workloads  []Workload
	WorkloadOf map[string]string
	base       map[string]string
}

// Analyze groups the run's points and chooses the load its figures are
// drawn at (opts.Load, else DefaultLoad).
func Analyze(r *results.Run, pts []results.Point, opts Options) *Analysis {
	a := &Analysis{Run: r, Points: pts, Groups: results.GroupPoints(r, pts), floor: opts.Floor}
	seen := map[string]bool{}
	for _, g := range a.Groups {
		if !seen[g.Config.Name] && len(g.Measured()) > 0 {
			seen[g.Config.Name] = true
			a.Configs = append(a.Configs, g.Config)
		}
	}
	a.Workloads = a.SuiteWorkloads()
	a.WorkloadOf, a.base = map[string]string{}, map[string]string{}
	for _, w := range a.Workloads {
		for i, run := range w.Runs {
			a.WorkloadOf[run], a.base[run] = w.Name, w.Names[i]
		}
	}
	a.style = styles(r, a.Groups, a.BaseName)
	target := opts.Load
	if target <= 0 {
		target = DefaultLoad
	}
	a.load, a.HasLoad = results.NearestFraction(a.Groups, target)
	if !a.HasLoad && hasRatePoints(a) && !a.connectionSweep() {
		a.HasLoad, a.Equal = true, true
	}
	return a
}

// BaseName returns a configuration's name within its workload: the
// experiment's configuration name without the workload a suite run
// appends ("leaderfollowers/lifo/cpu" → "leaderfollowers/lifo"); the
// name itself where the experiment does not say.
func (a *Analysis) BaseName(run string) string {
	if b, ok := a.base[run]; ok {
		return b
	}
	return run
}

// openGroups returns the configuration's measured open-loop groups in
// ascending fraction.
func (a *Analysis) openGroups(name string) []*results.Group {
	var out []*results.Group
	for _, g := range a.Groups {
		if g.Config.Name == name && g.Kind == results.KindOpen && len(g.Measured()) > 0 {
			out = append(out, g)
		}
	}
	return out
}

// AtLoad returns the configuration's open-loop group at the chosen load,
// or nil.
func (a *Analysis) AtLoad(name string) *results.Group {
	if !a.HasLoad {
		return nil
	}
	if a.Equal {
		var best *results.Group
		for _, g := range a.Groups {
			if g.Config.Name == name && g.Kind == results.KindRate && len(g.Measured()) > 0 && (best == nil || g.RatePerS > best.RatePerS) {
				best = g
			}
		}
		return best
	}
	return results.Find(a.Groups, name, results.KindOpen, a.load)
}

// connectionSweep reports whether the run's absolute-rate points span
// two or more connection counts (the connections profile), whose costs
// belong to the connections figure.
func (a *Analysis) connectionSweep() bool {
	counts := map[int]bool{}
	for _, g := range a.Groups {
		if g.Kind == results.KindRate && len(g.Points) > 0 {
			w := g.Points[0].Workload
			counts[w.Conns+w.Idle] = true
		}
	}
	return len(counts) > 1
}

// LoadShort names the chosen load in a column head or note: "0.50", or
// "equal load".
func (a *Analysis) LoadShort() string {
	if a.Equal {
		return "equal load"
	}
	return fmt.Sprintf("%.2f", a.load)
}

// loadTitle names the chosen load in a figure's title, where the whole
// of LoadText would not fit: "0.50 of capacity", or "equal load".
func (a *Analysis) loadTitle() string {
	if a.Equal {
		return "equal load"
	}
	return fmt.Sprintf("%.2f of capacity", a.load)
}

// Capacity returns the configuration's capacity group, or nil.
func (a *Analysis) Capacity(name string) *results.Group {
	return results.Find(a.Groups, name, results.KindCapacity, 1)
}

// LoadText describes the chosen load: "0.50 of capacity".
func (a *Analysis) LoadText() string {
	if a.Equal {
		return "each workload's equal absolute load (the same rate for every configuration of the workload)"
	}
	return fmt.Sprintf("%.2f of capacity", a.load)
}
