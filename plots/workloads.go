package plots

import "concbench/results"

// suiteWorkload is one workload of the run: its name and the run names
// of its configurations with their configuration names, in report order.
type suiteWorkload struct {
	name  string
	runs  []string // run names (as in points)
	names []string // configuration names, as the table shows them
	// objective is the workload's latency objective ("p99 ≤ 1ms"), ""
	// if it has none (no search).
	objective string
	// sw is the workload as package results has it (its A/A twin
	// included).
	sw results.SuiteWorkload
}

// workloadsOf returns the run's workloads (results.SuiteWorkloads).
func (a *analysis) workloadsOf() []suiteWorkload {
	var out []suiteWorkload
	for _, w := range results.SuiteWorkloads(a.run, a.groups) {
		out = append(out, suiteWorkload{name: w.Name, runs: w.Runs, names: w.Names, objective: w.Objective, sw: w})
	}
	return out
}

// equalRate returns the workload's equal-load rate (results.EqualRate).
func (a *analysis) equalRate(w *suiteWorkload) float64 {
	return results.EqualRate(a.groups, w.results())
}

// results returns w as package results has it.
func (w *suiteWorkload) results() *results.SuiteWorkload {
	if w.sw.Name == w.name {
		return &w.sw
	}
	return &results.SuiteWorkload{Name: w.name, Runs: w.runs, Names: w.names, Objective: w.objective}
}
