package plots

import "concbench/results"

// Workload is one workload of the run: its name and the run names
// of its configurations with their configuration names, in report order.
type Workload struct {
	Name  string
	Runs  []string // run names (as in points)
	Names []string // configuration names, as the table shows them
	// Objective is the workload's latency objective ("p99 ≤ 1ms"), ""
	// if it has none (no search).
	Objective string
	// sw is the workload as package results has it (its A/A twin
	// included).
	sw results.SuiteWorkload
}

// SuiteWorkloads returns the run's workloads (results.SuiteWorkloads).
func (a *Analysis) SuiteWorkloads() []Workload {
	var out []Workload
	for _, w := range results.SuiteWorkloads(a.Run, a.Groups) {
		out = append(out, Workload{Name: w.Name, Runs: w.Runs, Names: w.Names, Objective: w.Objective, sw: w})
	}
	return out
}

// EqualRate returns the workload's equal-load rate (results.EqualRate).
func (a *Analysis) EqualRate(w *Workload) float64 {
	return results.EqualRate(a.Groups, w.Results())
}

// Results returns w as package results has it.
func (w *Workload) Results() *results.SuiteWorkload {
	if w.sw.Name == w.Name {
		return &w.sw
	}
	return &results.SuiteWorkload{Name: w.Name, Runs: w.Runs, Names: w.Names, Objective: w.Objective}
}
